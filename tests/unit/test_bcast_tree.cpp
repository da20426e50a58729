#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

#include "collectives/bcast_tree.hpp"
#include "tests/support/layouts.hpp"

using shim::coll::BcastTree;
using shim::test::blocked;
using shim::test::from;
using shim::topo::Layout;

namespace {

// Edges from the root to the deepest rank.
int tree_depth(const BcastTree& tree) {
  int deepest = 0;
  for (std::size_t rank = 0; rank < tree.parent.size(); ++rank) {
    int depth = 0;
    for (int r = static_cast<int>(rank); tree.parent[r] >= 0; r = tree.parent[r]) ++depth;
    deepest = std::max(deepest, depth);
  }
  return deepest;
}

// Depth of a k-ary tree over n members (k == 1: a chain): the bound the
// builders promise.
int kary_depth(int members, int k) {
  int depth = 0;
  for (long long reached = 1, level = 1; reached < members; ++depth) {
    level *= k;
    reached += level;
  }
  return depth;
}

}  // namespace

namespace {

// ECO without turns at the entries: one tree.
BcastTree eco_tree(const Layout& layout, const std::vector<int>& subnet, const shim::topo::CostMatrix& cost, int root,
                   shim::coll::BcastFanout fanout) {
  std::vector<BcastTree> trees = shim::coll::build_eco_trees(layout, subnet, cost, root, fanout);
  REQUIRE(trees.size() == 1);
  return trees.front();
}

// Every rank but the root has exactly one parent, is its parent's child once,
// and is reachable from the root: a spanning tree rooted at `root`.
void check_spanning(const BcastTree& tree, int size, int root) {
  REQUIRE(static_cast<int>(tree.parent.size()) == size);
  CHECK(tree.root == root);
  CHECK(tree.parent[root] == -1);
  std::vector<int> times_received(size, 0);
  for (int rank = 0; rank < size; ++rank) {
    for (int child : tree.children[rank]) {
      ++times_received[child];
      CHECK(tree.parent[child] == rank);
    }
  }
  std::vector<int> reached(size, 0);
  std::vector<int> frontier{root};
  reached[root] = 1;
  while (!frontier.empty()) {
    const int r = frontier.back();
    frontier.pop_back();
    for (int child : tree.children[r]) {
      reached[child] += 1;
      frontier.push_back(child);
    }
  }
  for (int rank = 0; rank < size; ++rank) {
    INFO("rank " << rank);
    CHECK(reached[rank] == 1);
    CHECK(times_received[rank] == (rank == root ? 0 : 1));
  }
}

// A two-level tree's fan-outs: k over nodes, `within` inside them, chains
// in nodes of up to `chain` ranks.
shim::coll::BcastFanout two_level(int k, int within = shim::coll::kIntraNodeFanout, int chain = 0) {
  return {k, k, false, within, chain};
}

}  // namespace

TEST_CASE("k-ary depth", "[bcast]") {
  CHECK(kary_depth(1, 2) == 0);
  CHECK(kary_depth(2, 2) == 1);
  CHECK(kary_depth(3, 2) == 1);
  CHECK(kary_depth(4, 2) == 2);
  CHECK(kary_depth(7, 2) == 2);
  CHECK(kary_depth(8, 2) == 3);
  CHECK(kary_depth(5, 1) == 4);
  CHECK(kary_depth(13, 3) == 2);
}

TEST_CASE("two-level trees span every rank from every root, within the depth bound", "[bcast]") {
  const std::vector<Layout> layouts = {blocked(1, 1),
                                       blocked(1, 5),
                                       blocked(4, 1),
                                       blocked(3, 4),
                                       from({0, 0, 0, 1, 1, 1, 2}),
                                       from({0, 1, 0, 1, 0, 1}),
                                       from({2, 2, 1, 0, 0, 0, 0})};
  for (const Layout& layout : layouts) {
    for (int k = 1; k <= 3; ++k) {
      for (int entries = 1; entries <= 3; ++entries) {
        for (int root = 0; root < layout.size(); ++root) {
          const int within = 1 + root % 3;
          INFO(layout.describe() << ", k " << k << ", within " << within << ", entries " << entries << ", root "
                                 << root);
          shim::coll::BcastFanout fanout = two_level(k, within);
          fanout.entries_per_node = entries;
          const BcastTree tree = shim::coll::build_two_level_tree(layout, root, fanout);
          check_spanning(tree, layout.size(), root);
          // Every node but the root's is entered at up to `entries` ranks
          // (as many as it has at most); where the root feeds every entry,
          // each by a message from another node, otherwise an entry may feed
          // the next one of its own node.
          int into_nodes = 0;
          for (int node = 0; node < layout.nodes(); ++node) {
            if (node != layout.node_of(root)) into_nodes += std::min(entries, layout.ppn(node));
          }
          const int bound = kary_depth(1 + into_nodes, k) + kary_depth(layout.max_ppn(), within);
          CHECK(tree_depth(tree) <= bound);
          const int inter_node = shim::coll::count_links(tree, layout, {}).inter_node;
          if (k >= into_nodes) CHECK(inter_node == into_nodes);
          CHECK(inter_node >= layout.nodes() - 1);
          CHECK(inter_node <= into_nodes);
        }
      }
    }
  }
}

