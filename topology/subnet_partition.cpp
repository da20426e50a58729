#include "topology/subnet_partition.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace shim::topo {

namespace {

struct Edge {
  double cost;
  int a;
  int b;
};

}  // namespace

std::vector<int> partition_subnets(const CostMatrix& cost, double tolerance) {
  const int hosts = static_cast<int>(cost.size());
  const double factor = 1.0 + tolerance;
  std::vector<Edge> edges;
  std::vector<double> cheapest(hosts, std::numeric_limits<double>::infinity());
  for (int a = 0; a < hosts; ++a) {
    for (int b = a + 1; b < hosts; ++b) {
      const double c = cost[a][b];
      edges.push_back({c, a, b});
      cheapest[a] = std::min(cheapest[a], c);
      cheapest[b] = std::min(cheapest[b], c);
    }
  }
  std::stable_sort(edges.begin(), edges.end(), [](const Edge& x, const Edge& y) { return x.cost < y.cost; });

  // Union-find over hosts; a host outside any subnet is its own root with
  // no subnet edge yet (infinity), so only the two host checks apply to it.
  std::vector<int> parent(hosts);
  std::iota(parent.begin(), parent.end(), 0);
  std::vector<double> subnet_cheapest(hosts, std::numeric_limits<double>::infinity());
  auto find = [&parent](int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };

  for (const Edge& e : edges) {
    const int ra = find(e.a);
    const int rb = find(e.b);
    if (ra == rb) continue;
    if (e.cost > factor * cheapest[e.a] || e.cost > factor * cheapest[e.b]) continue;
    if (e.cost > factor * subnet_cheapest[ra] || e.cost > factor * subnet_cheapest[rb]) continue;
    parent[rb] = ra;
    subnet_cheapest[ra] = std::min({e.cost, subnet_cheapest[ra], subnet_cheapest[rb]});
  }

  std::vector<int> subnet(hosts, -1);
  std::vector<int> number_of_root(hosts, -1);
  int next = 0;
  for (int h = 0; h < hosts; ++h) {
    const int root = find(h);
    if (number_of_root[root] < 0) number_of_root[root] = next++;
    subnet[h] = number_of_root[root];
  }
  return subnet;
}

}  // namespace shim::topo
