#include <catch2/catch.hpp>
#include <vector>

#include "topology/layout.hpp"

using shim::topo::Layout;

namespace {
Layout from(std::vector<std::int64_t> keys) { return Layout::from_node_keys(keys); }
}  // namespace

TEST_CASE("consecutive uniform layout", "[layout]") {
  const Layout layout = from({7, 7, 7, 7, 3, 3, 3, 3});
  CHECK(layout.size() == 8);
  CHECK(layout.nodes() == 2);
  CHECK(layout.uniform());
  CHECK(layout.consecutive());
  CHECK(layout.node_of(5) == 1);
  CHECK(layout.local_rank(5) == 1);
  CHECK(layout.rank_of(1, 3) == 7);
  CHECK(layout.rail(2) == std::vector<int>{2, 6});
  CHECK(layout.describe() == "8 ranks = 2 nodes x 4, consecutive");
}

TEST_CASE("round-robin placement is uniform but not consecutive", "[layout]") {
  const Layout layout = from({0, 1, 0, 1, 0, 1});
  CHECK(layout.nodes() == 2);
  CHECK(layout.uniform());
  CHECK_FALSE(layout.consecutive());
  CHECK(layout.members(1).size() == 3);
  CHECK(layout.rank_of(1, 2) == 5);
  CHECK(layout.local_rank(4) == 2);
  CHECK(layout.rail(0) == std::vector<int>{0, 1});
  CHECK(layout.describe() == "6 ranks = 2 nodes x 3, non-consecutive");
}

TEST_CASE("uneven nodes: 7 ranks in nodes of 3", "[layout]") {
  const Layout layout = from({0, 0, 0, 1, 1, 1, 2});
  CHECK(layout.nodes() == 3);
  CHECK_FALSE(layout.uniform());
  CHECK_FALSE(layout.consecutive());
  CHECK(layout.max_ppn() == 3);
  CHECK(layout.min_ppn() == 1);
  CHECK(layout.rail(0) == std::vector<int>{0, 3, 6});
  CHECK(layout.rail(2) == std::vector<int>{2, 5});
  CHECK(layout.rail(1).size() == 2);
  CHECK(layout.describe() == "7 ranks on 3 nodes (3,3,1), uneven");
}

TEST_CASE("rails follow node order even when ranks interleave", "[layout]") {
  // Node A = ranks {0,3}, node B = ranks {1,2}: local rank 1 is rank 3 on A and
  // rank 2 on B, so rail 1 in node order is {3, 2}.
  const Layout layout = from({5, 9, 9, 5});
  CHECK(layout.rail(1) == std::vector<int>{3, 2});
}

TEST_CASE("single rank and single node", "[layout]") {
  const Layout one = from({42});
  CHECK(one.nodes() == 1);
  CHECK(one.consecutive());
  CHECK(one.describe() == "1 rank = 1 node x 1, consecutive");
  const Layout node = from({1, 1, 1});
  CHECK(node.nodes() == 1);
  CHECK(node.max_ppn() == 3);
  CHECK(node.rail(2) == std::vector<int>{2});
}