TEST_CASE("ECO trees cross each subnet boundary once and respect the depth bound", "[bcast]") {
  // 6 nodes x 2 ranks; nodes alternate over 3 subnets as on the test network.
  const Layout layout = blocked(6, 2);
  const std::vector<int> subnet = {0, 1, 2, 0, 1, 2};
  shim::topo::CostMatrix cost(6, std::vector<double>(6, 0.0));
  for (int a = 0; a < 6; ++a) {
    for (int b = 0; b < 6; ++b) cost[a][b] = a == b ? 0 : subnet[a] == subnet[b] ? 1.0 : 10.0 + a + b;
  }
  for (int between = 1; between <= 3; ++between) {
    for (int within = 1; within <= 3; ++within) {
      for (int root = 0; root < layout.size(); ++root) {
        INFO("fan-out " << between << " between subnets, " << within << " within, root " << root);
        const BcastTree tree = eco_tree(layout, subnet, cost, root, {between, within});
        check_spanning(tree, layout.size(), root);
        const auto links = shim::coll::count_links(tree, layout, subnet);
        CHECK(links.inter_subnet == 2);  // subnets - 1: the minimum
        CHECK(links.inter_node == 5);
        const int bound = kary_depth(3, between) + kary_depth(2, within) + kary_depth(2, shim::coll::kIntraNodeFanout);
        CHECK(tree_depth(tree) <= bound);
      }
    }
  }
}

TEST_CASE("ECO's fan-outs shape the subnet tree and each subnet's tree apart", "[bcast]") {
  // 4 subnets of 4 single-rank nodes; node n in subnet n % 4, all subnet
  // pairs equally far.
  const Layout layout = blocked(16, 1);
  std::vector<int> subnet(16);
  for (int node = 0; node < 16; ++node) subnet[node] = node % 4;
  const BcastTree chain_of_binary_trees = eco_tree(layout, subnet, {}, 0, {1, 2});
  check_spanning(chain_of_binary_trees, 16, 0);
  // Entries 0 -> 1 -> 2 -> 3 in a chain; inside subnet 0, node 0 feeds 4 and
  // 8, and 4 feeds 12.
  CHECK(chain_of_binary_trees.parent[1] == 0);
  CHECK(chain_of_binary_trees.parent[2] == 1);
  CHECK(chain_of_binary_trees.parent[3] == 2);
  CHECK(chain_of_binary_trees.parent[4] == 0);
  CHECK(chain_of_binary_trees.parent[8] == 0);
  CHECK(chain_of_binary_trees.parent[12] == 4);
  CHECK(tree_depth(chain_of_binary_trees) == 3 + 2);
  const BcastTree star_of_chains = eco_tree(layout, subnet, {}, 0, {3, 1});
  check_spanning(star_of_chains, 16, 0);
  for (int entry : {1, 2, 3}) CHECK(star_of_chains.parent[entry] == 0);
  CHECK(star_of_chains.parent[8] == 4);
  CHECK(star_of_chains.parent[12] == 8);
  CHECK(tree_depth(star_of_chains) == 1 + 3);
}

