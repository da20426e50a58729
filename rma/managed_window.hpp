// A window shim created for MPI_Win_allocate: its memory is node shared
// memory (PMPI_Win_allocate_shared on a dup of the node communicator), the
// user gets a PMPI window created over that memory, and the accumulate
// family on it takes one path (owner, caller or native) for every size.
// Owner-computes applies same-node operations directly under the node's
// stripe locks and ships others to the target node's server; completion
// (flush, unlock, fence, complete) waits for the servers' acknowledgements.
// The state is cached on the user's window through an attribute.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "rma/accumulate_policy.hpp"
#include "rma/datatype_layout.hpp"
#include "rma/node_memory.hpp"

namespace shim::rma {

// One call of the family, as the user made it. Compare-and-swap has
// `compare`; the fetching calls have `result`.
struct AccumulateCall {
  const void* origin = nullptr;
  MPI_Count origin_count = 0;
  MPI_Datatype origin_type = MPI_DATATYPE_NULL;
  void* result = nullptr;
  MPI_Count result_count = 0;
  MPI_Datatype result_type = MPI_DATATYPE_NULL;
  const void* compare = nullptr;
  int target = MPI_PROC_NULL;
  MPI_Aint displacement = 0;
  MPI_Count target_count = 0;
  MPI_Datatype target_type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  bool fetch = false;
};

// Where a fetching call's result is assembled until its replies are in.
struct ResultAssembly {
  std::vector<unsigned char> packed;
  void* result = nullptr;
  MPI_Count result_count = 0;
  MPI_Datatype result_type = MPI_DATATYPE_NULL;  // a dup when derived
  bool owns_type = false;
  int replies_left = 0;
  bool done = false;
  int finish();  // unpacks into the user's buffer
  ~ResultAssembly();
};

class ManagedWindow {
 public:
  ManagedWindow(const ManagedWindow&) = delete;
  ManagedWindow& operator=(const ManagedWindow&) = delete;
  ~ManagedWindow();

  // Collective over `comm`: allocates, creates the user's window in `win`
  // and caches the state on it. Returns an MPI error code.
  static int create(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win);
  // The state of `win`, or nullptr for windows shim did not create.
  static ManagedWindow* of(MPI_Win win);
  // Collective: completes, releases everything and frees the user's window.
  static int free(MPI_Win* win);

  AccumulatePath path() const { return decision_.path; }
  const std::string& reason() const { return decision_.reason; }
  MPI_Win user_window() const { return user_; }

  // The family on owner and caller windows. `request`, if given, receives a
  // request that completes with the call (fetching calls: when the result
  // is in). MPI error code.
  int accumulate(const AccumulateCall& call, MPI_Request* request);

  // Completion of what this process shipped: every operation applied at its
  // target and every result delivered.
  int complete_all();

  // Passive-target epochs, so owner-computes waits for MPI's lock before it
  // touches a target (another origin may hold it exclusively).
  void note_lock(int target, bool nocheck);
  void note_lock_all(bool nocheck);
  void note_unlock(int target);
  void note_unlock_all();

 private:
  struct Target {
    int world_rank = 0;
    int server_world_rank = -1;  // the server of the target's node
    int local = 0;               // rank in the target node's window group
    bool same_node = false;
    int disp_unit = 1;
    std::int64_t bytes = 0;
  };
  struct InFlight {
    MPI_Request request = MPI_REQUEST_NULL;
    std::vector<unsigned char> buffer;       // a request's bytes, or an ack's
    std::shared_ptr<ResultAssembly> result;  // replies carrying a result
    int server = -1;
    bool ack = false;
  };
  enum class Epoch : std::uint8_t { none, unconfirmed, confirmed };

  ManagedWindow() = default;
  int confirm_epoch(int target);
  int apply_owner(const AccumulateCall& call, const DatatypeLayout& target_layout, const unsigned char* stream,
                  std::int64_t bytes, const std::shared_ptr<ResultAssembly>& result, unsigned char* old_stream);
  int ship(const Target& target, std::int64_t target_offset, const std::vector<ByteRun>& runs,
           const unsigned char* stream, std::int64_t bytes, MPI_Datatype basic, MPI_Op op, const void* compare,
           const std::shared_ptr<ResultAssembly>& result, unsigned char* result_slot);
  int apply_caller(const AccumulateCall& call, const DatatypeLayout& target_layout, const unsigned char* stream,
                   std::int64_t bytes, unsigned char* old_stream);
  int send_batch(int server, bool acknowledge);
  int post(int server, std::vector<unsigned char> message, std::uint32_t flags,
           const std::shared_ptr<ResultAssembly>& result, unsigned char* result_slot, std::int64_t result_bytes);
  int wait_in_flight(std::size_t keep);
  int flush_servers();

  std::uint64_t id_ = 0;
  PathDecision decision_{AccumulatePath::native, ""};
  MPI_Comm comm_ = MPI_COMM_NULL;       // dup of the user's communicator
  MPI_Comm node_comm_ = MPI_COMM_NULL;  // dup of its node part
  MPI_Win shared_ = MPI_WIN_NULL;       // the memory, node-shared
  MPI_Win lock_window_ = MPI_WIN_NULL;  // the node's stripe lock words
  MPI_Win user_ = MPI_WIN_NULL;
  MPI_Win caller_ = MPI_WIN_NULL;  // disp_unit 1, for caller-computes
  int rank_ = 0;
  std::vector<Target> targets_;
  std::shared_ptr<NodeMemory> memory_;
  bool hosts_server_ = false;

  std::mutex mutex_;  // the origin side, for MPI_THREAD_MULTIPLE callers
  std::vector<Epoch> epochs_;
  std::deque<InFlight> in_flight_;
  std::vector<int> unflushed_;   // per server world rank: requests sent since the last ack
  struct Batch {
    std::vector<unsigned char> bytes;
    std::size_t last = 0;  // offset of the last request's header
  };
  std::map<int, Batch> batches_;  // per server world rank
};

}  // namespace shim::rma
