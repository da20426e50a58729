#include "shim/bcast_dispatch.hpp"

#include "collectives/bcast_pipeline.hpp"
#include "collectives/bcast_stage_runner.hpp"
#include "common/bottom_buffer.hpp"
#include "common/datatype_checks.hpp"
#include "common/format.hpp"
#include "common/mpi_try.hpp"

namespace shim {

namespace {

struct SegmentShare {
  std::int64_t segments = 0;
  std::int64_t bytes = 0;
};

// The segments, and their bytes, that travel down each of `trees` trees
// when segment s takes tree s mod trees: all segments are whole but the
// last, which takes what is left.
std::vector<SegmentShare> shares_by_tree(const coll::SegmentPlan& plan, std::int64_t type_size,
                                         std::int64_t message_bytes, std::size_t trees) {
  const std::int64_t count = plan.segments;
  const auto turns = static_cast<std::int64_t>(trees);
  const std::int64_t whole = plan.mode == coll::SegmentPlan::Mode::whole      ? message_bytes
                             : plan.mode == coll::SegmentPlan::Mode::elements ? plan.per_segment * type_size
                                                                              : plan.per_segment;
  std::vector<SegmentShare> shares(trees);
  for (std::int64_t t = 0; t < turns && t < count; ++t) {
    shares[t].segments = (count - t + turns - 1) / turns;
    shares[t].bytes = shares[t].segments * whole;
  }
  shares[static_cast<std::size_t>((count - 1) % turns)].bytes -= count * whole - message_bytes;
  return shares;
}

// The trees a broadcast of `bytes` takes from `call.root`, and its segments:
// what record() counts and run() sends.
struct Route {
  const BcastRole& role;
  coll::SegmentPlan plan;
};
Route route_of(const BcastCall& call, BcastCall::Algorithm algorithm, CommState& state,
               const topo::Hierarchy& hierarchy, std::int64_t bytes) {
  const topo::Layout& layout = hierarchy.layout();
  const int subnets = state.subnets_spanned();
  return {state.bcast_role(algorithm, call.root, bcast_fanout(algorithm, bytes, layout, subnets)),
          coll::plan_segments(call.count, call.type_size,
                              bcast_segment_bytes(algorithm, bytes, eco_segments_sent_once(layout, subnets)))};
}

}  // namespace

BcastCall::Facts BcastCall::facts(CommState& state, const topo::Hierarchy& hierarchy, std::int64_t bytes) const {
  const topo::Layout& layout = hierarchy.layout();
  const int subnets = state.subnets_spanned();
  const coll::BcastFanout tree = bcast_fanout(Algorithm::twolevel, bytes, layout, subnets);
  return {bytes,
          layout.nodes(),
          layout.max_ppn(),
          subnets,
          layout.consecutive(),
          config().send_cost_ns,
          config().node_bandwidth,
          tree.one_chain || tree.between_subnets == 1};
}

std::string BcastCall::explain_more(const Decision<BcastCall>& decision, CommState& state,
                                    const topo::Hierarchy& hierarchy, std::int64_t bytes) const {
  if (decision.algorithm == Algorithm::native) return "";
  const topo::Layout& layout = hierarchy.layout();
  if (decision.algorithm == Algorithm::scatter_allgather) {
    return "; " + std::to_string(layout.nodes()) + " blocks of " +
           format_bytes(coll::stage_block_bytes(bytes, layout.nodes())) +
           " scattered and allgathered between node leaders, a binomial tree inside nodes";
  }
  const int subnets = state.subnets_spanned();
  const std::int64_t segment = bcast_segment_bytes(decision.algorithm, bytes, eco_segments_sent_once(layout, subnets));
  const coll::SegmentPlan plan = coll::plan_segments(bytes, 1, segment);
  const coll::BcastFanout fanout = bcast_fanout(decision.algorithm, bytes, layout, subnets);
  std::string text;
  if (fanout.one_chain) {
    text = "; one chain through every rank, node after node";
  } else {
    text = "; tree fan-out " + std::to_string(fanout.between_subnets);
    if (decision.algorithm == Algorithm::twolevel && fanout.between_subnets == 1) text += " (a chain between nodes)";
    if (decision.algorithm == Algorithm::eco) {
      text += " between subnets, " + std::to_string(fanout.within_subnet) + " within";
      if (coll::entries_take_turns(fanout, subnets)) text += ", subnet entries take turns";
      if (eco_segments_sent_once(layout, subnets)) text += ", one node per subnet (segments for one send each)";
    }
    if (fanout.entries_per_node > 1)
      text += ", entering each other node at " + std::to_string(fanout.entries_per_node) + " ranks";
    text += ", " + std::to_string(fanout.within_node) + " inside nodes";
    if (fanout.chain_nodes_up_to > fanout.within_node) {
      text += " (a chain in nodes of up to " + std::to_string(fanout.chain_nodes_up_to) + " ranks)";
    }
  }
  if (plan.segments > 1) {
    text += ", " + std::to_string(plan.segments) + " pipelined segments of " + format_bytes(segment);
  }
  if (decision.algorithm == Algorithm::eco && state.subnets_spanned() == 0) text += "; no network profile: one subnet";
  return text;
}

Measured BcastCall::measure(CommState& state) {
  // Arguments native MPI must reject: let it, with its own error report.
  if (type == MPI_DATATYPE_NULL || count < 0 || root < 0 || root >= state.size() || !committed_type(type) ||
      null_buffer_rejected(buffer, count, type)) {
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

void BcastCall::record(const Decision<BcastCall>& decision, CommState& state, const topo::Hierarchy& hierarchy,
                       std::int64_t bytes) const {
  stats::Record r{stats::Collective::bcast,
                  static_cast<int>(decision.algorithm),
                  bytes,
                  state.rank() == 0,
                  bytes,
                  decision.algorithm != Algorithm::native};
  if (decision.algorithm == Algorithm::scatter_allgather) {
    const coll::Traffic& traffic = state.bcast_scatter_allgather(root).traffic;
    const std::int64_t block = coll::stage_block_bytes(bytes, hierarchy.layout().nodes());
    r.inter_messages = traffic.inter_messages;
    r.inter_bytes = traffic.inter_blocks * block;
    r.intra_messages = traffic.intra_messages;
    r.intra_bytes = traffic.intra_blocks * block;
  } else if (decision.algorithm != Algorithm::native) {
    const auto [role, plan] = route_of(*this, decision.algorithm, state, hierarchy, bytes);
    const std::vector<SegmentShare> shares = shares_by_tree(plan, type_size, bytes, role.trees.size());
    for (std::size_t t = 0; t < shares.size(); ++t) {
      const auto inter = static_cast<std::int64_t>(role.inter_node_children[t]);
      const auto intra = static_cast<std::int64_t>(role.trees[t].children.size()) - inter;
      r.inter_messages += inter * shares[t].segments;
      r.inter_bytes += inter * shares[t].bytes;
      r.intra_messages += intra * shares[t].segments;
      r.intra_bytes += intra * shares[t].bytes;
    }
  }
  stats::record(r);
}

int BcastCall::run(const Decision<BcastCall>& decision, CommState& state, const topo::Hierarchy& hierarchy,
                   std::int64_t bytes) const {
  RebasedBuffer user;
  SHIM_TRY(rebase_bottom(buffer, type, user));
  const coll::BcastBuffer message{user.base, count, user.type};
  int rc = MPI_SUCCESS;
  if (decision.algorithm == Algorithm::scatter_allgather) {
    rc = coll::run_staged_bcast(message, hierarchy.rank() == root, state.bcast_scatter_allgather(root).schedule, bytes,
                                hierarchy.shadow(), state.scratch());
  } else {
    const auto [role, plan] = route_of(*this, decision.algorithm, state, hierarchy, bytes);
    rc = coll::run_tree_bcast(message, role.trees, plan, bytes, hierarchy.shadow(), state.scratch());
  }
  // A message beyond what the scratch buffer keeps between calls is not
  // held until the next collective.
  state.scratch().release_if_large();
  return rc;
}

DispatchOutcome dispatch_bcast(void* buffer, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm) {
  BcastCall call{buffer, count, type, root};
  return dispatch(call, comm);
}

}  // namespace shim
