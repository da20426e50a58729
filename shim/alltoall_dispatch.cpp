#include "shim/alltoall_dispatch.hpp"

#include "common/bottom_buffer.hpp"
#include "common/datatype_checks.hpp"
#include "common/mpi_try.hpp"

namespace shim {

AlltoallCall::Facts AlltoallCall::facts(CommState&, const topo::Hierarchy& hierarchy, std::int64_t block_bytes) const {
  const topo::Layout& layout = hierarchy.layout();
  return {.block_bytes = block_bytes,
          .nodes = layout.nodes(),
          .ppn = layout.max_ppn(),
          .nic = config().nic,
          .thresholds = config().alltoall_thresholds,
          .send_cost_ns = config().send_cost_ns,
          .min_ppn = layout.min_ppn(),
          .node_bandwidth = config().node_bandwidth,
          .in_place = args.sendbuf == MPI_IN_PLACE};
}

namespace {

// How the layout shapes a hierarchical algorithm.
std::string explain_layout(coll::AlltoallAlgorithm algorithm, const topo::Layout& layout) {
  if (!layout.uniform()) {
    return algorithm == coll::AlltoallAlgorithm::leader
               ? "; uneven nodes: leaders exchange with alltoallv"
               : "; uneven nodes: the inter-node step runs point-to-point, local rank y%ppn stands in for "
                 "missing local ranks";
  }
  if (!layout.consecutive() && algorithm != coll::AlltoallAlgorithm::leader) {
    return "; non-consecutive placement: each node's blocks pass through a staging buffer";
  }
  return "";
}

}  // namespace

std::string AlltoallCall::explain_more(const Decision<AlltoallCall>& decision, CommState& state,
                                       const topo::Hierarchy& hierarchy, std::int64_t block_bytes) const {
  // Native is MPI's, linear is flat; node pairs address every block where it
  // lies, on any layout, and have no rail step.
  if (decision.algorithm == Algorithm::native || decision.algorithm == Algorithm::linear ||
      decision.algorithm == Algorithm::node_pairs) {
    return "";
  }
  return explain_layout(decision.algorithm, hierarchy.layout()) + "; " +
         coll::explain_rail_step(decision.algorithm, facts(state, hierarchy, block_bytes));
}

Measured AlltoallCall::measure(CommState&) const {
  const bool in_place = args.sendbuf == MPI_IN_PLACE;
  // Arguments native MPI must reject: let it, with its own error report.
  // Among them one buffer for both sides without MPI_IN_PLACE, which MPICH
  // refuses where it can tell (the same datatype and count on both sides:
  // otherwise, as with MPI_BOTTOM, equal pointers need not mean one buffer).
  const bool one_buffer = !in_place && args.sendbuf == args.recvbuf && args.sendtype == args.recvtype &&
                          args.sendcount == args.recvcount && args.sendcount != 0;
  if (args.recvtype == MPI_DATATYPE_NULL || args.recvcount < 0 || args.recvbuf == MPI_IN_PLACE || one_buffer ||
      (!in_place && (args.sendtype == MPI_DATATYPE_NULL || args.sendcount < 0)) || !committed_type(args.recvtype) ||
      (!in_place && !committed_type(args.sendtype)) ||
      null_buffer_rejected(args.recvbuf, args.recvcount, args.recvtype) ||
      (!in_place && null_buffer_rejected(args.sendbuf, args.sendcount, args.sendtype))) {
    return {};
  }
  MPI_Count recv_type_size = 0;
  if (PMPI_Type_size_c(args.recvtype, &recv_type_size) != MPI_SUCCESS) return {};
  MPI_Count send_type_size = recv_type_size;
  if (!in_place && args.sendtype != args.recvtype && PMPI_Type_size_c(args.sendtype, &send_type_size) != MPI_SUCCESS) {
    return {};
  }
  const std::int64_t recv_block = args.recvcount * recv_type_size;
  const std::int64_t send_block = in_place ? recv_block : args.sendcount * send_type_size;
  if (send_block != recv_block) {
    return {false, recv_block,
            "send and receive blocks differ (" + format_bytes(send_block) + " vs " + format_bytes(recv_block) +
                "): native MPI reports the mismatch"};
  }
  if (recv_block == 0) return {false, 0, "empty blocks: nothing to exchange"};
  // shim's schedules deliver blocks they staged as packed bytes.
  if (mixes_element_sizes(args.recvtype)) {
    return {false, recv_block,
            "the receive datatype mixes elements of different sizes, into which MPICH 4.0.2 cannot receive packed "
            "bytes beyond its eager size"};
  }
  return {true, recv_block, ""};
}

std::string AlltoallCall::describe(const CommState&, const topo::Hierarchy& hierarchy) const {
  const std::string link =
      config().node_bandwidth > 0 ? ", node link " + std::to_string(config().node_bandwidth) + " B/s" : "";
  return hierarchy.layout().describe() + ", nodes from " + hierarchy.node_source() + link + ", NIC " +
         std::string(topo::name(config().nic));
}

void AlltoallCall::record(const Decision<AlltoallCall>& decision, CommState& state, const topo::Hierarchy&,
                          std::int64_t block) const {
  const bool native = decision.algorithm == Algorithm::native;
  const coll::Traffic* traffic = native ? nullptr : &state.alltoall_plan(decision.algorithm, block).traffic;
  stats::Record r{
      stats::Collective::alltoall, static_cast<int>(decision.algorithm), block, state.rank() == 0, state.size() * block,
      traffic != nullptr};
  if (traffic != nullptr) {
    r.inter_messages = traffic->inter_messages;
    r.inter_bytes = traffic->inter_blocks * block;
    r.intra_messages = traffic->intra_messages;
    r.intra_bytes = traffic->intra_blocks * block;
  }
  r.flat_inter_messages = state.flat_traffic().inter_messages;
  r.flat_inter_bytes = state.flat_traffic().inter_blocks * block;
  stats::record(r);
}

int AlltoallCall::run(const Decision<AlltoallCall>& decision, CommState& state, const topo::Hierarchy& hierarchy,
                      std::int64_t block_bytes) const {
  // (MPI_IN_PLACE is not null: it passes through as it is.)
  RebasedBuffer send, recv;
  SHIM_TRY(rebase_bottom(args.sendbuf, args.sendtype, send));
  SHIM_TRY(rebase_bottom(args.recvbuf, args.recvtype, recv));
  const coll::AlltoallArgs rebased{send.base, args.sendcount, send.type, recv.base, args.recvcount, recv.type};
  return coll::run_alltoall(rebased, block_bytes, state.alltoall_plan(decision.algorithm, block_bytes).schedule,
                            coll::rail_step_for(decision.algorithm, facts(state, hierarchy, block_bytes)), hierarchy,
                            state.scratch());
}

DispatchOutcome dispatch_alltoall(const coll::AlltoallArgs& args, MPI_Comm comm) {
  AlltoallCall call{args};
  return dispatch(call, comm);
}

}  // namespace shim
