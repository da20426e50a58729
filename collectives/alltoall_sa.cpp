#include <algorithm>
#include <numeric>
#include <vector>

#include "collectives/alltoall_schedules.hpp"

namespace shim::coll {

namespace {

// Step 1: local rank x ends up with one block from every local rank for
// each destination it aggregates for: stage slot dest_index * ppn + source_local.
Phase aggregate(const topo::Layout& layout, int rank, std::int64_t served) {
  const int node = layout.node_of(rank);
  const int ppn = layout.ppn(node);
  return intra_node_exchange(
      layout, rank,
      [&](int peer_local) {
        std::vector<Run> runs;
        for (int dest : ranks_proxied_by(layout, node, peer_local)) append_run(runs, {Buffer::send, dest, 1});
        return runs;
      },
      [&](int source_local) {
        std::vector<Run> runs;
        for (std::int64_t i = 0; i < served; ++i) append_run(runs, {Buffer::stage, i * ppn + source_local, 1});
        return runs;
      });
}

// Uneven nodes: each aggregated destination gets one message; each rank
// receives one message per node, from whichever local rank there aggregates
// for it. As the uniform rail step's point-to-point messages, kRailWindow in
// flight each way: all at once, the scale model gave no call of 63 nodes of 8
// and one of 3 in 600 s; paced, 9.5 / 9.7 / 12.2 us at 1 / 4 / 16 B (onload
// platform, docs/scale/tiny.csv). The messages between node s and node d
// have step (d - s) mod nodes on both sides, and both lists go by increasing
// step (PhaseKind::paced_exchange).
Phase point_to_point_from_proxies(const topo::Layout& layout, int rank, const std::vector<int>& destinations) {
  const int node = layout.node_of(rank);
  const int nodes = layout.nodes();
  const int ppn = layout.ppn(node);
  const auto step_to = [&](int dest) { return (layout.node_of(dest) - node + nodes) % nodes; };
  std::vector<std::size_t> by_step(destinations.size());
  std::iota(by_step.begin(), by_step.end(), std::size_t{0});
  std::stable_sort(by_step.begin(), by_step.end(),
                   [&](std::size_t a, std::size_t b) { return step_to(destinations[a]) < step_to(destinations[b]); });
  Phase phase{PhaseKind::paced_exchange, {}, {}, kRailWindow};
  for (std::size_t i : by_step) {
    phase.sends.push_back({destinations[i], {{Buffer::stage, static_cast<std::int64_t>(i) * ppn, ppn}}});
  }
  for (int step = 0; step < nodes; ++step) {
    const int other = (node - step + nodes) % nodes;
    Transfer recv{proxy_on_node(layout, other, rank), {}};
    for (int source : layout.members(other)) append_run(recv.runs, {Buffer::recv, source, 1});
    phase.recvs.push_back(std::move(recv));
  }
  return phase;
}

// Uniform: destination index i is node i, which is also rail rank i. On a
// consecutive layout a node's blocks land straight in the receive buffer;
// otherwise in stage from `unpack_base`.
Phase rail_exchange_of_aggregates(const topo::Layout& layout, std::int64_t unpack_base) {
  const int ppn = layout.max_ppn();
  Phase phase{PhaseKind::rail_alltoall, {}, {}};
  for (int other = 0; other < layout.nodes(); ++other) {
    phase.sends.push_back({other, {{Buffer::stage, std::int64_t{other} * ppn, ppn}}});
    if (layout.consecutive()) {
      phase.recvs.push_back({other, {{Buffer::recv, layout.rank_of(other, 0), ppn}}});
    } else {
      phase.recvs.push_back({other, {{Buffer::stage, unpack_base + std::int64_t{other} * ppn, ppn}}});
    }
  }
  return phase;
}

}  // namespace

Schedule build_sa_schedule(const topo::Layout& layout, int rank) {
  const int node = layout.node_of(rank);
  const std::vector<int> mine = ranks_proxied_by(layout, node, layout.local_rank(rank));
  const auto served = static_cast<std::int64_t>(mine.size());
  Schedule schedule;
  schedule.stage_blocks = served * layout.ppn(node);
  schedule.phases.push_back(aggregate(layout, rank, served));
  if (!layout.uniform()) {
    schedule.phases.push_back(point_to_point_from_proxies(layout, rank, mine));
    return schedule;
  }
  const std::int64_t unpack_base = schedule.stage_blocks;
  schedule.phases.push_back(rail_exchange_of_aggregates(layout, unpack_base));
  if (layout.consecutive()) return schedule;
  // Non-consecutive placement: the blocks from one node are scattered over
  // the receive buffer, so they land in stage and are copied out locally.
  schedule.stage_blocks += layout.size();
  schedule.phases.push_back(regroup_by_node(layout, rank, Buffer::recv, unpack_base, false));
  return schedule;
}

}  // namespace shim::coll
