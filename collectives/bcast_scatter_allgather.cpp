#include "collectives/bcast_scatter_allgather.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>

namespace shim::coll {

namespace {

// `blocks` stage blocks from `first`, wrapping past the last block.
std::vector<Run> wrapped(std::int64_t first, std::int64_t blocks, std::int64_t total) {
  std::vector<Run> runs;
  const std::int64_t head = std::min(blocks, total - first);
  append_run(runs, {Buffer::stage, first, head});
  append_run(runs, {Buffer::stage, 0, blocks - head});
  return runs;
}

class Builder {
 public:
  Builder(const topo::Layout& layout, int root, int rank)
      : layout_(layout),
        root_(root),
        rank_(rank),
        nodes_(layout.nodes()),
        root_node_(layout.node_of(root)),
        my_node_(layout.node_of(rank)),
        my_position_((my_node_ - root_node_ + nodes_) % nodes_),
        leader_(leader_of(my_node_) == rank) {}

  Schedule build() {
    Schedule schedule;
    schedule.stage_blocks = nodes_;
    scatter(schedule);
    allgather(schedule);
    within_node(schedule);
    return schedule;
  }

 private:
  int leader_of(int node) const { return node == root_node_ ? root_ : layout_.rank_of(node, 0); }
  int leader_at(int position) const { return leader_of((root_node_ + position) % nodes_); }

  // Leader v holds blocks [v, v + 2m) before the phase of mask m when v is a
  // multiple of 2m, and hands the upper half on.
  void scatter(Schedule& schedule) const {
    for (int mask = static_cast<int>(std::bit_ceil(static_cast<unsigned>(nodes_))) / 2; mask >= 1; mask /= 2) {
      Phase& phase = schedule.phases.emplace_back();
      if (!leader_) continue;
      const int v = my_position_;
      if (v % (2 * mask) == 0 && v + mask < nodes_) {
        const int last = std::min(v + 2 * mask, nodes_);
        phase.sends.push_back({leader_at(v + mask), wrapped(v + mask, last - v - mask, nodes_)});
      } else if (v % (2 * mask) == mask) {
        const int last = std::min(v + mask, nodes_);
        phase.recvs.push_back({leader_at(v - mask), wrapped(v, last - v, nodes_)});
      }
    }
  }

  // Before the phase of distance d each leader holds min(d, nodes) blocks
  // from its own: it sends min(d, nodes - d) of them to the leader d
  // behind and gets as many, from v + d on, from the leader d ahead.
  void allgather(Schedule& schedule) const {
    for (int distance = 1; distance < nodes_; distance *= 2) {
      Phase& phase = schedule.phases.emplace_back();
      if (!leader_) continue;
      const int v = my_position_;
      const int blocks = std::min(distance, nodes_ - distance);
      phase.recvs.push_back({leader_at((v + distance) % nodes_), wrapped((v + distance) % nodes_, blocks, nodes_)});
      phase.sends.push_back({leader_at((v - distance + nodes_) % nodes_), wrapped(v, blocks, nodes_)});
    }
  }

  // Positions inside a node count from its leader; the holders double
  // each phase.
  void within_node(Schedule& schedule) const {
    const int ppn = layout_.ppn(my_node_);
    const int leader_local = layout_.local_rank(leader_of(my_node_));
    const int p = (layout_.local_rank(rank_) - leader_local + ppn) % ppn;
    const auto rank_at = [&](int position) { return layout_.rank_of(my_node_, (position + leader_local) % ppn); };
    for (int mask = 1; mask < layout_.max_ppn(); mask *= 2) {
      Phase& phase = schedule.phases.emplace_back();
      if (p < mask && p + mask < ppn) phase.sends.push_back({rank_at(p + mask), wrapped(0, nodes_, nodes_)});
      if (p >= mask && p < 2 * mask) phase.recvs.push_back({rank_at(p - mask), wrapped(0, nodes_, nodes_)});
    }
  }

  const topo::Layout& layout_;
  int root_, rank_, nodes_, root_node_, my_node_, my_position_;
  bool leader_;
};

}  // namespace

Schedule build_scatter_allgather_bcast(const topo::Layout& layout, int root, int rank) {
  return Builder(layout, root, rank).build();
}

}  // namespace shim::coll
