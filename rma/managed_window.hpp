// A window shim manages for MPI_Win_allocate or MPI_Win_create. For
// MPI_Win_allocate its memory is node shared memory (carved from the
// communicator's window pool); for MPI_Win_create it is the caller's, which
// other processes of the node reach through cross-memory attach. The user
// gets a PMPI_Win_create window over that memory, and the accumulate family
// on it takes one path (owner, caller or native) for every size.
// Owner-computes applies same-node operations directly under the node's
// stripe locks and ships others to the target node's server; completion
// (flush, unlock, fence, complete) waits for the servers' acknowledgements.
// The state is cached on the user's window through an attribute.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/mpi_handle.hpp"
#include "rma/access_order.hpp"
#include "rma/accumulate_call.hpp"
#include "rma/accumulate_policy.hpp"
#include "rma/datatype_layout.hpp"
#include "rma/node_memory.hpp"
#include "rma/server_channel.hpp"
#include "rma/window_pool.hpp"
#include "topology/hierarchy.hpp"

namespace shim::rma {

class ManagedWindow {
 public:
  enum class Flavor { allocate, create };
  // What the user passed to MPI_Win_allocate or MPI_Win_create.
  struct Creation {
    Flavor flavor = Flavor::allocate;
    void* base = nullptr;  // MPI_Win_create's
    MPI_Aint size = 0;
    int disp_unit = 1;
    MPI_Info info = MPI_INFO_NULL;
    MPI_Comm comm = MPI_COMM_NULL;
    // MPI_Win_lock and MPI_Win_lock_all return only once MPI holds the lock
    // (MPICH's ch4 device); otherwise shim confirms the lock before it
    // applies an operation itself (confirm_epoch).
    bool locks_held_on_return = false;
  };
  // The path the settings ask for: SHIM_ACCUMULATE, or the window's info
  // key shim_accumulate; nullopt lets the policy table decide.
  struct PathRequest {
    std::optional<AccumulatePath> path;
    bool by_info_key = false;
  };

  ManagedWindow(const ManagedWindow&) = delete;
  ManagedWindow& operator=(const ManagedWindow&) = delete;
  // Collective over the window's group, like release().
  ~ManagedWindow();

  // Collective over creation.comm, whose nodes `hierarchy` describes:
  // allocates (MPI_Win_allocate: the memory's address goes to `baseptr`),
  // creates the user's window in `win` and caches the state on it. Returns
  // an MPI error code; on error nothing stays allocated.
  static int create(const Creation& creation, const topo::Hierarchy& hierarchy, const PathRequest& request,
                    void* baseptr, MPI_Win* win);
  // The state of `win`, or nullptr for windows shim did not create.
  static ManagedWindow* of(MPI_Win win);
  // Collective: completes, releases everything and frees the user's window.
  // Inside an access or exposure epoch MPI refuses the free
  // (MPI_ERR_RMA_SYNC) and the window stays as it was: so does shim's state.
  static int free(MPI_Win* win);

  // What MPI_Win_get_info says of alloc_shm for the window the user asked
  // for: MPICH's MPI_Win_allocate reports "false" if that was given, else
  // its default "true".
  const std::string& alloc_shm() const { return alloc_shm_; }
  Flavor flavor() const { return flavor_; }

  AccumulatePath path() const { return path_; }
  const std::string& reason() const { return reason_; }
  std::uint64_t id() const { return id_; }
  MPI_Win user_window() const { return user_.get(); }
  // Whether window rank `target` (a valid one) shares this process's node:
  // owner-computes then applies operations on it here, not at a server.
  bool same_node(int target) const { return targets_[static_cast<std::size_t>(target)].same_node; }

  // The family on owner and caller windows. `request`, if given, receives a
  // request that completes with the call (fetching calls: when the result
  // is in). MPI error code.
  int accumulate(const AccumulateCall& call, MPI_Request* request);

  // Completion of what this process shipped: every operation applied at its
  // target and every result delivered.
  int complete_all();

  // Before MPI_Put, MPI_Get and their variants pass to MPI: shim's
  // accumulates still in flight to the bytes they touch complete first, and
  // the access is remembered until MPI completes it at the target, so that
  // the two are ordered as MPICH orders them (rma/access_order.hpp). MPI
  // error code.
  int order_mpi_access(int target, MPI_Aint displacement, MPI_Count count, MPI_Datatype type);
  // MPI_Win_flush and MPI_Win_flush_all completed MPI's accesses (the epoch
  // notes below do as much for theirs).
  void note_flush(int target);
  void note_flush_all();

