#include "common/format.hpp"
#include "shim/alltoall_dispatch.hpp"

#include "shim/dispatch_support.hpp"
#include "shim/runtime.hpp"
#include "shim/stats.hpp"

namespace shim {

namespace {

constexpr coll::AlltoallAlgorithm to_algorithm(AlltoallChoice choice) {
  switch (choice) {
    case AlltoallChoice::sa: return coll::AlltoallAlgorithm::sa;
    case AlltoallChoice::rd: return coll::AlltoallAlgorithm::rd;
    case AlltoallChoice::leader: return coll::AlltoallAlgorithm::leader;
    case AlltoallChoice::native:
    case AlltoallChoice::automatic: break;
  }
  return coll::AlltoallAlgorithm::native;
}

coll::AlltoallPolicyInput policy_input(const topo::Layout& layout, std::int64_t block_bytes) {
  return {block_bytes, layout.nodes(), layout.max_ppn(), config().nic};
}

// How the layout shapes a hierarchical algorithm, for SHIM_VERBOSE.
std::string layout_note(const topo::Layout& layout, coll::AlltoallAlgorithm algorithm) {
  if (algorithm == coll::AlltoallAlgorithm::native) return "";
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

void announce(const CommState& state, const std::string& what, std::int64_t block_bytes, std::string_view algorithm,
              const std::string& reason) {
  announce_decision("alltoall", state, what, "block", block_bytes, algorithm, reason);
}

// Calls shim leaves to native MPI before any decision: announced once per
// communicator and size class, not counted.
AlltoallOutcome decline(CommState& state, std::int64_t block_bytes, const std::string& reason) {
  if (config().verbose && state.rank() == 0 &&
      state.first_announcement(stats::size_class(block_bytes), coll::AlltoallAlgorithm::native)) {
    announce(state, "not handled", block_bytes, "native", reason);
  }
  return {true, MPI_SUCCESS};
}

void record_alltoall(coll::AlltoallAlgorithm algorithm, std::int64_t block, const CommState& state,
                     const coll::Traffic* traffic) {
  stats::Record r{stats::Collective::alltoall, static_cast<int>(algorithm), block, state.rank() == 0,
                  state.size() * block, traffic != nullptr};
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

}  // namespace

AlltoallChoiceMade decide_alltoall(const CommState& state, const topo::Hierarchy& hierarchy,
                                   std::int64_t block_bytes) {
  const AlltoallChoice choice = state.alltoall_override().value_or(config().alltoall);
  if (choice != AlltoallChoice::automatic) {
    return {to_algorithm(choice), nullptr, state.alltoall_override().has_value()};
  }
  const coll::AlltoallDecision decision =
      coll::choose_alltoall(policy_input(hierarchy.layout(), block_bytes), config().alltoall_thresholds);
  return {decision.algorithm, decision.rule, false};
}

std::string_view rule_name(const AlltoallChoiceMade& made) { return made.rule ? made.rule->name : "forced"; }

std::string explain_alltoall(const AlltoallChoiceMade& made, const topo::Hierarchy& hierarchy,
                             std::int64_t block_bytes) {
  std::string reason;
  if (made.rule == nullptr) {
    reason = made.forced_by_api ? "forced by shim_set_alltoall_algorithm()"
                                : "forced by SHIM_ALLTOALL=" + std::string(name(made.algorithm));
  } else {
    reason = coll::explain({made.algorithm, made.rule}, policy_input(hierarchy.layout(), block_bytes),
                           config().alltoall_thresholds);
  }
  return reason + layout_note(hierarchy.layout(), made.algorithm);
}

AlltoallOutcome dispatch_alltoall(const coll::AlltoallArgs& args, MPI_Comm comm) {
  const bool in_place = args.sendbuf == MPI_IN_PLACE;
  // Arguments native MPI must reject: let it, with its own error report.
  if (comm == MPI_COMM_NULL || args.recvtype == MPI_DATATYPE_NULL || args.recvcount < 0 ||
      args.recvbuf == MPI_IN_PLACE || (!in_place && (args.sendtype == MPI_DATATYPE_NULL || args.sendcount < 0))) {
    return {true, MPI_SUCCESS};
  }
  CommState* state = nullptr;
  if (comm_state(comm, state) != MPI_SUCCESS || !state->enabled) return {true, MPI_SUCCESS};

  MPI_Count recv_type_size = 0;
  if (PMPI_Type_size_c(args.recvtype, &recv_type_size) != MPI_SUCCESS) return {true, MPI_SUCCESS};
  MPI_Count send_type_size = recv_type_size;
  if (!in_place && args.sendtype != args.recvtype &&
      PMPI_Type_size_c(args.sendtype, &send_type_size) != MPI_SUCCESS) {
    return {true, MPI_SUCCESS};
  }
  const std::int64_t recv_block = args.recvcount * recv_type_size;
  const std::int64_t send_block = in_place ? recv_block : args.sendcount * send_type_size;

  if (state->inter()) return decline(*state, recv_block, "intercommunicator (not supported by shim)");
  if (send_block != recv_block) {
    return decline(*state, recv_block,
                   "send and receive blocks differ (" + format_bytes(send_block) + " vs " +
                       format_bytes(recv_block) + "): native MPI reports the mismatch");
  }
  if (recv_block == 0) return decline(*state, 0, "empty blocks: nothing to exchange");

  const topo::Hierarchy* hierarchy = nullptr;
  if (const int rc = state->hierarchy(comm, config().node_size, hierarchy); rc != MPI_SUCCESS) {
    return {false, raise_error(comm, rc)};
  }

  const AlltoallChoiceMade made = decide_alltoall(*state, *hierarchy, recv_block);
  if (config().verbose && state->rank() == 0 &&
      state->first_announcement(stats::size_class(recv_block), made.algorithm)) {
    announce(*state, hierarchy->layout().describe() + ", nodes from " + hierarchy->node_source(), recv_block,
             std::string(name(made.algorithm)) + " [" + std::string(rule_name(made)) + "]",
             explain_alltoall(made, *hierarchy, recv_block));
  }

  const bool native = made.algorithm == coll::AlltoallAlgorithm::native;
  const AlltoallPlan* plan = native ? nullptr : &state->alltoall_plan(made.algorithm);
  record_alltoall(made.algorithm, recv_block, *state, native ? nullptr : &plan->traffic);
  if (native) return {true, MPI_SUCCESS};

  const int rc = coll::run_alltoall(args, recv_block, plan->schedule, *hierarchy, state->scratch());
  return {false, rc == MPI_SUCCESS ? rc : raise_error(comm, rc)};
}

}  // namespace shim
