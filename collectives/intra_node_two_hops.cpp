#include "collectives/alltoall_schedules.hpp"

namespace shim::coll {

namespace {

// The node's local ranks in rows of `width` (the last row may be short).
// Block (s -> t) passes through hub(s, t): the rank in s's row and t's
// column, or, where s's row is the short last one and lacks that column,
// the rank in t's row and s's column (t's row is then a full one). So the
// first hop stays in a row or a column and the second in the other.
struct Grid {
  int ranks = 0;
  int width = 1;
  int hub(int s, int t) const {
    const int in_row_of_s = (s / width) * width + t % width;
    return in_row_of_s < ranks ? in_row_of_s : (t / width) * width + s % width;
  }
};

Grid grid_for(int ranks) {
  Grid grid{ranks, 1};
  while (grid.width * grid.width < ranks) ++grid.width;
  return grid;
}

// Where a hub keeps the blocks it relays: (s -> t) for every s and t that
// pass through it and are not it, ordered by s, then t, so that each first
// hop's message lands in one stretch.
class RelayMap {
 public:
  RelayMap(const Grid& grid, int hub, const std::function<std::int64_t(int, int)>& blocks, std::int64_t base)
      : ranks_(grid.ranks), first_(static_cast<std::size_t>(grid.ranks * grid.ranks), -1) {
    std::int64_t next = base;
    for (int s = 0; s < ranks_; ++s) {
      for (int t = 0; t < ranks_; ++t) {
        if (s == hub || t == hub || s == t || grid.hub(s, t) != hub) continue;
        first_[index(s, t)] = next;
        next += blocks(s, t);
      }
    }
    blocks_ = next - base;
  }
  std::int64_t first(int s, int t) const { return first_[index(s, t)]; }
  std::int64_t blocks() const { return blocks_; }

 private:
  std::size_t index(int s, int t) const { return static_cast<std::size_t>(s * ranks_ + t); }
  int ranks_;
  std::vector<std::int64_t> first_;
  std::int64_t blocks_ = 0;
};

void append_runs(std::vector<Run>& runs, const std::vector<Run>& more) {
  for (const Run& run : more) append_run(runs, run);
}

// Peers from the one after `me` round the node, so no rank is everyone's first.
template <typename Fn>
void for_each_peer(int me, int ranks, Fn&& fn) {
  for (int step = 1; step < ranks; ++step) fn((me + step) % ranks);
}

}  // namespace

int two_hop_messages(int ppn) {
  const Grid grid = grid_for(ppn);
  const int rows = (ppn + grid.width - 1) / grid.width;
  return (grid.width - 1) + (rows - 1);
}

TwoHopExchange intra_node_exchange_two_hops(const topo::Layout& layout, int rank, const IntraNodeTransfers& transfers,
                                            std::int64_t relay_base) {
  const int node = layout.node_of(rank);
  const int me = layout.local_rank(rank);
  const Grid grid = grid_for(layout.ppn(node));
  const RelayMap relay(grid, me, transfers.blocks, relay_base);
  // Block run (s -> t) where the calling rank holds it: its own runs when it
  // is an end of the transfer (the receiving end in the first hop, the
  // sending end in the second), else the stretch it relays.
  auto append_held = [&](std::vector<Run>& runs, int s, int t) {
    if (t == me) {
      append_runs(runs, transfers.received_from(s));
    } else if (s == me) {
      append_runs(runs, transfers.sent_to(t));
    } else if (const std::int64_t blocks = transfers.blocks(s, t); blocks > 0) {
      append_run(runs, {Buffer::stage, relay.first(s, t), blocks});
    }
  };
  auto add = [&](Phase& phase, bool send, int peer_local, std::vector<Run> runs) {
    if (runs.empty()) return;
    (send ? phase.sends : phase.recvs).push_back({layout.rank_of(node, peer_local), std::move(runs)});
  };

  TwoHopExchange out;
  // First hop: to each hub, the blocks for every rank reached through it (its
  // own arrive for good); the calling rank's blocks for itself are copied.
  add(out.first, true, me, transfers.sent_to(me));
  add(out.first, false, me, transfers.received_from(me));
  for_each_peer(me, grid.ranks, [&](int hub) {
    std::vector<Run> runs;
    for (int t = 0; t < grid.ranks; ++t) {
      if (t != me && grid.hub(me, t) == hub) append_runs(runs, transfers.sent_to(t));
    }
    add(out.first, true, hub, std::move(runs));
  });
  for_each_peer(me, grid.ranks, [&](int source) {
    std::vector<Run> runs;
    for (int t = 0; t < grid.ranks; ++t) {
      if (t == source || grid.hub(source, t) != me) continue;
      append_held(runs, source, t);
    }
    add(out.first, false, source, std::move(runs));
  });

  // Second hop: from each hub to every rank it serves, the blocks of each
  // source in source order, the hub's own among them.
  for_each_peer(me, grid.ranks, [&](int t) {
    std::vector<Run> runs;
    for (int s = 0; s < grid.ranks; ++s) {
      if (s == t || grid.hub(s, t) != me) continue;
      append_held(runs, s, t);
    }
    add(out.second, true, t, std::move(runs));
  });
  for_each_peer(me, grid.ranks, [&](int hub) {
    std::vector<Run> runs;
    for (int s = 0; s < grid.ranks; ++s) {
      if (s != me && grid.hub(s, me) == hub) append_runs(runs, transfers.received_from(s));
    }
    add(out.second, false, hub, std::move(runs));
  });
  out.relay_blocks = relay.blocks();
  return out;
}

}  // namespace shim::coll