  // The access epochs MPI opened and closed on the user's window, so that an
  // operation outside one is refused as MPICH refuses it, and so that
  // owner-computes waits for MPI's lock before it touches a target (another
  // origin may hold it exclusively). Called after MPI's call succeeded.
  void note_lock(int target, bool nocheck);
  void note_lock_all(bool nocheck);
  void note_unlock(int target);
  void note_unlock_all();
  void note_fence(int assert_flags);
  // `group`: MPI_Win_start's, a subgroup of the window's.
  int note_start(MPI_Group group);
  void note_complete();
  // MPI_Win_post opened an exposure epoch; MPI_Win_wait (or MPI_Win_test
  // with flag true) closed it.
  void note_post();
  void note_exposure_closed();

  // The delete callback of the keyval that caches the state on user windows.
  static int delete_attribute_state(MPI_Win, int, void* state, void*);

 private:
  struct Target {
    int world_rank = 0;
    int server_world_rank = -1;  // the server of the target's node
    int local = 0;               // rank in the target node's window group
    bool same_node = false;
    int disp_unit = 1;
    std::int64_t bytes = 0;
  };
  enum class Epoch : std::uint8_t { none, unconfirmed, confirmed };
  // Which targets an operation may reach now, as MPICH 4.0.2 decides it:
  // while any MPI_Win_lock epoch is open it lets every target through.
  struct AccessEpochs {
    int locks = 0;
    bool lock_all = false;
    bool fence = false;                 // after a fence that did not assert MPI_MODE_NOSUCCEED
    std::vector<std::uint8_t> started;  // MPI_Win_start's group, by window rank
    bool open_to(int target) const {
      return locks > 0 || lock_all || fence || started[static_cast<std::size_t>(target)] != 0;
    }
    // What MPICH 4.0.2 refuses to free a window in (a fence's epoch it
    // takes, as it does the absence of one).
    bool blocks_free() const {
      return locks > 0 || lock_all || std::find(started.begin(), started.end(), 1) != started.end();
    }
  };
  struct Operands;

  ManagedWindow() = default;
  int find_memory(const Creation& creation, bool& cross_memory);
  int learn_targets(const topo::Hierarchy& hierarchy, const Creation& creation, bool& servers_reach);
  int create_windows(const Creation& creation);
  int release();
  int check(const AccumulateCall& call, Operands& operands) const;
  int check_operands(const AccumulateCall& call, Operands& operands) const;
  // displacement x the target's disp_unit; false where that overflows.
  bool byte_offset(int target, MPI_Aint displacement, std::int64_t& offset) const;
  int confirm_epoch(int target);
  int apply_owner(const AccumulateCall& call, const Operands& operands, const unsigned char* stream,
                  const std::shared_ptr<ResultAssembly>& result);
  // Under mutex_.
  int complete_shipped();
  int complete_mpi_access(int target, const ByteSpan& touched);

  std::uint64_t id_ = 0;
  Flavor flavor_ = Flavor::allocate;
  AccumulatePath path_ = AccumulatePath::native;
  std::string reason_;
  std::string alloc_shm_ = "true";
  std::shared_ptr<WindowPool> pool_;  // the communicators and memory shared with the comm's other windows
  WindowPool::Carving carving_;
  bool carved_ = false;
  bool locks_held_on_return_ = false;
  unsigned char* base_ = nullptr;  // this process's part (MPI_Win_create: the caller's memory)
  OwnedWin user_;                  // the user's window, over base_
  OwnedWin caller_;                // disp_unit 1, for caller-computes
  bool attached_ = false;          // the user's window's attribute holds this state
  int rank_ = 0;
  std::vector<Target> targets_;
  std::shared_ptr<NodeMemory> memory_;
  bool hosts_server_ = false;

  std::mutex mutex_;  // the origin side, for MPI_THREAD_MULTIPLE callers
  std::vector<Epoch> epochs_;
  AccessEpochs access_;
  bool exposed_ = false;  // in an MPI_Win_post epoch
  AccessOrder order_{0};
  std::optional<ServerChannel> channel_;  // owner path across nodes
};

// The keyval that caches ManagedWindow on user windows: created after
// MPI_Init, freed before MPI_Finalize.
int create_window_keyval();
void free_window_keyval();

}  // namespace shim::rma
