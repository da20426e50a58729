// Broadcast trees over the ranks of a communicator. Pure: built from the
// layout, the subnet of each node (ECO) and measured costs between nodes, so
// their shape can be checked in unit tests and their traffic counted.
#pragma once

#include <vector>

#include "topology/layout.hpp"
#include "topology/subnet_partition.hpp"

namespace shim::coll {

// How many children a rank feeds in the inter-node part of a tree: between
// subnets (ECO's subnet tree; the node tree of the two-level broadcast) and
// among the nodes of one subnet.
struct BcastFanout {
  int between_subnets = 2;
  int within_subnet = 2;
  auto operator<=>(const BcastFanout&) const = default;
};

struct BcastTree {
  int root = 0;
  std::vector<int> parent;                 // -1 at the root
  std::vector<std::vector<int>> children;  // in the order the data is sent
};

// Fan-out inside a node: a binary tree from the rank that brings the data.
inline constexpr int kIntraNodeFanout = 2;

// Root -> a k-ary tree over node representatives (the root for its own node,
// local rank 0 elsewhere) -> binary trees inside each node. There are no
// subnets: k is fanout.between_subnets.
BcastTree build_two_level_tree(const topo::Layout& layout, int root, BcastFanout fanout);

// ECO (Lowekamp and Beguelin, "ECO: Efficient Collective Operations for
// Communication on Heterogeneous Networks", Section 4): a tree over subnets
// rooted at the root's subnet, each subnet entered once at the node nearest
// its parent subnet's entry; a tree over the nodes of each subnet from its
// entry; binary trees inside nodes. `subnet_of_node` numbers subnets from 0;
// `node_cost[a][b]` orders choices by measured cost (empty: node order).
BcastTree build_eco_tree(const topo::Layout& layout, const std::vector<int>& subnet_of_node,
                         const topo::CostMatrix& node_cost, int root, BcastFanout fanout);

struct BcastLinks {
  int inter_node = 0;    // tree edges between different nodes
  int inter_subnet = 0;  // ... of which between different subnets
};
BcastLinks count_links(const BcastTree& tree, const topo::Layout& layout, const std::vector<int>& subnet_of_node);

}  // namespace shim::coll
