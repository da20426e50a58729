#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <set>
#include <tuple>
#include <vector>

#include "rma/credit_line.hpp"
#include "rma/server_map.hpp"

using shim::rma::model_footprint;
using shim::rma::model_largest_footprint;
using shim::rma::ServerMap;

namespace {

constexpr std::int64_t kPerOrigin = 8 * 16384;  // the default credits x buffer bytes

// A layout's width for `g` (a width, or kClusterSquareRoot).
int width_for(int processes, int ppn, int g) {
  return shim::rma::resolve_cluster_size(g, (processes + ppn - 1) / ppn, processes, kPerOrigin);
}

std::vector<int> consecutive_nodes(int processes, int ppn) {
  std::vector<int> node_of(static_cast<std::size_t>(processes));
  for (int r = 0; r < processes; ++r) node_of[static_cast<std::size_t>(r)] = r / ppn;
  return node_of;
}

// What each server receives, found by sending every origin's request to
// every other node along the map's routes: origins whose first hop it is,
// and servers that forward to it.
struct Received {
  std::set<int> direct;
  std::set<int> forwarders;
};

std::vector<Received> route_everything(const ServerMap& map) {
  std::vector<Received> received(static_cast<std::size_t>(map.nodes()));
  for (int origin = 0; origin < map.processes(); ++origin) {
    for (int target = 0; target < map.nodes(); ++target) {
      if (target == map.node_of(origin)) continue;
      const int hop = map.first_hop(origin, target);
      const int hop_node = map.node_of_server(hop);
      REQUIRE(hop_node >= 0);
      REQUIRE(map.cluster_of(hop_node) == map.cluster_of(target));
      received[static_cast<std::size_t>(hop_node)].direct.insert(origin);
      if (hop != map.server_of_node(target)) received[static_cast<std::size_t>(target)].forwarders.insert(hop);
    }
  }
  return received;
}

}  // namespace

TEST_CASE("cluster width: auto is ceil(sqrt(nodes)), a width is clamped to the nodes", "[server_map]") {
  using shim::rma::kClusterSquareRoot;
  using shim::rma::resolve_cluster_size;
  CHECK(resolve_cluster_size(kClusterSquareRoot, 1, 1, kPerOrigin) == 1);
  CHECK(resolve_cluster_size(kClusterSquareRoot, 4, 4, kPerOrigin) == 2);
  CHECK(resolve_cluster_size(kClusterSquareRoot, 5, 5, kPerOrigin) == 3);
  CHECK(resolve_cluster_size(kClusterSquareRoot, 800, 9600, kPerOrigin) == 29);
  CHECK(resolve_cluster_size(kClusterSquareRoot, 1000, 100000, kPerOrigin) == 32);
  CHECK(resolve_cluster_size(7, 3, 3, kPerOrigin) == 3);
  CHECK(resolve_cluster_size(2, 5, 5, kPerOrigin) == 2);
}

TEST_CASE("the default width: direct while unclustered buffers fit the budget, ceil(sqrt(nodes)) beyond",
          "[server_map]") {
  using shim::rma::kClusterBeyondBudget;
  using shim::rma::kDirectPoolBudget;
  using shim::rma::resolve_cluster_size;
  // 8 credits of 16 KiB: 512 processes fit in 64 MiB, 513 do not.
  CHECK(kDirectPoolBudget / kPerOrigin == 512);
  CHECK(resolve_cluster_size(kClusterBeyondBudget, 64, 512, kPerOrigin) == 1);
  CHECK(resolve_cluster_size(kClusterBeyondBudget, 65, 513, kPerOrigin) == 9);
  CHECK(resolve_cluster_size(kClusterBeyondBudget, 800, 9600, kPerOrigin) == 29);
  CHECK(resolve_cluster_size(kClusterBeyondBudget, 2, 4, kPerOrigin) == 1);
  // Larger buffers reach the budget with fewer processes.
  CHECK(resolve_cluster_size(kClusterBeyondBudget, 16, 64, std::int64_t{1} << 20) == 1);
  CHECK(resolve_cluster_size(kClusterBeyondBudget, 16, 65, std::int64_t{1} << 20) == 4);
  CHECK(shim::rma::explain_cluster_size(kClusterBeyondBudget, 800, 9600, kPerOrigin) ==
        "SHIM_SERVER_CLUSTER=budget: unclustered, a server would hold 9600 processes x 128 KiB of request buffers, "
        "beyond 64 MiB: ceil(sqrt(800 nodes)) = 29");
  CHECK(shim::rma::explain_cluster_size(kClusterBeyondBudget, 2, 4, kPerOrigin) ==
        "SHIM_SERVER_CLUSTER=budget: unclustered, a server would hold 4 processes x 128 KiB of request buffers, "
        "within 64 MiB: direct");
  CHECK(shim::rma::explain_cluster_size(9, 3, 3, kPerOrigin) == "SHIM_SERVER_CLUSTER=9, at most the 3 nodes");
}

