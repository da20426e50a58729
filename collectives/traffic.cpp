#include "collectives/traffic.hpp"

namespace shim::coll {

Traffic& Traffic::operator+=(const Traffic& other) {
  inter_messages += other.inter_messages;
  inter_blocks += other.inter_blocks;
  intra_messages += other.intra_messages;
  intra_blocks += other.intra_blocks;
  return *this;
}

namespace {

void count_message(Traffic& traffic, const topo::Layout& layout, int rank, int peer, std::int64_t blocks) {
  if (peer == rank || blocks == 0) return;
  if (layout.same_node(rank, peer)) {
    ++traffic.intra_messages;
    traffic.intra_blocks += blocks;
  } else {
    ++traffic.inter_messages;
    traffic.inter_blocks += blocks;
  }
}

}  // namespace

Traffic schedule_traffic(const Schedule& schedule, const topo::Layout& layout, int rank) {
  Traffic traffic;
  const std::vector<int> rail = layout.rail(layout.local_rank(rank));
  for (const Phase& phase : schedule.phases) {
    for (const Transfer& send : phase.sends) {
      const int peer = phase.kind == PhaseKind::rail_alltoall ? rail[send.peer] : send.peer;
      count_message(traffic, layout, rank, peer, total_blocks(send.runs));
    }
  }
  return traffic;
}

Traffic flat_traffic(const topo::Layout& layout, int rank) {
  Traffic traffic;
  for (int peer = 0; peer < layout.size(); ++peer) count_message(traffic, layout, rank, peer, 1);
  return traffic;
}

}  // namespace shim::coll