TEST_CASE("ECO's subnet entries take turns: one tree per turn, two crossings deep, each link loaded once", "[bcast]") {
  // 4 subnets of 3 nodes x 2 ranks; node n in subnet n % 4.
  const Layout layout = blocked(12, 2);
  std::vector<int> subnet(12);
  for (int node = 0; node < 12; ++node) subnet[node] = node % 4;
  for (int root = 0; root < layout.size(); ++root) {
    INFO("root " << root);
    const std::vector<BcastTree> trees = shim::coll::build_eco_trees(layout, subnet, {}, root, {1, 2, true});
    REQUIRE(trees.size() == 3);  // subnets - 1 turns
    // Per subnet: crossings into it and out of it, over all turns.
    std::vector<int> into(4, 0);
    std::vector<int> out_of(4, 0);
    std::vector<int> relays;
    for (const BcastTree& tree : trees) {
      check_spanning(tree, layout.size(), root);
      CHECK(shim::coll::count_links(tree, layout, subnet).inter_subnet == 3);
      int relay = -1;
      for (int rank = 0; rank < layout.size(); ++rank) {
        const int from = tree.parent[rank];
        if (from < 0) continue;
        const int a = subnet[layout.node_of(from)];
        const int b = subnet[layout.node_of(rank)];
        if (a == b) continue;
        ++out_of[a];
        ++into[b];
        if (from == root) relay = rank;
      }
      REQUIRE(relay >= 0);
      relays.push_back(relay);
      // The root feeds one entry, which feeds the other two.
      CHECK(tree.children[relay].size() >= 2);
      // Subnets first, then a binary tree of 3 nodes, then of 2 ranks.
      CHECK(tree_depth(tree) <= 2 + 1 + 1);
    }
    // Each turn has a different relay; every subnet but the root's is entered
    // once per turn, and each sends at most once per turn on average.
    std::sort(relays.begin(), relays.end());
    CHECK(std::unique(relays.begin(), relays.end()) == relays.end());
    const int root_subnet = subnet[layout.node_of(root)];
    for (int s = 0; s < 4; ++s) {
      CHECK(into[s] == (s == root_subnet ? 0 : 3));
      CHECK(out_of[s] == (s == root_subnet ? 3 : 2));
    }
  }
}

TEST_CASE("ECO's entries take no turns between two or three subnets: the chain is as short", "[bcast]") {
  for (const int subnets : {2, 3}) {
    INFO(subnets << " subnets");
    const Layout layout = blocked(6, 2);
    std::vector<int> subnet(6);
    for (int node = 0; node < 6; ++node) subnet[node] = node % subnets;
    const std::vector<BcastTree> trees = shim::coll::build_eco_trees(layout, subnet, {}, 3, {1, 2, true});
    REQUIRE(trees.size() == 1);
    check_spanning(trees.front(), layout.size(), 3);
    CHECK(shim::coll::count_links(trees.front(), layout, subnet).inter_subnet == subnets - 1);
  }
}

TEST_CASE("ECO enters a subnet at the node nearest the sender", "[bcast]") {
  // Nodes 0,1 in subnet 0; 2,3 in subnet 1, where node 3 is far cheaper from
  // node 0 than node 2 is.
  const Layout layout = blocked(4, 1);
  const std::vector<int> subnet = {0, 0, 1, 1};
  const shim::topo::CostMatrix cost = {{0, 1, 9, 5}, {1, 0, 9, 9}, {9, 9, 0, 1}, {5, 9, 1, 0}};
  const BcastTree tree = eco_tree(layout, subnet, cost, 0, {2, 2});
  CHECK(tree.parent[3] == 0);
  CHECK(tree.parent[2] == 3);
  CHECK(tree.parent[1] == 0);
}

TEST_CASE("without a profile's costs, ECO falls back to node order", "[bcast]") {
  const Layout layout = from({0, 0, 1, 1, 2, 2, 3, 3});
  const std::vector<int> subnet = {0, 1, 0, 1};
  for (int root = 0; root < layout.size(); ++root) {
    const BcastTree tree = eco_tree(layout, subnet, {}, root, {2, 2});
    check_spanning(tree, layout.size(), root);
    CHECK(shim::coll::count_links(tree, layout, subnet).inter_subnet == 1);
  }
}

TEST_CASE("two-level trees fan out wider for short messages", "[bcast]") {
  using shim::coll::kShortMessageBytes;
  using shim::coll::kShortMessageFanout;
  using shim::coll::two_level_fanout;
  CHECK(two_level_fanout(2, 1) == kShortMessageFanout);
  CHECK(two_level_fanout(2, kShortMessageBytes) == kShortMessageFanout);
  CHECK(two_level_fanout(2, kShortMessageBytes + 1) == 2);
  CHECK(two_level_fanout(1, 1 << 20) == 1);
  // A wider fan-out asked for stays.
  CHECK(two_level_fanout(16, 1) == 16);
  // Flat over four nodes: every representative straight from the root.
  const Layout layout = blocked(4, 4);
  const BcastTree tree = shim::coll::build_two_level_tree(layout, 0, two_level(two_level_fanout(2, 8)));
  check_spanning(tree, layout.size(), 0);
  for (int node = 1; node < 4; ++node) CHECK(tree.parent[layout.rank_of(node, 0)] == 0);
}

