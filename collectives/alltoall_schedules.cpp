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

Schedule build_alltoall_schedule(AlltoallAlgorithm algorithm, const topo::Layout& layout, int rank) {
  switch (algorithm) {
    case AlltoallAlgorithm::sa: return build_sa_schedule(layout, rank);
    case AlltoallAlgorithm::rd: return build_rd_schedule(layout, rank);
    case AlltoallAlgorithm::leader: return build_leader_schedule(layout, rank);
    case AlltoallAlgorithm::native: break;
  }
  return {};
}

}  // namespace shim::coll
