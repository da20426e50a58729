#include "shim/bcast_dispatch.hpp"

#include "collectives/bcast_pipeline.hpp"
#include "common/datatype_checks.hpp"
#include "common/format.hpp"

namespace shim {

BcastCall::Facts BcastCall::facts(CommState& state, const topo::Hierarchy& hierarchy, std::int64_t bytes) {
  const topo::Layout& layout = hierarchy.layout();
  return {bytes, layout.nodes(), layout.max_ppn(), state.subnets_spanned(), layout.consecutive()};
}

std::string BcastCall::explain_more(const Decision<BcastCall>& decision, CommState& state, const topo::Hierarchy&,
                                    std::int64_t bytes) {
  if (decision.algorithm == Algorithm::native) return "";
  const std::int64_t segment = bcast_segment_bytes(decision.algorithm, bytes);
  const coll::SegmentPlan plan = coll::plan_segments(bytes, 1, segment);
  const coll::BcastFanout fanout = bcast_fanout(decision.algorithm, bytes);
  std::string text = "; tree fan-out " + std::to_string(fanout.between_subnets);
  if (decision.algorithm == Algorithm::eco)
    text += " between subnets, " + std::to_string(fanout.within_subnet) + " within";
  if (plan.segments > 1) {
    text += ", " + std::to_string(plan.segments) + " pipelined segments of " + format_bytes(segment);
  }
  if (decision.algorithm == Algorithm::eco && state.subnets_spanned() == 0) text += "; no network profile: one subnet";
  return text;
}

Measured BcastCall::measure(CommState& state) {
  // Arguments native MPI must reject, or judges by what it knows of the
  // datatype (a null buffer is MPI_BOTTOM to absolute-address types): let
  // it, with its own error report.
  if (type == MPI_DATATYPE_NULL || count < 0 || root < 0 || root >= state.size() || (count > 0 && buffer == nullptr) ||
      !committed_type(type)) {
    return {};
  }
  if (PMPI_Type_size_c(type, &type_size) != MPI_SUCCESS) return {};
  const std::int64_t bytes = count * type_size;
  if (bytes == 0) return {false, 0, "empty message: nothing to send"};
  return {true, bytes, ""};
}

std::string BcastCall::describe(const CommState&, const topo::Hierarchy& hierarchy) const {
  return hierarchy.layout().describe() + ", root " + std::to_string(root);
}

void BcastCall::record(const Decision<BcastCall>& decision, CommState& state, const topo::Hierarchy&,
                       std::int64_t bytes) const {
  stats::Record r{stats::Collective::bcast,
                  static_cast<int>(decision.algorithm),
                  bytes,
                  state.rank() == 0,
                  bytes,
                  decision.algorithm != Algorithm::native};
  if (decision.algorithm != Algorithm::native) {
    const BcastRole& role = state.bcast_role(decision.algorithm, root, bcast_fanout(decision.algorithm, bytes));
    const std::int64_t segments =
        coll::plan_segments(count, type_size, bcast_segment_bytes(decision.algorithm, bytes)).segments;
    const auto inter = static_cast<std::int64_t>(role.inter_node_children);
    const auto intra = static_cast<std::int64_t>(role.children.size()) - inter;
    r.inter_messages = inter * segments;
    r.inter_bytes = inter * bytes;
    r.intra_messages = intra * segments;
    r.intra_bytes = intra * bytes;
  }
  stats::record(r);
}

int BcastCall::run(const Decision<BcastCall>& decision, CommState& state, const topo::Hierarchy& hierarchy,
                   std::int64_t bytes) const {
  const BcastRole& role = state.bcast_role(decision.algorithm, root, bcast_fanout(decision.algorithm, bytes));
  const coll::SegmentPlan plan = coll::plan_segments(count, type_size, bcast_segment_bytes(decision.algorithm, bytes));
  return coll::run_tree_bcast({buffer, count, type}, role.parent, role.children, plan, bytes, hierarchy.shadow(),
                              state.scratch());
}

DispatchOutcome dispatch_bcast(void* buffer, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm) {
  BcastCall call{buffer, count, type, root};
  return dispatch(call, comm);
}

}  // namespace shim
