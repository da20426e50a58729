#include "collectives/bcast_tree.hpp"

#include <algorithm>
#include <map>

namespace shim::coll {

namespace {

BcastTree empty_tree(int size, int root) {
  BcastTree tree;
  tree.root = root;
  tree.parent.assign(size, -1);
  tree.children.resize(size);
  return tree;
}

// order[0] already holds the data; order[i] receives from order[(i-1)/k].
void add_kary(BcastTree& tree, const std::vector<int>& order, int k) {
  for (std::size_t i = 1; i < order.size(); ++i) {
    const int from = order[(i - 1) / static_cast<std::size_t>(k)];
    tree.parent[order[i]] = from;
    tree.children[from].push_back(order[i]);
  }
}

// The rank that carries a node's part of the tree.
int representative(const topo::Layout& layout, int node, int root) {
  return layout.node_of(root) == node ? root : layout.rank_of(node, 0);
}

// The ranks of `node` split into the groups its entries feed: one group
// led by the representative, or on other nodes than the root's up to
// `entries` consecutive groups, each led by its first rank.
std::vector<std::vector<int>> entry_groups(const topo::Layout& layout, int node, int root, int entries) {
  const int rep = representative(layout, node, root);
  std::vector<int> order{rep};
  for (int rank : layout.members(node)) {
    if (rank != rep) order.push_back(rank);
  }
  const auto size = order.size();
  const auto groups = layout.node_of(root) == node ? 1 : std::clamp<std::size_t>(entries, 1, size);
  std::vector<std::vector<int>> out;
  for (std::size_t g = 0; g < groups; ++g) {
    out.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(g * size / groups),
                     order.begin() + static_cast<std::ptrdiff_t>((g + 1) * size / groups));
  }
  return out;
}

// Inside every node, from each entry to the other ranks of its group.
void add_intra_node(BcastTree& tree, const topo::Layout& layout, int root, const BcastFanout& fanout) {
  for (int node = 0; node < layout.nodes(); ++node) {
    for (const std::vector<int>& group : entry_groups(layout, node, root, fanout.entries_per_node)) {
      const bool chain = static_cast<int>(layout.ppn(node)) <= fanout.chain_nodes_up_to;
      add_kary(tree, group, chain ? 1 : fanout.within_node);
    }
  }
}

double cost_of(const topo::CostMatrix& cost, int a, int b) {
  if (cost.empty()) return 0.0;
  return a < b ? cost[a][b] : cost[b][a];
}

// `candidates` sorted by cost from `from`, ties kept in node order.
void sort_by_cost(std::vector<int>& candidates, const topo::CostMatrix& cost, int from) {
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](int a, int b) { return cost_of(cost, from, a) < cost_of(cost, from, b); });
}

}  // namespace

int two_level_fanout(int long_message_fanout, std::int64_t bytes) {
  return bytes <= kShortMessageBytes ? std::max(long_message_fanout, kShortMessageFanout) : long_message_fanout;
}

int intra_node_fanout(std::int64_t bytes) {
  return bytes <= kShortMessageBytes ? kShortIntraNodeFanout : kIntraNodeFanout;
}

int two_level_entries(int nodes, std::int64_t bytes, int send_cost_ns) {
  return nodes == 2 && bytes <= kShortMessageBytes && send_cost_ns <= kMultiEntryMaxSendCostNs ? kTwoNodeEntries : 1;
}

int chain_nodes_up_to(std::int64_t segments, int max_ppn) {
  return static_cast<int>(std::min<std::int64_t>(max_ppn, segments / kChainSegmentsPerRank + 1));
}

bool chain_between_nodes(std::int64_t segments, int nodes) {
  return segments >= kChainSegmentsPerNode && nodes - 1 <= segments / kChainSegmentsPerNode;
}

bool one_chain_through_ranks(std::int64_t segments, int nodes, int ranks) {
  return nodes >= kOneChainMinNodes && ranks <= segments / kChainSegmentsPerRank;
}

BcastTree build_two_level_tree(const topo::Layout& layout, int root, const BcastFanout& fanout) {
  BcastTree tree = empty_tree(layout.size(), root);
  std::vector<int> order{root};
  for (int node = 0; node < layout.nodes(); ++node) {
    if (node == layout.node_of(root)) continue;
    // One chain enters each node once.
    const int entries = fanout.one_chain ? 1 : fanout.entries_per_node;
    for (const std::vector<int>& group : entry_groups(layout, node, root, entries)) {
      order.push_back(group.front());
    }
  }
  if (!fanout.one_chain) {
    add_kary(tree, order, fanout.between_subnets);
    add_intra_node(tree, layout, root, fanout);
    return tree;
  }
  std::vector<int> chain;
  for (const int rep : order) {
    chain.push_back(rep);
    for (const int rank : layout.members(layout.node_of(rep))) {
      if (rank != rep) chain.push_back(rank);
    }
  }
  add_kary(tree, chain, 1);
  return tree;
}

