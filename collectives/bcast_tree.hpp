// Broadcast trees over the ranks of a communicator. Pure: built from the
// layout, the subnet of each node (ECO) and measured costs between nodes, so
// their shape can be checked in unit tests and their traffic counted.
#pragma once

#include <cstdint>
#include <vector>

#include "topology/layout.hpp"
#include "topology/subnet_partition.hpp"

namespace shim::coll {

// How many children a rank feeds in the inter-node part of an ECO tree:
// between subnets and among the nodes of one subnet.
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

// Fan-out inside a node: a binary tree from the rank that brings the data.
inline constexpr int kIntraNodeFanout = 2;

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

// Root -> a k-ary tree over node representatives (the root for its own node,
// local rank 0 elsewhere) -> binary trees inside each node.
BcastTree build_two_level_tree(const topo::Layout& layout, int root, int k);

// ECO (Lowekamp and Beguelin, "ECO: Efficient Collective Operations for
// Communication on Heterogeneous Networks", Section 4): a tree over subnets
// rooted at the root's subnet, each subnet entered once at the node nearest
// its parent subnet's entry; a tree over the nodes of each subnet from its
// entry; binary trees inside nodes. `subnet_of_node` numbers subnets from 0;
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
