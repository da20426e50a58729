#include "shim/bcast_dispatch.hpp"

#include "collectives/bcast_pipeline.hpp"
#include "shim/dispatch_support.hpp"
#include "shim/runtime.hpp"
#include "shim/stats.hpp"

namespace shim {

namespace {

constexpr coll::BcastAlgorithm to_algorithm(BcastChoice choice) {
  switch (choice) {
    case BcastChoice::eco: return coll::BcastAlgorithm::eco;
    case BcastChoice::twolevel: return coll::BcastAlgorithm::twolevel;
    case BcastChoice::native:
    case BcastChoice::automatic: break;
  }
  return coll::BcastAlgorithm::native;
}

coll::BcastPolicyInput policy_input(CommState& state, std::int64_t bytes) {
  const topo::Layout& layout = state.hierarchy_layout();
  return {bytes, layout.nodes(), layout.max_ppn(), state.subnets_spanned()};
}

BcastOutcome decline(CommState& state, std::int64_t bytes, const std::string& reason) {
  if (config().verbose && state.rank() == 0 &&
      state.first_announcement(stats::size_class(bytes), coll::BcastAlgorithm::native)) {
    announce_decision("bcast", state, "not handled", "message", bytes, "native", reason);
  }
  return {true, MPI_SUCCESS};
}

void record(coll::BcastAlgorithm algorithm, std::int64_t bytes, const CommState& state, const BcastRole* role,
            std::int64_t segments) {
  stats::Record r{stats::Collective::bcast, static_cast<int>(algorithm), bytes, state.rank() == 0, bytes,
                  role != nullptr};
  if (role != nullptr) {
    const auto inter = static_cast<std::int64_t>(role->inter_node_children);
    const auto intra = static_cast<std::int64_t>(role->children.size()) - inter;
    r.inter_messages = inter * segments;
    r.inter_bytes = inter * bytes;
    r.intra_messages = intra * segments;
    r.intra_bytes = intra * bytes;
  }
  stats::record(r);
}

}  // namespace

BcastChoiceMade decide_bcast(CommState& state, std::int64_t bytes) {
  const BcastChoice choice = state.bcast_override().value_or(config().bcast);
  if (choice != BcastChoice::automatic) return {to_algorithm(choice), nullptr, state.bcast_override().has_value()};
  const coll::BcastDecision decision = coll::choose_bcast(policy_input(state, bytes));
  return {decision.algorithm, decision.rule, false};
}

std::string_view rule_name(const BcastChoiceMade& made) { return made.rule ? made.rule->name : "forced"; }

std::string explain_bcast(const BcastChoiceMade& made, CommState& state, std::int64_t bytes) {
  std::string reason;
  if (made.rule == nullptr) {
    reason = made.forced_by_api ? "forced by shim_set_bcast_algorithm()"
                                : "forced by SHIM_BCAST=" + std::string(name(made.algorithm));
  } else {
    reason = coll::explain({made.algorithm, made.rule}, policy_input(state, bytes));
  }
  if (made.algorithm != coll::BcastAlgorithm::native) {
    const coll::SegmentPlan plan = coll::plan_segments(bytes, 1, config().bcast_segment_bytes);
    reason += "; tree fan-out " + std::to_string(bcast_fanout());
    if (plan.segments > 1) reason += ", " + std::to_string(plan.segments) + " pipelined segments";
    if (made.algorithm == coll::BcastAlgorithm::eco && state.subnets_spanned() == 0) {
      reason += "; no network profile: one subnet";
    }
  }
  return reason;
}

BcastOutcome dispatch_bcast(void* buffer, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm) {
  // Arguments native MPI must reject: let it, with its own error report.
  if (comm == MPI_COMM_NULL || type == MPI_DATATYPE_NULL || count < 0) return {true, MPI_SUCCESS};
  CommState* state = nullptr;
  if (comm_state(comm, state) != MPI_SUCCESS || !state->enabled) return {true, MPI_SUCCESS};
  if (root < 0 || root >= state->size()) return {true, MPI_SUCCESS};

  MPI_Count type_size = 0;
  if (PMPI_Type_size_c(type, &type_size) != MPI_SUCCESS) return {true, MPI_SUCCESS};
  const std::int64_t bytes = count * type_size;
  if (state->inter()) return decline(*state, bytes, "intercommunicator (not supported by shim)");
  if (bytes == 0) return decline(*state, 0, "empty message: nothing to send");

  const topo::Hierarchy* hierarchy = nullptr;
  if (const int rc = state->hierarchy(comm, config().node_size, hierarchy); rc != MPI_SUCCESS) {
    return {false, raise_error(comm, rc)};
  }
  const BcastChoiceMade made = decide_bcast(*state, bytes);
  if (config().verbose && state->rank() == 0 && state->first_announcement(stats::size_class(bytes), made.algorithm)) {
    announce_decision("bcast", *state, hierarchy->layout().describe() + ", root " + std::to_string(root), "message",
                      bytes, std::string(name(made.algorithm)) + " [" + std::string(rule_name(made)) + "]",
                      explain_bcast(made, *state, bytes));
  }
  if (made.algorithm == coll::BcastAlgorithm::native) {
    record(made.algorithm, bytes, *state, nullptr, 0);
    return {true, MPI_SUCCESS};
  }

  const BcastRole& role = state->bcast_role(made.algorithm, root, bcast_fanout());
  const coll::SegmentPlan plan = coll::plan_segments(count, type_size, config().bcast_segment_bytes);
  record(made.algorithm, bytes, *state, &role, plan.segments);
  const int rc = coll::run_tree_bcast({buffer, count, type}, role.parent, role.children, plan, bytes,
                                      hierarchy->shadow(), state->scratch());
  return {false, rc == MPI_SUCCESS ? rc : raise_error(comm, rc)};
}

}  // namespace shim
