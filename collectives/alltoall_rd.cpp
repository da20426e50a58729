#include "collectives/alltoall_schedules.hpp"

namespace shim::coll {

namespace {

// Uneven nodes: one message to whichever local rank of each node receives
// for this rank; one from each source this rank receives for.
Phase point_to_point_to_proxies(const topo::Layout& layout, int rank, const std::vector<int>& sources) {
  const int ppn = layout.ppn(layout.node_of(rank));
  Phase phase;
  for (int other = 0; other < layout.nodes(); ++other) {
    Transfer send{proxy_on_node(layout, other, rank), {}};
    for (int dest : layout.members(other)) append_run(send.runs, {Buffer::send, dest, 1});
    phase.sends.push_back(std::move(send));
  }
  for (std::size_t i = 0; i < sources.size(); ++i) {
    phase.recvs.push_back({sources[i], {{Buffer::stage, static_cast<std::int64_t>(i) * ppn, ppn}}});
  }
  return phase;
}

// Uniform: source index i is node i, which is also rail rank i. Sends come
// from the user's buffer on a consecutive layout, otherwise from stage at
// `pack_base`, where they were regrouped by node.
Phase rail_exchange_for_distribution(const topo::Layout& layout, std::int64_t pack_base) {
  const int ppn = layout.max_ppn();
  Phase phase{PhaseKind::rail_alltoall, {}, {}};
  for (int other = 0; other < layout.nodes(); ++other) {
    if (layout.consecutive()) {
      phase.sends.push_back({other, {{Buffer::send, layout.rank_of(other, 0), ppn}}});
    } else {
      phase.sends.push_back({other, {{Buffer::stage, pack_base + std::int64_t{other} * ppn, ppn}}});
    }
    phase.recvs.push_back({other, {{Buffer::stage, std::int64_t{other} * ppn, ppn}}});
  }
  return phase;
}

// The last step: each local rank gets, from every local rank, the blocks for
// it that rank received (stage slot source_index * ppn + dest_local).
Phase distribute(const topo::Layout& layout, int rank, std::int64_t served) {
  const int node = layout.node_of(rank);
  const int ppn = layout.ppn(node);
  return intra_node_exchange(
      layout, rank,
      [&](int dest_local) {
        std::vector<Run> runs;
        for (std::int64_t i = 0; i < served; ++i) append_run(runs, {Buffer::stage, i * ppn + dest_local, 1});
        return runs;
      },
      [&](int source_local) {
        std::vector<Run> runs;
        for (int source : ranks_proxied_by(layout, node, source_local)) append_run(runs, {Buffer::recv, source, 1});
        return runs;
      });
}

}  // namespace

Schedule build_rd_schedule(const topo::Layout& layout, int rank) {
  const int node = layout.node_of(rank);
  // The sources whose blocks for this node arrive here first, to be
  // distributed.
  const std::vector<int> sources = ranks_proxied_by(layout, node, layout.local_rank(rank));
  const auto served = static_cast<std::int64_t>(sources.size());
  Schedule schedule;
  schedule.stage_blocks = served * layout.ppn(node);
  if (!layout.uniform()) {
    schedule.phases.push_back(point_to_point_to_proxies(layout, rank, sources));
  } else {
    const std::int64_t pack_base = schedule.stage_blocks;
    if (!layout.consecutive()) {
      // A node's blocks are scattered over the send buffer; gather them into
      // per-node runs first so the rail alltoall stays a plain alltoall.
      schedule.stage_blocks += layout.size();
      schedule.phases.push_back(regroup_by_node(layout, rank, Buffer::send, pack_base, true));
    }
    schedule.phases.push_back(rail_exchange_for_distribution(layout, pack_base));
  }
  schedule.phases.push_back(distribute(layout, rank, served));
  return schedule;
}

}  // namespace shim::coll
