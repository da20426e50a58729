#include <algorithm>
#include <utility>

#include "collectives/alltoall_schedules.hpp"

namespace shim::coll {

namespace {

// The partners of local rank `local` of `node`: the other nodes d with
// d % ppn == local, whose pair with `node` it carries (it sends the node's
// blocks for them and receives theirs for the node). Listed from the first
// one after `node`, so that the senders do not all start at the same node.
std::vector<int> partners(const topo::Layout& layout, int node, int local) {
  std::vector<int> nodes;
  const int ppn = layout.ppn(node);
  for (int step = 1; step < layout.nodes(); ++step) {
    const int other = (node + step) % layout.nodes();
    if (other % ppn == local) nodes.push_back(other);
  }
  return nodes;
}

// Where each partner's blocks lie in stage, partners in the order of
// partners(): the node's outgoing blocks for partner d as [source
// local][destination local of d], then the incoming blocks from partner s as
// [source local of s][destination local].
struct StageMap {
  std::vector<std::pair<int, std::int64_t>> outgoing;
  std::vector<std::pair<int, std::int64_t>> incoming;
  std::int64_t blocks = 0;
};

StageMap map_stage(const topo::Layout& layout, int node, const std::vector<int>& mine) {
  StageMap map;
  const std::int64_t ppn = layout.ppn(node);
  for (int d : mine) {
    map.outgoing.emplace_back(d, map.blocks);
    map.blocks += ppn * layout.ppn(d);
  }
  for (int s : mine) {
    map.incoming.emplace_back(s, map.blocks);
    map.blocks += ppn * layout.ppn(s);
  }
  return map;
}

// The processes of each partner's node, summed over the partners local
// rank l of `node` carries, for every l.
std::vector<std::int64_t> carried_ranks(const topo::Layout& layout, int node) {
  std::vector<std::int64_t> ranks;
  for (int local = 0; local < layout.ppn(node); ++local) {
    std::int64_t sum = 0;
    for (int d : partners(layout, node, local)) sum += layout.ppn(d);
    ranks.push_back(sum);
  }
  return ranks;
}

// Step 1, within the node: every local rank gets its own node's blocks for it
// straight into its receive buffer, and, for each partner it carries, one
// block from every local rank for every rank of that partner.
IntraNodeTransfers aggregate(const topo::Layout& layout, int rank, const StageMap& stage) {
  const int node = layout.node_of(rank);
  return {[&layout, node](int peer_local) {
            std::vector<Run> runs;
            append_run(runs, {Buffer::send, layout.rank_of(node, peer_local), 1});
            for (int d : partners(layout, node, peer_local)) {
              for (int dest : layout.members(d)) append_run(runs, {Buffer::send, dest, 1});
            }
            return runs;
          },
          [&layout, node, &stage](int source_local) {
            std::vector<Run> runs;
            append_run(runs, {Buffer::recv, layout.rank_of(node, source_local), 1});
            for (const auto& [d, first] : stage.outgoing) {
              append_run(runs, {Buffer::stage, first + std::int64_t{source_local} * layout.ppn(d), layout.ppn(d)});
            }
            return runs;
          },
          [carried = carried_ranks(layout, node)](int, int to) { return 1 + carried[static_cast<std::size_t>(to)]; }};
}

// Step 2, between nodes: one message per pair of nodes and direction, from
// the local rank that carries the pair on one side to the one on the other,
// kNodePairsInFlight at a time. The message from node s to node d has step
// (d - s) mod nodes on both sides: sends go to the partners in forward
// order, receives come from them in backward order (PhaseKind::paced_exchange).
Phase exchange_pairs(const topo::Layout& layout, int rank, const StageMap& stage) {
  const int node = layout.node_of(rank);
  const std::int64_t ppn = layout.ppn(node);
  Phase phase{PhaseKind::paced_exchange, {}, {}, kNodePairsInFlight};
  for (const auto& [other, first] : stage.outgoing) {
    const int carrier = layout.rank_of(other, node % layout.ppn(other));
    phase.sends.push_back({carrier, {{Buffer::stage, first, ppn * layout.ppn(other)}}});
  }
  for (auto it = stage.incoming.rbegin(); it != stage.incoming.rend(); ++it) {
    const auto& [other, first] = *it;
    const int carrier = layout.rank_of(other, node % layout.ppn(other));
    phase.recvs.push_back({carrier, {{Buffer::stage, first, ppn * layout.ppn(other)}}});
  }
  return phase;
}

// Step 3, within the node: each local rank gets, from the local rank that
// carried each other node's pair, that node's blocks for it.
IntraNodeTransfers distribute(const topo::Layout& layout, int rank, const StageMap& stage) {
  const int node = layout.node_of(rank);
  const int ppn = layout.ppn(node);
  return {[&layout, ppn, &stage](int dest_local) {
            std::vector<Run> runs;
            for (const auto& [s, first] : stage.incoming) {
              for (int j = 0; j < layout.ppn(s); ++j) {
                append_run(runs, {Buffer::stage, first + std::int64_t{j} * ppn + dest_local, 1});
              }
            }
            return runs;
          },
          [&layout, node](int source_local) {
            std::vector<Run> runs;
            for (int s : partners(layout, node, source_local)) {
              for (int source : layout.members(s)) append_run(runs, {Buffer::recv, source, 1});
            }
            return runs;
          },
          [carried = carried_ranks(layout, node)](int from, int) { return carried[static_cast<std::size_t>(from)]; }};
}

// Appends an intra-node step, in one hop or two; returns the relay's stage
// blocks.
std::int64_t append_intra_node(Schedule& schedule, const topo::Layout& layout, int rank, bool two_hops,
                               const IntraNodeTransfers& transfers, std::int64_t relay_base) {
  if (!two_hops) {
    schedule.phases.push_back(intra_node_exchange(layout, rank, transfers.sent_to, transfers.received_from));
    return 0;
  }
  TwoHopExchange hops = intra_node_exchange_two_hops(layout, rank, transfers, relay_base);
  schedule.phases.push_back(std::move(hops.first));
  schedule.phases.push_back(std::move(hops.second));
  return hops.relay_blocks;
}

}  // namespace

Schedule build_node_pairs_schedule(const topo::Layout& layout, int rank, bool two_hops) {
  const int node = layout.node_of(rank);
  const StageMap stage = map_stage(layout, node, partners(layout, node, layout.local_rank(rank)));
  Schedule schedule;
  // The relays of steps 1 and 3 share stage beyond the pairs' blocks.
  const std::int64_t relay_first =
      append_intra_node(schedule, layout, rank, two_hops, aggregate(layout, rank, stage), stage.blocks);
  schedule.phases.push_back(exchange_pairs(layout, rank, stage));
  const std::int64_t relay_third =
      append_intra_node(schedule, layout, rank, two_hops, distribute(layout, rank, stage), stage.blocks);
  schedule.stage_blocks = stage.blocks + std::max(relay_first, relay_third);
  // Step 1 writes the node's own blocks into the receive buffer while other
  // send blocks are still to be read.
  schedule.in_place_safe = false;
  return schedule;
}

}  // namespace shim::coll