TEST_CASE("clusters are consecutive, at least g wide, and differ by one node at most", "[server_map]") {
  for (const auto& [nodes, g, widths] : std::vector<std::tuple<int, int, std::vector<int>>>{
           {5, 2, {3, 2}}, {4, 2, {2, 2}}, {7, 3, {4, 3}}, {3, 3, {3}}, {1, 1, {1}}, {10, 3, {4, 3, 3}}}) {
    CAPTURE(nodes, g);
    const shim::rma::ClusterSplit split(nodes, g);
    REQUIRE(split.clusters == static_cast<std::int64_t>(widths.size()));
    int node = 0;
    for (std::int64_t c = 0; c < split.clusters; ++c) {
      CHECK(split.width(c) == widths[static_cast<std::size_t>(c)]);
      CHECK(split.first_node(c) == node);
      for (int k = 0; k < split.width(c); ++k) CHECK(split.cluster_of(node++) == c);
    }
    CHECK(node == nodes);
  }
  // 800 nodes in clusters of at least 29: 27 clusters of 29 or 30.
  const shim::rma::ClusterSplit large(800, 29);
  CHECK(large.clusters == 27);
  CHECK(large.width(0) == 30);
  CHECK(large.width(26) == 29);
}

TEST_CASE("g = 1 is the direct design: every request goes to the target's own server", "[server_map]") {
  const ServerMap map(consecutive_nodes(12, 3), 1);
  for (int origin = 0; origin < 12; ++origin) {
    for (int target = 0; target < 4; ++target) CHECK(map.first_hop(origin, target) == map.server_of_node(target));
  }
  for (int node = 0; node < 4; ++node) {
    CHECK(map.direct_origins(node) == 9);
    CHECK(map.forwarding_servers(node) == 0);
  }
}

TEST_CASE("the closed-form model equals the routes, for even and uneven clusters and nodes", "[server_map]") {
  // (processes, ppn, g): g = 1, 2, all nodes, uneven clusters (5 nodes in
  // twos), a smaller last node, ceil(sqrt(nodes)) (0, auto).
  const std::vector<std::array<int, 3>> layouts = {{8, 2, 1},  {8, 2, 2}, {8, 2, 4},  {10, 2, 2}, {9, 2, 2},
                                                   {9, 2, 0},  {7, 1, 3}, {36, 3, 0}, {64, 2, 0}, {64, 1, 5},
                                                   {50, 4, 3}, {2, 1, 2}, {3, 1, 2},  {1, 1, 0}};
  for (const auto& [processes, ppn, g] : layouts) {
    CAPTURE(processes, ppn, g);
    const ServerMap map(consecutive_nodes(processes, ppn), width_for(processes, ppn, g));
    const std::vector<Received> received = route_everything(map);
    for (int node = 0; node < map.nodes(); ++node) {
      CAPTURE(node);
      const Received& r = received[static_cast<std::size_t>(node)];
      std::set<int> peers = r.direct;
      peers.insert(r.forwarders.begin(), r.forwarders.end());
      const auto model = model_footprint(processes, ppn, width_for(processes, ppn, g), node, 8, 16384);
      const auto mapped = shim::rma::footprint(map, node, 8, 16384);
      CHECK(mapped.direct_origins == static_cast<std::int64_t>(r.direct.size()));
      CHECK(model.direct_origins == static_cast<std::int64_t>(r.direct.size()));
      // Forwarding pools are kept for every other server of the cluster.
      CHECK(static_cast<std::int64_t>(r.forwarders.size()) <= model.forwarding_servers);
      CHECK(model.forwarding_servers == map.cluster_width(node) - 1);
      // The model counts every other server of the cluster, which all may
      // forward; one whose assigned origins all live on this node does not.
      CHECK(static_cast<std::int64_t>(peers.size()) <= model.peers);
      CHECK(static_cast<std::int64_t>(r.direct.size() + r.forwarders.size()) >= model.peers - 1);
      CHECK(mapped.peers == model.peers);
      CHECK(model.direct_bytes == model.direct_origins * 8 * 16384);
      CHECK(model.forward_bytes == model.forwarding_servers * 8 * 16384);
      CHECK(mapped.direct_bytes == model.direct_bytes);
      CHECK(mapped.forward_bytes == model.forward_bytes);
    }
  }
}

