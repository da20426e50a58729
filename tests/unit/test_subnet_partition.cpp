#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include "topology/subnet_partition.hpp"

using shim::topo::CostMatrix;
using shim::topo::partition_subnets;

namespace {

// Hosts in `groups` (sizes), `intra[g]` inside group g, `inter` between groups.
CostMatrix grouped(const std::vector<int>& groups, const std::vector<double>& intra, double inter) {
  std::vector<int> group_of;
  for (std::size_t g = 0; g < groups.size(); ++g) group_of.insert(group_of.end(), groups[g], static_cast<int>(g));
  const std::size_t n = group_of.size();
  CostMatrix cost(n, std::vector<double>(n, 0.0));
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = 0; b < n; ++b) {
      if (a == b) continue;
      cost[a][b] = group_of[a] == group_of[b] ? intra[group_of[a]] : inter * (1 + 0.1 * (group_of[a] + group_of[b]));
    }
  }
  return cost;
}

void add_noise(CostMatrix& cost, unsigned seed, double amplitude) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> noise(-amplitude, amplitude);
  for (std::size_t a = 0; a < cost.size(); ++a) {
    for (std::size_t b = a + 1; b < cost.size(); ++b) cost[a][b] = cost[b][a] = cost[a][b] * (1 + noise(rng));
  }
}

}  // namespace

TEST_CASE("ECO Figure 1: six workstations, two on each of three subnets", "[partition]") {
  // a,b | c,d | e,f; the subnets differ in speed and are joined by routers.
  const CostMatrix cost = grouped({2, 2, 2}, {1.0, 1.5, 0.8}, 4.0);
  CHECK(partition_subnets(cost) == std::vector<int>{0, 0, 1, 1, 2, 2});
}

TEST_CASE("interleaved hosts are grouped by cost, not by index", "[partition]") {
  // Hosts 0..5 alternate between three subnets, as on the vcluster network.
  const std::vector<int> subnet = {0, 1, 2, 0, 1, 2};
  const std::vector<double> intra = {1.0, 2.0, 4.0};
  CostMatrix cost(6, std::vector<double>(6, 0.0));
  for (int a = 0; a < 6; ++a) {
    for (int b = 0; b < 6; ++b) {
      if (a != b) cost[a][b] = subnet[a] == subnet[b] ? intra[subnet[a]] : 10.0;
    }
  }
  CHECK(partition_subnets(cost) == std::vector<int>{0, 1, 2, 0, 1, 2});
}

TEST_CASE("measurement noise below the 20% rule does not move hosts", "[partition]") {
  for (unsigned seed = 1; seed <= 200; ++seed) {
    CostMatrix cost = grouped({3, 4, 2, 3}, {1.0, 1.3, 0.7, 2.0}, 6.0);
    add_noise(cost, seed, 0.08);
    INFO("seed " << seed);
    CHECK(partition_subnets(cost) == std::vector<int>{0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 3});
  }
}

TEST_CASE("one inflated measurement inside a subnet does not split it", "[partition]") {
  CostMatrix cost = grouped({3, 3}, {1.0, 1.0}, 5.0);
  // A collision-delayed exchange between hosts 0 and 1: worse than the link
  // to the other subnet.
  cost[0][1] = cost[1][0] = 9.0;
  CHECK(partition_subnets(cost) == std::vector<int>{0, 0, 0, 1, 1, 1});
}

TEST_CASE("hosts with nothing within 20% stay on their own", "[partition]") {
  // A chain of costs each 50% above the last: no edge qualifies twice.
  const CostMatrix cost = {{0, 1.0, 1.5, 2.25}, {1.0, 0, 3.0, 3.0}, {1.5, 3.0, 0, 3.5}, {2.25, 3.0, 3.5, 0}};
  CHECK(partition_subnets(cost) == std::vector<int>{0, 0, 1, 2});
}

TEST_CASE("a subnet's cheapest edge bounds what may join it", "[partition]") {
  // 0-1 at 1.0 form a subnet; 2's cheapest edge is 1.15 to host 1, within 20%
  // of both its own and host 1's minimum, and of the subnet's: it joins. 3's
  // cheapest is 1.3 to host 2: within 20% of 3's own minimum but not of the
  // subnet's cheapest (1.0), so 3 stays out.
  const CostMatrix cost = {{0, 1.0, 2.0, 2.0}, {1.0, 0, 1.15, 2.0}, {2.0, 1.15, 0, 1.3}, {2.0, 2.0, 1.3, 0}};
  CHECK(partition_subnets(cost) == std::vector<int>{0, 0, 0, 1});
}

TEST_CASE("degenerate inputs", "[partition]") {
  CHECK(partition_subnets({}).empty());
  CHECK(partition_subnets({{0}}) == std::vector<int>{0});
  CHECK(partition_subnets({{0, 3}, {3, 0}}) == std::vector<int>{0, 0});
}
