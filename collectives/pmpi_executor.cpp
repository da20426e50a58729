#include "collectives/pmpi_executor.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/address.hpp"
#include "common/message_tags.hpp"
#include "common/mpi_handle.hpp"
#include "common/mpi_try.hpp"

namespace shim::coll {

namespace {

// A message's buffer argument triple; owns the type when it was derived here.
class MessageBuffer {
 public:
  int describe(const std::vector<Run>& runs, const ScheduleBuffers& buffers) {
    if (runs.size() == 1) {
      const Run& run = runs.front();
      const BlockBuffer& b = buffers[run.buffer];
      address_ = PMPI_Aint_add(address_of(b.base), run.first * b.block_extent);
      count_ = run.blocks * b.per_block;
      type_ = b.type;
      return MPI_SUCCESS;
    }
    bool one_buffer = true;
    for (const Run& run : runs) one_buffer = one_buffer && run.buffer == runs.front().buffer;
    std::vector<MPI_Count> lengths, displacements;
    std::vector<MPI_Datatype> types;
    for (const Run& run : runs) {
      const BlockBuffer& b = buffers[run.buffer];
      lengths.push_back(run.blocks * b.per_block);
      const MPI_Aint offset = run.first * b.block_extent;
      // Several buffers: absolute addresses, sent from MPI_BOTTOM.
      displacements.push_back(one_buffer ? offset : PMPI_Aint_add(address_of(b.base), offset));
      types.push_back(b.type);
    }
    const auto n = static_cast<MPI_Count>(runs.size());
    SHIM_TRY(one_buffer
                 ? PMPI_Type_create_hindexed_c(n, lengths.data(), displacements.data(), types.front(), derived_.out())
                 : PMPI_Type_create_struct_c(n, lengths.data(), displacements.data(), types.data(), derived_.out()));
    type_ = derived_.get();
    address_ = one_buffer ? address_of(buffers[runs.front().buffer].base) : address_of(MPI_BOTTOM);
    count_ = 1;
    return PMPI_Type_commit(&type_);
  }

  void* address() const { return pointer_at(address_); }
  MPI_Count count() const { return count_; }
  MPI_Datatype type() const { return type_; }