TEST_CASE("on two nodes, a short message enters the other node at two ranks where sends are cheap", "[bcast]") {
  using shim::coll::kMultiEntryMaxSendCostNs;
  using shim::coll::kShortMessageBytes;
  using shim::coll::two_level_entries;
  CHECK(two_level_entries(2, 1, 25) == shim::coll::kTwoNodeEntries);
  CHECK(two_level_entries(2, kShortMessageBytes, kMultiEntryMaxSendCostNs) == shim::coll::kTwoNodeEntries);
  CHECK(two_level_entries(2, kShortMessageBytes + 1, 25) == 1);
  CHECK(two_level_entries(2, 1, kMultiEntryMaxSendCostNs + 1) == 1);
  CHECK(two_level_entries(3, 1, 25) == 1);
  CHECK(two_level_entries(1, 1, 25) == 1);
  // 2 x 8, short message: the root's node as before; the other node
  // entered at its local ranks 0 and 4, each feeding its half in one
  // round of a 4-ary tree.
  const Layout layout = blocked(2, 8);
  for (const int root : {0, 5, 11}) {
    INFO("root " << root);
    shim::coll::BcastFanout fanout = two_level(8, shim::coll::kShortIntraNodeFanout);
    fanout.entries_per_node = two_level_entries(2, 8, 25);
    const BcastTree tree = shim::coll::build_two_level_tree(layout, root, fanout);
    check_spanning(tree, layout.size(), root);
    const int other = 1 - layout.node_of(root);
    const int first = layout.rank_of(other, 0);
    const int second = layout.rank_of(other, 4);
    CHECK(tree.parent[first] == root);
    CHECK(tree.parent[second] == root);
    for (int local = 1; local < 8; ++local) {
      if (local == 4) continue;
      CHECK(tree.parent[layout.rank_of(other, local)] == (local < 4 ? first : second));
    }
    CHECK(shim::coll::count_links(tree, layout, {}).inter_node == 2);
  }
}

TEST_CASE("inside a node, short messages fan out wide and long ones go down a binary tree", "[bcast]") {
  using shim::coll::intra_node_fanout;
  using shim::coll::kShortMessageBytes;
  CHECK(intra_node_fanout(0) == shim::coll::kShortIntraNodeFanout);
  CHECK(intra_node_fanout(kShortMessageBytes) == shim::coll::kShortIntraNodeFanout);
  CHECK(intra_node_fanout(kShortMessageBytes + 1) == shim::coll::kIntraNodeFanout);
  const Layout layout = blocked(2, 5);
  const BcastTree wide = shim::coll::build_two_level_tree(layout, 0, two_level(2, intra_node_fanout(8)));
  const BcastTree binary = shim::coll::build_two_level_tree(layout, 0, two_level(2, intra_node_fanout(1 << 20)));
  check_spanning(wide, layout.size(), 0);
  check_spanning(binary, layout.size(), 0);
  // The four other ranks of node 1 straight from its representative, or not.
  for (int local = 1; local < 5; ++local) {
    CHECK(wide.parent[layout.rank_of(1, local)] == layout.rank_of(1, 0));
  }
  CHECK(binary.parent[layout.rank_of(1, 4)] != layout.rank_of(1, 0));
  CHECK(tree_depth(wide) == 2);
  CHECK(tree_depth(binary) == 3);
}