TEST_CASE("origins are spread evenly over a cluster's servers", "[server_map]") {
  // 16 each, give or take the server processes that send directly rather
  // than through themselves.
  const ServerMap map(consecutive_nodes(64, 4), 4);
  for (int node = 0; node < 16; ++node) {
    CHECK(map.direct_origins(node) >= 15);
    CHECK(map.direct_origins(node) <= 17);
  }
}

TEST_CASE("no process's first hop is its own server thread", "[server_map]") {
  for (const auto& [processes, ppn, g] :
       std::vector<std::array<int, 3>>{{8, 1, 2}, {2, 1, 2}, {12, 3, 0}, {64, 1, 8}}) {
    CAPTURE(processes, ppn, g);
    const ServerMap map(consecutive_nodes(processes, ppn), width_for(processes, ppn, g));
    for (int origin = 0; origin < processes; ++origin) {
      for (int target = 0; target < map.nodes(); ++target) {
        if (target != map.node_of(origin)) CHECK(map.first_hop(origin, target) != origin);
      }
    }
    // Two nodes in one cluster: nothing is forwarded.
    if (map.nodes() == 2) CHECK(map.first_hop(0, 1) == map.server_of_node(1));
  }
}

TEST_CASE("9,600 processes on 800 nodes: at least 10x less request memory per server than unclustered",
          "[server_map]") {
  const auto direct = model_largest_footprint(9600, 12, 1, 8, 16384);
  const auto clustered =
      model_largest_footprint(9600, 12, width_for(9600, 12, shim::rma::kClusterSquareRoot), 8, 16384);
  CHECK(direct.direct_origins == 9600 - 12);
  CHECK(direct.peers == 9600 - 12);
  const std::int64_t unclustered_bytes = direct.direct_bytes + direct.forward_bytes;
  const std::int64_t clustered_bytes = clustered.direct_bytes + clustered.forward_bytes;
  CHECK(clustered_bytes * 10 <= unclustered_bytes);
  // N/g + g peers at most (clusters are 29 or 30 nodes wide).
  CHECK(clustered.peers <= 9600 / 29 + 1 + 30);
}

TEST_CASE("credits: at most M unreleased, a credit asked every ceil(M/2) messages", "[server_map]") {
  for (const int credits : {1, 2, 3, 8}) {
    CAPTURE(credits);
    shim::rma::CreditLine line(credits);
    std::vector<std::int64_t> asked;
    while (!line.full()) {
      const bool wants = line.next_wants_credit();
      const std::int64_t sequence = line.sent();
      if (wants) asked.push_back(sequence);
    }
    CHECK(line.in_use() == credits);
    // A full line always has a credit outstanding to wait for.
    REQUIRE_FALSE(asked.empty());
    CHECK(asked.front() == (credits + 1) / 2 - 1);
    line.credited(asked.front());
    CHECK(line.in_use() == credits - (credits + 1) / 2);
    CHECK_FALSE(line.full());
  }
}

TEST_CASE("a credit is due only once every earlier message is released too", "[server_map]") {
  shim::rma::ReleaseOrder order;
  const std::int64_t first = order.arrived(false);
  const std::int64_t second = order.arrived(true);  // asks for the credit
  const std::int64_t third = order.arrived(true);
  CHECK(order.released(second) == 0);  // the first still waits to be forwarded
  CHECK(order.released(third) == 0);
  CHECK(order.released(first) == 2);
}
