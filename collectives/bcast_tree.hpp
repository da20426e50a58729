// Broadcast trees over the ranks of a communicator. Pure: built from the
// layout, the subnet of each node (ECO) and measured costs between nodes, so
// their shape can be checked in unit tests and their traffic counted.
#pragma once

#include <cstdint>
#include <vector>

#include "topology/layout.hpp"
#include "topology/subnet_partition.hpp"

namespace shim::coll {

// Fan-out inside a node for long messages: a binary tree from the rank that
// brings the data, so no rank copies a long message more than twice.
inline constexpr int kIntraNodeFanout = 2;

// How many children a rank feeds in the inter-node part of an ECO tree:
// between subnets and among the nodes of one subnet; and inside a node.
struct BcastFanout {
  int between_subnets = 2;
  int within_subnet = 2;
  // Between four or more subnets, instead of a tree: the entries take turns.
  // Segment s goes from the root to the entry of subnet 1 + s mod (subnets -
  // 1), which passes it on to every other entry. Every entry's link still
  // carries the message once inbound and at most once outbound, as in a chain,
  // but each segment crosses at most two boundaries instead of subnets - 1
  // (with three subnets, two either way: one tree, no turns).
  bool rotate_entries = false;
  int within_node = kIntraNodeFanout;  // from the rank that brings the data to the node's others
  int chain_nodes_up_to = 0;           // nodes of at most this many ranks pass the data along a chain
  bool one_chain = false;              // two-level: every rank in one chain, node after node
  int entries_per_node = 1;            // two-level: ranks of each other node the data enters at
  auto operator<=>(const BcastFanout&) const = default;
};

// Between three subnets a chain is two crossings deep already, and turns
// only add a second flow into each entry: on the emulated 3-subnet network
// (tests/vcluster/three_subnets.spec) 16 KiB took 1.1x the chain's time.
inline constexpr int kMinSubnetsForTurns = 4;

// Whether the subnet entries of an ECO tree over `subnets` take turns.
constexpr bool entries_take_turns(const BcastFanout& fanout, int subnets) {
  return fanout.rotate_entries && subnets >= kMinSubnetsForTurns;
}

struct BcastTree {
  int root = 0;
  std::vector<int> parent;                 // -1 at the root
  std::vector<std::vector<int>> children;  // in the order the data is sent
};

// A short message is all latency: a node representative can send it to
// several nodes in the time it takes to arrive at one, so the two-level
// tree over nodes is flatter for messages up to kShortMessageBytes (scale
// model, onload platform, 1 B-4 KiB, fan-out 8 against 2: 0.61-0.80x the
// time at 4x4 nodes x ranks, 0.50-0.86x at 8x8, 0.48-0.89x at 64x16;
// docs/scale/small.md).
inline constexpr std::int64_t kShortMessageBytes = 4096;
inline constexpr int kShortMessageFanout = 8;

// The fan-out between nodes of a two-level tree for a message of `bytes`,
// given the fan-out for longer ones.
int two_level_fanout(int long_message_fanout, std::int64_t bytes);

// The same holds inside a node, where a short message's one-way time is 3-4
// times its sender's cost (docs/scale/measurements.json: 0.12 against 0.03
// us at 8 B): up to kShortMessageBytes the tree inside a node fans out
// kShortIntraNodeFanout wide, as Open MPI's selection (a radix-4 k-nomial
// tree at 16-127 processes) does. Scale model, onload, two-level at 1 B / 4
// KiB, fan-out 4 / 8 / 2: 4x4 0.866 / 0.866 / 0.933 and 2.625 / 2.625 /
// 2.784 us (Open MPI 0.866, 3.475); 4x16 1.034 / 1.084 / 1.168 and 3.413 /
// 3.727 / 3.732 (Open MPI 1.034, 3.412); 64x16 1.932 / 1.982 / 2.066 and
// 8.446 / 8.759 / 8.764; 8x8 1.084 / 1.067 / 1.151 and 4.414 / 4.571 /
// 4.573. Beyond, the copies cost more than the latency and a wide fan-out
// loses (fan-out 8 against 2 at 16 KiB / 64 KiB: 4x16 12.3 / 31.8 against
// 11.4 / 20.5 us, 8x8 13.6 / 33.1 against 13.0 / 23.7).
inline constexpr int kShortIntraNodeFanout = 4;
int intra_node_fanout(std::int64_t bytes);

// On two nodes the root sends one message between them and has fan-out to
// spare: a short message enters the other node at kTwoNodeEntries ranks,
// each feeding its half, which saves a level of the tree inside that node
// for one more send at the root. That pays only where such a send costs
// the root less than the level saves (a one-way time through shared memory,
// 0.117 us here: docs/scale/measurements.json), hence at most
// kMultiEntryMaxSendCostNs per send to another node. Scale model, 1 B / 1
// KiB / 4 KiB, entries 1 against 2 (Open MPI's selection): ib-onload 2 x 8
// 0.933 / 1.304 / 2.442 us against 0.840 / 1.182 / 2.296 (0.866 / 1.241 /
// 2.796), 2 x 4 0.815 / 1.100 / 1.967 against 0.790 / 1.066 / 1.981, 2 x 16
// 0.983 / 1.420 / 2.756 against 0.958 / 1.386 / 2.770; ib-offload 2 x 8
// 0.926 / 1.450 / 2.440 against 0.834 / 1.304 / 2.295; eth-25g 2 x 8 (6.4 us
// per send) 6.79 / 9.19 / 4.87 against 13.06 / 17.02 / 6.45. From three
// nodes the extra sends delay the other nodes' entries (3 x 8 at 4 KiB 2.770
// against 2.952; 4 x 4 0.866 / 1.266 / 2.625 against 0.891 / 1.399 /
// 3.297).
inline constexpr int kTwoNodeEntries = 2;
inline constexpr int kMultiEntryMaxSendCostNs = 100;
// Ranks of each other node a two-level tree enters at.
int two_level_entries(int nodes, std::int64_t bytes, int send_cost_ns);

// A message of many segments goes down a chain inside a node: every rank
// copies each segment once, where a binary tree's inner ranks copy it twice,
// and the chain fills up in (ranks - 1) segments, which a long enough
// message hides. Nodes of up to chain_nodes_up_to(segments, max_ppn) ranks
// take the chain: those where the message has at least
// kChainSegmentsPerRank segments per rank after the first (clamped to
// max_ppn, so that a communicator caches few distinct trees).
inline constexpr std::int64_t kChainSegmentsPerRank = 4;
int chain_nodes_up_to(std::int64_t segments, int max_ppn);

// A message of many segments on few nodes also goes down a chain between
// nodes: a representative sends each segment once instead of k times, and
// the chain fills up in (nodes - 1) segments. Nodes are chained when the
// message has at least kChainSegmentsPerNode segments, and as many per node
// after the first. Scale model, onload platform, two-level trees in 8 KiB segments,
// chain against binary between nodes at 256 KiB / 1 MiB: 4x4 48.1 / 164.5
// against 49.6 / 175.6 us, 8x1 45.5 / 137.7 against 49.5 / 178.7, 8x8 62.2 /
// 178.5 against 63.1 / 207.2, 16x4 74.6 / 191.0 against 60.7 / 204.9,
// 16x16 84.5 / 206.6 against 70.9 / 220.5, 32x8 115.2 / 231.6 against 68.8
// / 212.9; at 64 KiB (8 segments) the chain loses from 4 nodes.
inline constexpr std::int64_t kChainSegmentsPerNode = 8;
bool chain_between_nodes(std::int64_t segments, int nodes);

// With few ranks in all, one chain through every rank, node after node,
// crossing each node boundary once: every rank then sends each segment
// once, where a representative of the two-level chain sends it twice (to
// the next node and into its own). It pays on three or more nodes when the
// message has kChainSegmentsPerRank segments per rank: scale model as
// above, 256 KiB / 1 MiB, one chain against two-level chains: 4x2 41.5 /
// 133.7 against 45.5 / 161.9 us (Open MPI's selection, its pipelined chain
// over all ranks, 40.4 / 128.9), 4x4 - / 143.5 against - / 164.5, 4x8 - /
// 164.9 against - / 169.7, 8x4 - / 168.3 against - / 173.3, 16x2 - / 175.9
// against - / 188.4; on two nodes the two-level tree's halves run side by
// side and the one chain loses (2x4 39.2 / 129.9 against 35.4 / 126.1, 2x16
// - / 161.2 against - / 141.7), as it does with more ranks per segment
// (4x4 at 256 KiB 51.8 against 48.1; 8x8 at 1 MiB 210.3 against 178.5).
inline constexpr int kOneChainMinNodes = 3;
bool one_chain_through_ranks(std::int64_t segments, int nodes, int ranks);

// Root -> a k-ary tree over node representatives (the root for its own node,
// local rank 0 elsewhere) -> a fanout.within_node-ary tree or a chain inside
// each node; fanout.between_subnets is the fan-out over nodes. With
// fanout.one_chain: one chain from the root through its node's other ranks,
// then through each other node from its representative.
BcastTree build_two_level_tree(const topo::Layout& layout, int root, const BcastFanout& fanout);

// ECO (Lowekamp and Beguelin, "ECO: Efficient Collective Operations for
// Communication on Heterogeneous Networks", Section 4): a tree over subnets
// rooted at the root's subnet, each subnet entered once at the node nearest
// its parent subnet's entry; a tree over the nodes of each subnet from its
// entry; fanout.within_node-ary trees inside nodes. `subnet_of_node` numbers subnets from 0;
// `node_cost[a][b]` orders choices by measured cost (empty: node order).
// One tree, or with fanout.rotate_entries and four or more subnets one per
// entry that takes a turn: segment s of a message travels down tree
// s mod size (bcast_pipeline).
std::vector<BcastTree> build_eco_trees(const topo::Layout& layout, const std::vector<int>& subnet_of_node,
                                       const topo::CostMatrix& node_cost, int root, BcastFanout fanout);

struct BcastLinks {
  int inter_node = 0;    // tree edges between different nodes
  int inter_subnet = 0;  // ... of which between different subnets
};
BcastLinks count_links(const BcastTree& tree, const topo::Layout& layout, const std::vector<int>& subnet_of_node);

}  // namespace shim::coll
