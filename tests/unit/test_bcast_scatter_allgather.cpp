#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/bcast_scatter_allgather.hpp"
#include "collectives/traffic.hpp"
#include "tests/support/layouts.hpp"
#include "tests/support/memory_executor.hpp"

using shim::coll::build_scatter_allgather_bcast;
using shim::test::blocked;
using shim::topo::Layout;

namespace {

// The schedules' zoo, and more nodes: the scatter's and the allgather's
// steps depend on the node count alone.
std::vector<Layout> layouts() {
  std::vector<Layout> all = shim::test::layout_zoo();
  for (int nodes = 6; nodes <= 9; ++nodes) {
    for (const int ppn : {1, 3}) all.push_back(blocked(nodes, ppn));
  }
  all.push_back(blocked(13, 1));
  all.push_back(blocked(16, 2));
  return all;
}

}  // namespace

TEST_CASE("scatter-allgather delivers every block to every rank, from every root, on every layout",
          "[schedule][bcast]") {
  for (const Layout& layout : layouts()) {
    for (int root = 0; root < layout.size(); ++root) {
      INFO(layout.describe() << ", root " << root);
      const auto result = shim::test::simulate_stage_bcast(
          layout, root, [&](int rank) { return build_scatter_allgather_bcast(layout, root, rank); });
      for (const auto& error : result.errors) FAIL_CHECK(error);
      for (int rank = 0; rank < layout.size(); ++rank) {
        const auto schedule = build_scatter_allgather_bcast(layout, root, rank);
        CHECK(schedule.stage_blocks == layout.nodes());
        CHECK(shim::coll::schedule_traffic(schedule, layout, rank) == result.traffic[rank]);
      }
    }
  }
}

TEST_CASE("scatter-allgather: each node's link carries about the message once each way", "[schedule][bcast][traffic]") {
  // Scatter: the root sends nodes - 1 blocks in log2(nodes) messages;
  // Bruck's allgather: every leader sends nodes - 1 blocks in as many
  // messages, one per phase. Other ranks send nothing between nodes.
  for (int nodes : {2, 3, 4, 7, 8, 13, 16}) {
    const Layout layout = blocked(nodes, 3);
    int phases = 0;
    while ((1 << phases) < nodes) ++phases;
    const int root = 4 % layout.size();
    const auto result = shim::test::simulate_stage_bcast(
        layout, root, [&](int rank) { return build_scatter_allgather_bcast(layout, root, rank); });
    REQUIRE(result.errors.empty());
    for (int rank = 0; rank < layout.size(); ++rank) {
      INFO(nodes << " nodes, rank " << rank);
      const bool leader = rank == root || (layout.local_rank(rank) == 0 && !layout.same_node(rank, root));
      const auto& traffic = result.traffic[rank];
      if (!leader) {
        CHECK(traffic.inter_messages == 0);
        continue;
      }
      CHECK(traffic.inter_messages <= 2 * phases);
      CHECK(traffic.inter_blocks <= 2 * (nodes - 1));
      if (rank == root) CHECK(traffic.inter_blocks == 2 * (nodes - 1));
    }
  }
}
