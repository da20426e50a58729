#include "collectives/alltoall_schedules.hpp"

namespace shim::coll {

Schedule build_leader_schedule(const topo::Layout& layout, int rank) {
  const int node = layout.node_of(rank);
  const int ppn = layout.ppn(node);
  const int leader = layout.rank_of(node, 0);
  const std::int64_t size = layout.size();

  Schedule schedule;
  Phase gather;
  Phase leaders{PhaseKind::rail_alltoall, {}, {}};
  Phase scatter;
  gather.sends.push_back({leader, {{Buffer::send, 0, size}}});
  scatter.recvs.push_back({leader, {{Buffer::recv, 0, size}}});

  if (rank == leader) {
    // Leader stage, two halves of ppn * size blocks each:
    //  outgoing[m]: blocks for node m, ordered (source local j, dest local k);
    //  incoming[m]: blocks from node m, ordered (source local j, dest local k).
    // Each node's share is one run, so the leader exchange is one native call.
    std::vector<std::int64_t> node_base(layout.nodes() + 1, 0);
    for (int m = 0; m < layout.nodes(); ++m) node_base[m + 1] = node_base[m] + std::int64_t{ppn} * layout.ppn(m);
    const std::int64_t incoming = node_base.back();
    schedule.stage_blocks = 2 * incoming;

    for (int j = 0; j < ppn; ++j) {
      Transfer recv{layout.rank_of(node, j), {}};
      for (int dest = 0; dest < size; ++dest) {
        const int m = layout.node_of(dest);
        append_run(recv.runs,
                   {Buffer::stage, node_base[m] + std::int64_t{j} * layout.ppn(m) + layout.local_rank(dest), 1});
      }
      gather.recvs.push_back(std::move(recv));
    }
    for (int m = 0; m < layout.nodes(); ++m) {
      const std::int64_t blocks = node_base[m + 1] - node_base[m];
      leaders.sends.push_back({m, {{Buffer::stage, node_base[m], blocks}}});
      leaders.recvs.push_back({m, {{Buffer::stage, incoming + node_base[m], blocks}}});
    }
    for (int k = 0; k < ppn; ++k) {
      Transfer send{layout.rank_of(node, k), {}};
      for (int source = 0; source < size; ++source) {
        const std::int64_t slot =
            incoming + node_base[layout.node_of(source)] + std::int64_t{layout.local_rank(source)} * ppn + k;
        append_run(send.runs, {Buffer::stage, slot, 1});
      }
      scatter.sends.push_back(std::move(send));
    }
  }
  schedule.phases.push_back(std::move(gather));
  schedule.phases.push_back(std::move(leaders));
  schedule.phases.push_back(std::move(scatter));
  return schedule;
}

}  // namespace shim::coll
