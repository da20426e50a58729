#include "collectives/alltoall_schedules.hpp"

namespace shim::coll {

std::vector<int> ranks_proxied_by(const topo::Layout& layout, int node, int local) {
  std::vector<int> ranks;
  const int ppn = layout.ppn(node);
  for (int other = 0; other < layout.nodes(); ++other) {
    for (int y = local; y < layout.ppn(other); y += ppn) ranks.push_back(layout.rank_of(other, y));
  }
  return ranks;
}

int proxy_on_node(const topo::Layout& layout, int node, int rank) {
  return layout.rank_of(node, layout.local_rank(rank) % layout.ppn(node));
}

Phase intra_node_exchange(const topo::Layout& layout, int rank, const std::function<std::vector<Run>(int)>& sent_to,
                          const std::function<std::vector<Run>(int)>& received_from) {
  const int node = layout.node_of(rank);
  const int local = layout.local_rank(rank);
  const int ppn = layout.ppn(node);
  Phase phase;
  for (int step = 0; step < ppn; ++step) {
    const int dest_local = (local + step) % ppn;
    Transfer send{layout.rank_of(node, dest_local), sent_to(dest_local)};
    if (!send.runs.empty()) phase.sends.push_back(std::move(send));
    const int source_local = (local - step + ppn) % ppn;
    Transfer recv{layout.rank_of(node, source_local), received_from(source_local)};
    if (!recv.runs.empty()) phase.recvs.push_back(std::move(recv));
  }
  return phase;
}

Phase regroup_by_node(const topo::Layout& layout, int rank, Buffer user, std::int64_t stage_base, bool to_stage) {
  const int ppn = layout.max_ppn();
  Transfer in_user{rank, {}};
  Transfer in_stage{rank, {}};
  for (int node = 0; node < layout.nodes(); ++node) {
    for (int j = 0; j < ppn; ++j) {
      append_run(in_user.runs, {user, layout.rank_of(node, j), 1});
      append_run(in_stage.runs, {Buffer::stage, stage_base + std::int64_t{node} * ppn + j, 1});
    }
  }
  Phase copy;
  copy.sends.push_back(std::move(to_stage ? in_user : in_stage));
  copy.recvs.push_back(std::move(to_stage ? in_stage : in_user));
  return copy;
}

bool node_pairs_take_two_hops(int max_ppn, std::int64_t ranks, std::int64_t block_bytes) {
  return max_ppn >= kNodePairsTwoHopsMinPpn && block_bytes <= kNodePairsTwoHopsMaxBlockBytes &&
         ranks * block_bytes <= kNodePairsTwoHopsMaxRankBytes;
}

ScheduleKind schedule_kind(AlltoallAlgorithm algorithm, const topo::Layout& layout, std::int64_t block_bytes) {
  const bool two_hops = algorithm == AlltoallAlgorithm::node_pairs &&
                        node_pairs_take_two_hops(layout.max_ppn(), layout.size(), block_bytes);
  return {algorithm, two_hops};
}

Schedule build_alltoall_schedule(AlltoallAlgorithm algorithm, const topo::Layout& layout, int rank) {
  return build_alltoall_schedule(ScheduleKind{algorithm, false}, layout, rank);
}

Schedule build_alltoall_schedule(ScheduleKind kind, const topo::Layout& layout, int rank) {
  switch (kind.algorithm) {
    case AlltoallAlgorithm::sa:
      return build_sa_schedule(layout, rank);
    case AlltoallAlgorithm::rd:
      return build_rd_schedule(layout, rank);
    case AlltoallAlgorithm::leader:
      return build_leader_schedule(layout, rank);
    case AlltoallAlgorithm::linear:
      return build_linear_schedule(layout, rank);
    case AlltoallAlgorithm::node_pairs:
      return build_node_pairs_schedule(layout, rank, kind.two_hops);
    case AlltoallAlgorithm::native:
      break;
  }
  return {};
}

}  // namespace shim::coll
