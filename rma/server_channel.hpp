// One window's origin side of owner-computes towards other nodes' servers:
// requests batched per target server, sent to the first hop the server map
// names for it within this process's credits there, answers awaited.
// Completion (flush, unlock, fence, complete) is complete(): every request
// applied at its target and every result delivered.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <vector>

#include "rma/datatype_layout.hpp"
#include "rma/result_assembly.hpp"

namespace shim::rma {

// One request for one target's server: a chunk of one call.
struct Shipment {
  int server = -1;  // world rank
  int target_local = 0;
  std::int64_t target_offset = 0;  // bytes from the target segment's base
  std::span<const ByteRun> runs;
  const unsigned char* data = nullptr;  // packed origin elements; null for MPI_NO_OP
  std::int64_t bytes = 0;               // target bytes the request updates
  MPI_Datatype basic = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  const void* compare = nullptr;  // compare-and-swap
  std::shared_ptr<ResultAssembly> result;
  unsigned char* result_slot = nullptr;  // where in result->packed this chunk's old contents go
};

class ServerChannel {
 public:
  // Servers are addressed by world rank on `server_comm`; messages are at
  // most `buffer_bytes` (the servers' request buffers).
  ServerChannel(std::uint64_t window_id, MPI_Comm server_comm, std::int64_t buffer_bytes);

  int ship(const Shipment& shipment);
  // Everything shipped applied, every result delivered.
  int complete();
  // Until `result` is in (a request-based fetch completes with it).
  int wait_for(const ResultAssembly& result);

 private:
  struct InFlight {
    MPI_Request request = MPI_REQUEST_NULL;
    std::vector<unsigned char> buffer;       // a message's bytes, or an acknowledgement's
    std::shared_ptr<ResultAssembly> result;  // replies carrying a result
    bool ack = false;
  };
  struct Batch {
    std::vector<unsigned char> bytes;  // a MessageHeader, then requests
    std::size_t last = 0;              // offset of the last request's header
  };

  int send_batch(int server, bool acknowledge);
  int post(int server, std::vector<unsigned char> message, std::uint32_t flags,
           const std::shared_ptr<ResultAssembly>& result, unsigned char* result_slot, std::int64_t result_bytes);
  int settle(InFlight& oldest);
  int retire_finished();
  int wait_in_flight(std::size_t keep);
  int flush_servers();

  std::uint64_t window_id_;
  MPI_Comm server_comm_;
  std::int64_t buffer_bytes_;
  std::deque<InFlight> in_flight_;
  std::set<int> unflushed_;       // target servers shipped to since the last completion
  std::map<int, Batch> batches_;  // per target server
};

// This process's credits at every first hop, for all windows and threads:
// waits until each server released all it was sent that asked for a
// credit. Before the collective that stops the servers.
int drain_server_credits();

}  // namespace shim::rma
