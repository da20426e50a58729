#include "collectives/alltoall_schedules.hpp"

namespace shim::coll {

Schedule build_rd_schedule(const topo::Layout& layout, int rank) {
  const int node = layout.node_of(rank);
  const int local = layout.local_rank(rank);
  const int ppn = layout.ppn(node);
  // The sources whose blocks for this node arrive here first, to be
  // distributed: slot source_index * ppn + dest_local of stage.
  const std::vector<int> sources = ranks_proxied_by(layout, node, local);
  const auto served = static_cast<std::int64_t>(sources.size());

  Schedule schedule;
  schedule.stage_blocks = served * ppn;

  if (!layout.uniform()) {
    Phase inter;
    for (int other = 0; other < layout.nodes(); ++other) {
      Transfer send{proxy_on_node(layout, other, rank), {}};
      for (int dest : layout.members(other)) append_run(send.runs, {Buffer::send, dest, 1});
      inter.sends.push_back(std::move(send));
    }
    for (std::int64_t i = 0; i < served; ++i) {
      inter.recvs.push_back({sources[i], {{Buffer::stage, i * ppn, ppn}}});
    }
    schedule.phases.push_back(std::move(inter));
  } else {
    // Uniform: source index i is node i, which is also rail rank i.
    if (!layout.consecutive()) {
      // A node's blocks are scattered over the send buffer; gather them into
      // per-node runs first so the rail alltoall stays a plain alltoall.
      const std::int64_t pack_base = schedule.stage_blocks;
      schedule.stage_blocks += layout.size();
      Transfer from_user{rank, {}};
      Transfer to_stage{rank, {}};
      for (int other = 0; other < layout.nodes(); ++other) {
        for (int j = 0; j < ppn; ++j) {
          append_run(from_user.runs, {Buffer::send, layout.rank_of(other, j), 1});
          append_run(to_stage.runs, {Buffer::stage, pack_base + std::int64_t{other} * ppn + j, 1});
        }
      }
      Phase pack;
      pack.sends.push_back(std::move(from_user));
      pack.recvs.push_back(std::move(to_stage));
      schedule.phases.push_back(std::move(pack));
    }
    Phase inter{PhaseKind::rail_alltoall, {}, {}};
    const std::int64_t pack_base = served * ppn;
    for (int other = 0; other < layout.nodes(); ++other) {
      if (layout.consecutive()) {
        inter.sends.push_back({other, {{Buffer::send, layout.rank_of(other, 0), ppn}}});
      } else {
        inter.sends.push_back({other, {{Buffer::stage, pack_base + std::int64_t{other} * ppn, ppn}}});
      }
      inter.recvs.push_back({other, {{Buffer::stage, std::int64_t{other} * ppn, ppn}}});
    }
    schedule.phases.push_back(std::move(inter));
  }

  Phase distribute;
  for (int step = 0; step < ppn; ++step) {
    const int dest_local = (local + step) % ppn;
    Transfer send{layout.rank_of(node, dest_local), {}};
    for (std::int64_t i = 0; i < served; ++i) append_run(send.runs, {Buffer::stage, i * ppn + dest_local, 1});
    distribute.sends.push_back(std::move(send));

    const int source_local = (local - step + ppn) % ppn;
    Transfer recv{layout.rank_of(node, source_local), {}};
    for (int source : ranks_proxied_by(layout, node, source_local)) append_run(recv.runs, {Buffer::recv, source, 1});
    distribute.recvs.push_back(std::move(recv));
  }
  schedule.phases.push_back(std::move(distribute));
  return schedule;
}

}  // namespace shim::coll