TEST_CASE("inside a node, a message of many segments goes down a chain", "[bcast]") {
  using shim::coll::chain_nodes_up_to;
  using shim::coll::kChainSegmentsPerRank;
  // A node of n ranks chains once the message has kChainSegmentsPerRank x (n - 1) segments.
  CHECK(chain_nodes_up_to(1, 16) == 1);
  CHECK(chain_nodes_up_to(kChainSegmentsPerRank * 3 - 1, 16) == 3);
  CHECK(chain_nodes_up_to(kChainSegmentsPerRank * 3, 16) == 4);
  CHECK(chain_nodes_up_to(1 << 20, 16) == 16);
  // Uneven nodes: the 4-rank node chains, the 6-rank one keeps its tree.
  const Layout layout = from({0, 0, 0, 0, 0, 0, 1, 1, 1, 1});
  const BcastTree tree = shim::coll::build_two_level_tree(layout, 0, two_level(2, 2, 4));
  check_spanning(tree, layout.size(), 0);
  for (int local = 1; local < 4; ++local) {
    CHECK(tree.parent[layout.rank_of(1, local)] == layout.rank_of(1, local - 1));
  }
  CHECK(tree.children[0].size() == 3);  // node 1's representative, then 2 local ranks
  for (const Layout& even : {blocked(3, 5), blocked(1, 7)}) {
    for (int root = 0; root < even.size(); ++root) {
      const BcastTree chained = shim::coll::build_two_level_tree(even, root, two_level(2, 4, even.max_ppn()));
      check_spanning(chained, even.size(), root);
      CHECK(tree_depth(chained) == kary_depth(even.nodes(), 2) + even.max_ppn() - 1);
    }
  }
}

TEST_CASE("a message of many segments on few nodes goes down a chain between nodes", "[bcast]") {
  using shim::coll::chain_between_nodes;
  using shim::coll::kChainSegmentsPerNode;
  // n nodes chain once the message has kChainSegmentsPerNode x (n - 1) segments.
  // A short message is no chain's business, whatever the node count.
  CHECK_FALSE(chain_between_nodes(kChainSegmentsPerNode - 1, 1));
  CHECK(chain_between_nodes(kChainSegmentsPerNode, 2));
  CHECK_FALSE(chain_between_nodes(kChainSegmentsPerNode * 3 - 1, 4));
  CHECK(chain_between_nodes(kChainSegmentsPerNode * 3, 4));
  CHECK_FALSE(chain_between_nodes(kChainSegmentsPerNode * 3, 5));
  // 1 MiB in 8 KiB segments: up to 17 nodes; 64 KiB: up to 2.
  CHECK(chain_between_nodes(128, 17));
  CHECK_FALSE(chain_between_nodes(128, 18));
  CHECK_FALSE(chain_between_nodes(8, 3));
}

TEST_CASE("with few ranks for many segments, one chain runs through every rank, node after node", "[bcast]") {
  using shim::coll::kChainSegmentsPerRank;
  using shim::coll::kOneChainMinNodes;
  using shim::coll::one_chain_through_ranks;
  CHECK(one_chain_through_ranks(kChainSegmentsPerRank * 8, kOneChainMinNodes, 8));
  CHECK_FALSE(one_chain_through_ranks(kChainSegmentsPerRank * 8 - 1, kOneChainMinNodes, 8));
  // Two nodes keep the two-level tree, whose halves run side by side.
  CHECK_FALSE(one_chain_through_ranks(1 << 20, kOneChainMinNodes - 1, 8));

  shim::coll::BcastFanout one_chain = two_level(1, 2, 0);
  one_chain.one_chain = true;
  const std::vector<Layout> layouts = {blocked(4, 2), blocked(3, 1), from({0, 0, 0, 1, 1, 2, 2, 2, 2}),
                                       from({0, 1, 2, 0, 1, 2}), from({2, 2, 1, 0, 0, 0, 0})};
  for (const Layout& layout : layouts) {
    for (int root = 0; root < layout.size(); ++root) {
      INFO(layout.describe() << ", root " << root);
      const BcastTree tree = shim::coll::build_two_level_tree(layout, root, one_chain);
      check_spanning(tree, layout.size(), root);
      // A chain: every rank feeds at most one, so the depth is ranks - 1.
      for (const auto& children : tree.children) CHECK(children.size() <= 1);
      CHECK(tree_depth(tree) == layout.size() - 1);
      // Each node entered once, the root's node first: its ranks are the
      // chain's first ones.
      CHECK(shim::coll::count_links(tree, layout, {}).inter_node == layout.nodes() - 1);
      int rank = root;
      for (int step = 0; step < layout.ppn(layout.node_of(root)); ++step) {
        CHECK(layout.node_of(rank) == layout.node_of(root));
        if (!tree.children[rank].empty()) rank = tree.children[rank].front();
      }
      // Other nodes are entered at their first local rank.
      for (int node = 0; node < layout.nodes(); ++node) {
        if (node == layout.node_of(root)) continue;
        const int entry = layout.rank_of(node, 0);
        CHECK(layout.node_of(tree.parent[entry]) != node);
      }
    }
  }
}
