#include "collectives/alltoall_schedules.hpp"

namespace shim::coll {

Schedule build_sa_schedule(const topo::Layout& layout, int rank) {
  const int node = layout.node_of(rank);
  const int local = layout.local_rank(rank);
  const int ppn = layout.ppn(node);
  const std::vector<int> mine = ranks_proxied_by(layout, node, local);
  const auto served = static_cast<std::int64_t>(mine.size());

  Schedule schedule;
  // Stage holds, for each destination this rank aggregates for, one block from
  // every local rank: slot dest_index * ppn + source_local.
  schedule.stage_blocks = served * ppn;

  Phase aggregate;
  for (int step = 0; step < ppn; ++step) {
    const int peer_local = (local + step) % ppn;
    Transfer send{layout.rank_of(node, peer_local), {}};
    for (int dest : ranks_proxied_by(layout, node, peer_local)) append_run(send.runs, {Buffer::send, dest, 1});
    aggregate.sends.push_back(std::move(send));

    const int source_local = (local - step + ppn) % ppn;
    Transfer recv{layout.rank_of(node, source_local), {}};
    for (std::int64_t i = 0; i < served; ++i) append_run(recv.runs, {Buffer::stage, i * ppn + source_local, 1});
    aggregate.recvs.push_back(std::move(recv));
  }
  schedule.phases.push_back(std::move(aggregate));

  if (!layout.uniform()) {
    // Each aggregated destination gets one message; each rank receives one
    // message per node, from whichever local rank there aggregates for it.
    Phase inter;
    for (std::int64_t i = 0; i < served; ++i) {
      inter.sends.push_back({mine[i], {{Buffer::stage, i * ppn, ppn}}});
    }
    for (int other = 0; other < layout.nodes(); ++other) {
      Transfer recv{proxy_on_node(layout, other, rank), {}};
      for (int source : layout.members(other)) append_run(recv.runs, {Buffer::recv, source, 1});
      inter.recvs.push_back(std::move(recv));
    }
    schedule.phases.push_back(std::move(inter));
    return schedule;
  }

  // Uniform: destination index i is node i, which is also rail rank i.
  Phase inter{PhaseKind::rail_alltoall, {}, {}};
  const std::int64_t unpack_base = schedule.stage_blocks;
  for (int other = 0; other < layout.nodes(); ++other) {
    inter.sends.push_back({other, {{Buffer::stage, std::int64_t{other} * ppn, ppn}}});
    if (layout.consecutive()) {
      inter.recvs.push_back({other, {{Buffer::recv, layout.rank_of(other, 0), ppn}}});
    } else {
      inter.recvs.push_back({other, {{Buffer::stage, unpack_base + std::int64_t{other} * ppn, ppn}}});
    }
  }
  schedule.phases.push_back(std::move(inter));
  if (layout.consecutive()) return schedule;

  // Non-consecutive placement: the blocks from one node are scattered over the
  // receive buffer, so they land in stage and are copied out locally.
  schedule.stage_blocks += layout.size();
  Phase unpack;
  Transfer from_stage{rank, {}};
  Transfer to_user{rank, {}};
  for (int other = 0; other < layout.nodes(); ++other) {
    for (int j = 0; j < ppn; ++j) {
      append_run(from_stage.runs, {Buffer::stage, unpack_base + std::int64_t{other} * ppn + j, 1});
      append_run(to_user.runs, {Buffer::recv, layout.rank_of(other, j), 1});
    }
  }
  unpack.sends.push_back(std::move(from_stage));
  unpack.recvs.push_back(std::move(to_user));
  schedule.phases.push_back(std::move(unpack));
  return schedule;
}

}  // namespace shim::coll