 private:
  MPI_Aint address_ = 0;
  MPI_Count count_ = 0;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  OwnedType derived_;
};

int run_exchange(const Phase& phase, int tag, const ScheduleBuffers& buffers, MPI_Comm shadow) {
  std::vector<MPI_Request> requests;
  requests.reserve(phase.recvs.size() + phase.sends.size());
  int rc = MPI_SUCCESS;
  // Receives first, so that every send finds its receive posted.
  for (const Transfer& recv : phase.recvs) {
    MessageBuffer message;
    rc = message.describe(recv.runs, buffers);
    if (rc != MPI_SUCCESS) break;
    requests.push_back(MPI_REQUEST_NULL);
    rc = PMPI_Irecv_c(message.address(), message.count(), message.type(), recv.peer, tag, shadow, &requests.back());
    if (rc != MPI_SUCCESS) break;
  }
  for (const Transfer& send : phase.sends) {
    if (rc != MPI_SUCCESS) break;
    MessageBuffer message;
    rc = message.describe(send.runs, buffers);
    if (rc != MPI_SUCCESS) break;
    requests.push_back(MPI_REQUEST_NULL);
    rc = PMPI_Isend_c(message.address(), message.count(), message.type(), send.peer, tag, shadow, &requests.back());
  }
  // Wait even after an error: the posted operations still reference
  // buffers. After an error a peer may never send, so receives (posted
  // first) are cancelled; one that completed meanwhile just completes.
  if (rc != MPI_SUCCESS) {
    const std::size_t receives = std::min(requests.size(), phase.recvs.size());
    for (std::size_t i = 0; i < receives; ++i) {
      if (requests[i] != MPI_REQUEST_NULL) static_cast<void>(PMPI_Cancel(&requests[i]));
    }
  }
  const int wait_rc = PMPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  return rc != MPI_SUCCESS ? rc : wait_rc;
}

// Transfers started in the order given, at most `window` each way in
// flight: a new one starts as soon as one completes.
int run_windowed(const std::vector<const Transfer*>& recvs, const std::vector<const Transfer*>& sends, int window,
                 int tag, const ScheduleBuffers& buffers, MPI_Comm comm) {
  const auto limit = static_cast<std::size_t>(std::max(window, 1));
  const auto recv_window = static_cast<int>(std::min(limit, recvs.size()));
  const auto send_window = static_cast<int>(std::min(limit, sends.size()));
  // Slots [0, recv_window) receive, the rest send; each keeps its
  // message's buffer description alive while in flight.
  std::vector<MPI_Request> requests(static_cast<std::size_t>(recv_window + send_window), MPI_REQUEST_NULL);
  std::vector<MessageBuffer> messages(requests.size());
  std::size_t next_recv = 0;
  std::size_t next_send = 0;
  auto start = [&](int slot) -> int {
    const bool receive = slot < recv_window;
    std::size_t& next = receive ? next_recv : next_send;
    const std::vector<const Transfer*>& order = receive ? recvs : sends;
    if (next == order.size()) return MPI_SUCCESS;
    const Transfer& transfer = *order[next++];
    MessageBuffer& message = messages[static_cast<std::size_t>(slot)];
    message = MessageBuffer{};
    SHIM_TRY(message.describe(transfer.runs, buffers));
    MPI_Request* request = &requests[static_cast<std::size_t>(slot)];
    return receive
               ? PMPI_Irecv_c(message.address(), message.count(), message.type(), transfer.peer, tag, comm, request)
               : PMPI_Isend_c(message.address(), message.count(), message.type(), transfer.peer, tag, comm, request);
  };
  int rc = MPI_SUCCESS;
  // Receives first, so that every send finds its receive posted.
  for (int slot = 0; slot < static_cast<int>(requests.size()) && rc == MPI_SUCCESS; ++slot) rc = start(slot);
  while (rc == MPI_SUCCESS) {
    int done = MPI_UNDEFINED;
    rc = PMPI_Waitany(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || done == MPI_UNDEFINED) break;
    rc = start(done);
  }
  if (rc == MPI_SUCCESS) return MPI_SUCCESS;
  // As in run_exchange: posted operations still reference buffers, and a
  // peer may never send after an error.
  for (int slot = 0; slot < recv_window; ++slot) {
    if (requests[static_cast<std::size_t>(slot)] != MPI_REQUEST_NULL) {
      static_cast<void>(PMPI_Cancel(&requests[static_cast<std::size_t>(slot)]));
    }
  }
  static_cast<void>(PMPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
  return rc;
}

std::vector<const Transfer*> in_order(const std::vector<Transfer>& transfers) {
  std::vector<const Transfer*> order;
  order.reserve(transfers.size());
  for (const Transfer& transfer : transfers) order.push_back(&transfer);
  return order;
}

// A rail step as point-to-point messages. Step j sends to rail rank me + j
// and receives from me - j, so the ranks of a rail start at different peers
// instead of all at rail rank 0; every message's step is the same on both
// sides, so the window cannot deadlock (PhaseKind::paced_exchange).
int run_rail_point_to_point(const Phase& phase, int tag, const ScheduleBuffers& buffers, MPI_Comm rail) {
  if (!rail_call_shape(phase).valid) return MPI_ERR_INTERN;
  int me = 0;
  SHIM_TRY(PMPI_Comm_rank(rail, &me));
  const auto peers = static_cast<int>(phase.sends.size());
  std::vector<const Transfer*> recvs, sends;
  for (int step = 0; step < peers; ++step) {
    recvs.push_back(&phase.recvs[static_cast<std::size_t>((me - step + peers) % peers)]);
    sends.push_back(&phase.sends[static_cast<std::size_t>((me + step) % peers)]);
  }
  return run_windowed(recvs, sends, kRailWindow, tag, buffers, rail);
}

int run_rail_alltoall(const Phase& phase, const ScheduleBuffers& buffers, MPI_Comm rail) {
  const RailCallShape shape = rail_call_shape(phase);
  if (!shape.valid) return MPI_ERR_INTERN;
  const BlockBuffer& send = buffers[shape.send_buffer];
  const BlockBuffer& recv = buffers[shape.recv_buffer];
  const Run& send0 = phase.sends.front().runs.front();
  const Run& recv0 = phase.recvs.front().runs.front();
  if (shape.uniform) {
    return PMPI_Alltoall_c(pointer_at(PMPI_Aint_add(address_of(send.base), send0.first * send.block_extent)),
                           send0.blocks * send.per_block, send.type,
                           pointer_at(PMPI_Aint_add(address_of(recv.base), recv0.first * recv.block_extent)),
                           recv0.blocks * recv.per_block, recv.type, rail);
  }
  // Displacements of alltoallv count elements of the datatype.
  const std::size_t peers = phase.sends.size();
  std::vector<MPI_Count> send_counts(peers), recv_counts(peers);
  std::vector<MPI_Aint> send_displs(peers), recv_displs(peers);
  for (std::size_t i = 0; i < peers; ++i) {
    const Run& s = phase.sends[i].runs.front();
    const Run& r = phase.recvs[i].runs.front();
    send_counts[i] = s.blocks * send.per_block;
    send_displs[i] = s.first * send.per_block;
    recv_counts[i] = r.blocks * recv.per_block;
    recv_displs[i] = r.first * recv.per_block;
  }
  return PMPI_Alltoallv_c(send.base, send_counts.data(), send_displs.data(), send.type, recv.base, recv_counts.data(),
                          recv_displs.data(), recv.type, rail);
}

}  // namespace

int run_schedule(const Schedule& schedule, const ScheduleBuffers& buffers, MPI_Comm shadow, MPI_Comm rail,
                 RailStep rail_step, std::int64_t block_bytes) {
  for (std::size_t i = 0; i < schedule.phases.size(); ++i) {
    const Phase& phase = schedule.phases[i];
    if (phase.sends.empty() && phase.recvs.empty()) continue;
    const int tag = tags::kAlltoallPhase + static_cast<int>(i);
    const bool all_at_once = phase.kind == PhaseKind::exchange ||
                             (phase.kind == PhaseKind::paced_exchange && block_bytes < phase.paced_from_block_bytes);
    if (all_at_once) {
      SHIM_TRY(run_exchange(phase, tag, buffers, shadow));
    } else if (phase.kind == PhaseKind::paced_exchange) {
      SHIM_TRY(run_windowed(in_order(phase.recvs), in_order(phase.sends), phase.window, tag, buffers, shadow));
    } else {
      // A rail phase's peers are ranks of the rail communicator either way.
      SHIM_TRY(rail_step == RailStep::point_to_point ? run_rail_point_to_point(phase, tag, buffers, rail)
                                                     : run_rail_alltoall(phase, buffers, rail));
    }
  }
  return MPI_SUCCESS;
}

}  // namespace shim::coll