std::vector<BcastTree> build_eco_trees(const topo::Layout& layout, const std::vector<int>& subnet_of_node,
                                       const topo::CostMatrix& node_cost, int root, BcastFanout fanout) {
  const auto between = static_cast<std::size_t>(fanout.between_subnets);
  const int root_node = layout.node_of(root);

  std::map<int, std::vector<int>> nodes_of_subnet;
  for (int node = 0; node < layout.nodes(); ++node) nodes_of_subnet[subnet_of_node[node]].push_back(node);

  // Subnets nearest the root first: they sit high in the subnet tree.
  const int root_subnet = subnet_of_node[root_node];
  std::vector<int> subnets;
  for (const auto& [subnet, nodes] : nodes_of_subnet) {
    if (subnet != root_subnet) subnets.push_back(subnet);
  }
  auto distance = [&](int subnet) {
    double best = -1;
    for (int node : nodes_of_subnet[subnet]) {
      const double c = cost_of(node_cost, root_node, node);
      if (best < 0 || c < best) best = c;
    }
    return best;
  };
  std::stable_sort(subnets.begin(), subnets.end(), [&](int a, int b) { return distance(a) < distance(b); });
  subnets.insert(subnets.begin(), root_subnet);
  const bool rotate = entries_take_turns(fanout, static_cast<int>(subnets.size()));

  // Each subnet's entry node, nearest the entry that feeds it: its parent in
  // the subnet tree, or the root's node when entries take turns.
  std::vector<int> entry(subnets.size());
  entry[0] = root_node;
  std::vector<int> order_of_entries{representative(layout, root_node, root)};
  for (std::size_t i = 1; i < subnets.size(); ++i) {
    const int feeder = rotate ? root_node : entry[(i - 1) / between];
    std::vector<int> candidates = nodes_of_subnet[subnets[i]];
    sort_by_cost(candidates, node_cost, feeder);
    entry[i] = candidates.front();
    order_of_entries.push_back(representative(layout, entry[i], root));
  }

  // The links between subnets go first in every sender's order: they are
  // the slow ones.
  std::vector<BcastTree> trees;
  const std::size_t turns = rotate ? subnets.size() - 1 : 1;
  for (std::size_t turn = 0; turn < turns; ++turn) {
    BcastTree tree = empty_tree(layout.size(), root);
    if (rotate) {
      const int relay = order_of_entries[1 + turn];
      std::vector<int> order{relay};
      for (std::size_t i = 1; i < order_of_entries.size(); ++i) {
        if (i != 1 + turn) order.push_back(order_of_entries[i]);
      }
      tree.parent[relay] = order_of_entries[0];
      tree.children[order_of_entries[0]].push_back(relay);
      add_kary(tree, order, static_cast<int>(order.size()));
    } else {
      add_kary(tree, order_of_entries, fanout.between_subnets);
    }
    for (std::size_t i = 0; i < subnets.size(); ++i) {
      std::vector<int> others;
      for (int node : nodes_of_subnet[subnets[i]]) {
        if (node != entry[i]) others.push_back(node);
      }
      sort_by_cost(others, node_cost, entry[i]);
      std::vector<int> order{representative(layout, entry[i], root)};
      for (int node : others) order.push_back(representative(layout, node, root));
      add_kary(tree, order, fanout.within_subnet);
    }
    add_intra_node(tree, layout, root, fanout);
    trees.push_back(std::move(tree));
  }
  return trees;
}

BcastLinks count_links(const BcastTree& tree, const topo::Layout& layout, const std::vector<int>& subnet_of_node) {
  BcastLinks links;
  for (std::size_t rank = 0; rank < tree.parent.size(); ++rank) {
    const int from = tree.parent[rank];
    if (from < 0 || layout.same_node(from, static_cast<int>(rank))) continue;
    ++links.inter_node;
    if (!subnet_of_node.empty() &&
        subnet_of_node[layout.node_of(from)] != subnet_of_node[layout.node_of(static_cast<int>(rank))]) {
      ++links.inter_subnet;
    }
  }
  return links;
}

}  // namespace shim::coll
