#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "collectives/alltoall_schedules.hpp"
#include "collectives/traffic.hpp"
#include "tests/support/layouts.hpp"
#include "tests/support/memory_executor.hpp"

using shim::coll::AlltoallAlgorithm;
using shim::coll::Traffic;
using shim::test::blocked;
using shim::test::from;
using shim::test::layout_zoo;
using shim::topo::Layout;

TEST_CASE("every algorithm delivers every block exactly, on every layout", "[schedule]") {
  for (AlltoallAlgorithm algorithm : {AlltoallAlgorithm::sa, AlltoallAlgorithm::rd, AlltoallAlgorithm::leader,
                                      AlltoallAlgorithm::linear, AlltoallAlgorithm::node_pairs}) {
    for (const Layout& layout : layout_zoo()) {
      INFO(std::string(name(algorithm)) << " on " << layout.describe());
      const auto result = shim::test::simulate_alltoall(algorithm, layout);
      for (const auto& error : result.errors) FAIL_CHECK(error);
      // The production counter (from the schedule) agrees with the simulator.
      for (int rank = 0; rank < layout.size(); ++rank) {
        const auto schedule = shim::coll::build_alltoall_schedule(algorithm, layout, rank);
        CHECK(shim::coll::schedule_traffic(schedule, layout, rank) == result.traffic[rank]);
      }
    }
  }
}

namespace {

struct NodeTraffic {
  std::int64_t inter_messages = 0;
  std::int64_t inter_blocks = 0;
};

NodeTraffic node_traffic(const std::vector<Traffic>& per_rank, const Layout& layout, int node) {
  NodeTraffic total;
  for (int rank : layout.members(node)) {
    total.inter_messages += per_rank[rank].inter_messages;
    total.inter_blocks += per_rank[rank].inter_blocks;
  }
  return total;
}

}  // namespace

TEST_CASE("every algorithm is correct with send and receive buffers aliased (MPI_IN_PLACE)", "[schedule]") {
  for (AlltoallAlgorithm algorithm : {AlltoallAlgorithm::sa, AlltoallAlgorithm::rd, AlltoallAlgorithm::leader,
                                      AlltoallAlgorithm::linear, AlltoallAlgorithm::node_pairs}) {
    for (const Layout& layout : layout_zoo()) {
      INFO(std::string(name(algorithm)) << " in place on " << layout.describe());
      const auto result = shim::test::simulate_alltoall(algorithm, layout, true);
      for (const auto& error : result.errors) FAIL_CHECK(error);
    }
  }
}

TEST_CASE("inter-node messages per node match Kumar, Mamidala and Panda's counts", "[schedule][traffic]") {
  const int nodes = 4;
  const int ppn = 3;
  const Layout layout = blocked(nodes, ppn);
  const int size = layout.size();
  const auto sa = shim::test::simulate_alltoall(AlltoallAlgorithm::sa, layout);
  const auto rd = shim::test::simulate_alltoall(AlltoallAlgorithm::rd, layout);
  const auto leader = shim::test::simulate_alltoall(AlltoallAlgorithm::leader, layout);
  REQUIRE(sa.errors.empty());
  REQUIRE(rd.errors.empty());
  REQUIRE(leader.errors.empty());
  for (int node = 0; node < nodes; ++node) {
    // Every block leaving the node crosses the network exactly once.
    const std::int64_t leaving_blocks = std::int64_t{ppn} * (size - ppn);
    CHECK(node_traffic(sa.traffic, layout, node).inter_messages == ppn * (nodes - 1));
    CHECK(node_traffic(sa.traffic, layout, node).inter_blocks == leaving_blocks);
    CHECK(node_traffic(rd.traffic, layout, node).inter_messages == ppn * (nodes - 1));
    CHECK(node_traffic(rd.traffic, layout, node).inter_blocks == leaving_blocks);
    CHECK(node_traffic(leader.traffic, layout, node).inter_messages == nodes - 1);
    CHECK(node_traffic(leader.traffic, layout, node).inter_blocks == leaving_blocks);

    std::vector<Traffic> flat;
    for (int rank = 0; rank < size; ++rank) flat.push_back(shim::coll::flat_traffic(layout, rank));
    CHECK(node_traffic(flat, layout, node).inter_messages == ppn * (size - ppn));
  }
  // Each rank's intra-node step is one message to every other local rank.
  for (int rank = 0; rank < size; ++rank) CHECK(sa.traffic[rank].intra_messages == ppn - 1);
}

TEST_CASE("message counts per node hold on every uniform layout up to 5 x 5", "[schedule][traffic]") {
  for (int nodes = 1; nodes <= 5; ++nodes) {
    for (int ppn = 1; ppn <= 5; ++ppn) {
      const Layout layout = blocked(nodes, ppn);
      INFO(layout.describe());
      const auto sa = shim::test::simulate_alltoall(AlltoallAlgorithm::sa, layout);
      const auto rd = shim::test::simulate_alltoall(AlltoallAlgorithm::rd, layout);
      const auto leader = shim::test::simulate_alltoall(AlltoallAlgorithm::leader, layout);
      for (int node = 0; node < nodes; ++node) {
        CHECK(node_traffic(sa.traffic, layout, node).inter_messages == ppn * (nodes - 1));
        CHECK(node_traffic(rd.traffic, layout, node).inter_messages == ppn * (nodes - 1));
        CHECK(node_traffic(leader.traffic, layout, node).inter_messages == nodes - 1);
        CHECK(node_traffic(leader.traffic, layout, node).inter_blocks == std::int64_t{ppn} * ppn * (nodes - 1));
      }
    }
  }
}

TEST_CASE("uneven nodes: SA sends one message per remote destination rank", "[schedule][traffic]") {
  const Layout layout = from({0, 0, 0, 1, 1, 1, 2});  // 7 ranks in nodes of 3
  const auto sa = shim::test::simulate_alltoall(AlltoallAlgorithm::sa, layout);
  REQUIRE(sa.errors.empty());
  CHECK(node_traffic(sa.traffic, layout, 0).inter_messages == 4);  // ranks 3..6
  CHECK(node_traffic(sa.traffic, layout, 2).inter_messages == 6);  // ranks 0..5, all from rank 6
  const auto leader = shim::test::simulate_alltoall(AlltoallAlgorithm::leader, layout);
  REQUIRE(leader.errors.empty());
  for (int node = 0; node < 3; ++node) CHECK(node_traffic(leader.traffic, layout, node).inter_messages == 2);
}

TEST_CASE("consecutive uniform layouts use one native alltoall per rail, with no unpack step", "[schedule]") {
  const Layout layout = blocked(3, 4);
  for (AlltoallAlgorithm algorithm : {AlltoallAlgorithm::sa, AlltoallAlgorithm::rd}) {
    const auto result = shim::test::simulate_alltoall(algorithm, layout);
    CHECK(result.rail_calls == layout.size());
    CHECK(result.uniform_rail_calls == layout.size());
    CHECK(shim::coll::build_alltoall_schedule(algorithm, layout, 5).phases.size() == 2);
  }
  const auto leader = shim::test::simulate_alltoall(AlltoallAlgorithm::leader, layout);
  CHECK(leader.rail_calls == layout.nodes());
  CHECK(leader.uniform_rail_calls == layout.nodes());
}

TEST_CASE("non-consecutive uniform layouts stage the node's blocks and still call alltoall", "[schedule]") {
  const Layout layout = from({0, 1, 0, 1, 0, 1});
  for (AlltoallAlgorithm algorithm : {AlltoallAlgorithm::sa, AlltoallAlgorithm::rd}) {
    const auto result = shim::test::simulate_alltoall(algorithm, layout);
    CHECK(result.errors.empty());
    CHECK(result.uniform_rail_calls == layout.size());
    CHECK(shim::coll::build_alltoall_schedule(algorithm, layout, 0).phases.size() == 3);
  }
}

TEST_CASE("uneven leaders exchange different amounts (alltoallv)", "[schedule]") {
  const Layout layout = from({0, 0, 0, 1, 1, 1, 2});
  const auto result = shim::test::simulate_alltoall(AlltoallAlgorithm::leader, layout);
  CHECK(result.errors.empty());
  CHECK(result.rail_calls == 3);
  CHECK(result.uniform_rail_calls == 0);
}

TEST_CASE("stage buffers are sized to what the schedule touches", "[schedule]") {
  const Layout layout = blocked(2, 4);
  CHECK(shim::coll::build_sa_schedule(layout, 3).stage_blocks == 8);
  CHECK(shim::coll::build_rd_schedule(layout, 3).stage_blocks == 8);
  CHECK(shim::coll::build_leader_schedule(layout, 0).stage_blocks == 2 * 4 * 8);
  CHECK(shim::coll::build_leader_schedule(layout, 1).stage_blocks == 0);
}

TEST_CASE("linear sends every block straight to its rank, as a flat exchange does", "[schedule][traffic]") {
  for (const Layout& layout : layout_zoo()) {
    INFO(layout.describe());
    for (int rank = 0; rank < layout.size(); ++rank) {
      const auto schedule = shim::coll::build_alltoall_schedule(AlltoallAlgorithm::linear, layout, rank);
      CHECK(schedule.phases.size() == 1);
      CHECK(schedule.stage_blocks == 0);
      CHECK(shim::coll::schedule_traffic(schedule, layout, rank) == shim::coll::flat_traffic(layout, rank));
      // The own block last, so that its copy overlaps the other transfers.
      const auto& exchange = schedule.phases.front();
      CHECK(exchange.sends.front().peer == (rank + 1) % layout.size());
      CHECK(exchange.sends.back().peer == rank);
      CHECK(exchange.recvs.back().peer == rank);
    }
  }
}

TEST_CASE("only linear and node pairs need a copy of the send blocks for MPI_IN_PLACE", "[schedule]") {
  const Layout layout = blocked(3, 2);
  for (AlltoallAlgorithm algorithm : {AlltoallAlgorithm::sa, AlltoallAlgorithm::rd, AlltoallAlgorithm::leader}) {
    CHECK(shim::coll::build_alltoall_schedule(algorithm, layout, 1).in_place_safe);
  }
  CHECK_FALSE(shim::coll::build_alltoall_schedule(AlltoallAlgorithm::linear, layout, 1).in_place_safe);
  CHECK_FALSE(shim::coll::build_alltoall_schedule(AlltoallAlgorithm::node_pairs, layout, 1).in_place_safe);
}

TEST_CASE("node pairs send one message per pair of nodes, spread over the local ranks", "[schedule][traffic]") {
  for (const Layout& layout : {blocked(9, 4), blocked(3, 4), from({0, 0, 1, 1, 1, 2, 3, 3, 4, 5, 5, 5, 6, 6, 6})}) {
    INFO(layout.describe());
    const auto result = shim::test::simulate_alltoall(AlltoallAlgorithm::node_pairs, layout);
    REQUIRE(result.errors.empty());
    for (int node = 0; node < layout.nodes(); ++node) {
      const NodeTraffic traffic = node_traffic(result.traffic, layout, node);
      CHECK(traffic.inter_messages == layout.nodes() - 1);
      CHECK(traffic.inter_blocks == std::int64_t{layout.ppn(node)} * (layout.size() - layout.ppn(node)));
      for (int rank : layout.members(node)) {
        // Local rank x carries the other nodes d with d % ppn == x.
        const int local = layout.local_rank(rank);
        int carried = 0;
        for (int d = 0; d < layout.nodes(); ++d) carried += d != node && d % layout.ppn(node) == local;
        CHECK(result.traffic[rank].inter_messages == carried);
      }
    }
  }
}

namespace {

// Nodes of the given sizes, ranks dealt out node after node.
Layout of_sizes(const std::vector<int>& sizes) {
  std::vector<std::int64_t> keys;
  for (std::size_t node = 0; node < sizes.size(); ++node) keys.insert(keys.end(), sizes[node], std::int64_t(node));
  return Layout::from_node_keys(keys);
}

// Layouts whose largest node takes node pairs' two-hop intra-node steps for
// small blocks, with every other node size from 1 to 20 (grids with a short
// last row, one row, one rank).
std::vector<Layout> two_hop_layouts() {
  std::vector<Layout> layouts = {blocked(3, 16), blocked(2, 17), of_sizes({16, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}),
                                 of_sizes({11, 12, 13, 14, 15, 20, 18, 19})};
  std::vector<std::int64_t> round_robin;  // 37 processes on 2 nodes, dealt out in turn
  for (int rank = 0; rank < 37; ++rank) round_robin.push_back(rank % 2);
  layouts.push_back(from(round_robin));
  return layouts;
}

}  // namespace

TEST_CASE("node pairs take two hops inside nodes from 12 per node, for blocks up to 16 B and 8 KiB per rank",
          "[schedule]") {
  using shim::coll::schedule_kind;
  for (const Layout& layout : two_hop_layouts()) {
    CHECK(schedule_kind(AlltoallAlgorithm::node_pairs, layout, 1).two_hops);
    CHECK(schedule_kind(AlltoallAlgorithm::node_pairs, layout, 16).two_hops);
    CHECK_FALSE(schedule_kind(AlltoallAlgorithm::node_pairs, layout, 17).two_hops);
    CHECK_FALSE(schedule_kind(AlltoallAlgorithm::sa, layout, 1).two_hops);
  }
  CHECK_FALSE(schedule_kind(AlltoallAlgorithm::node_pairs, blocked(64, 11), 1).two_hops);
  CHECK_FALSE(schedule_kind(AlltoallAlgorithm::node_pairs, of_sizes({11, 3}), 1).two_hops);
  CHECK(schedule_kind(AlltoallAlgorithm::node_pairs, of_sizes({3, 12}), 1).two_hops);
  CHECK(schedule_kind(AlltoallAlgorithm::node_pairs, blocked(64, 16), 8).two_hops);         // 8 KiB per rank
  CHECK_FALSE(schedule_kind(AlltoallAlgorithm::node_pairs, blocked(64, 16), 16).two_hops);  // 16 KiB
  CHECK_FALSE(schedule_kind(AlltoallAlgorithm::node_pairs, blocked(129, 16), 4).two_hops);
}

TEST_CASE(
    "node pairs' two-hop intra-node steps deliver every block, with at most 2 (ceil(sqrt(ppn)) - 1) + 1 "
    "messages per rank and step",
    "[schedule]") {
  const shim::coll::ScheduleKind two_hops{AlltoallAlgorithm::node_pairs, true};
  std::vector<Layout> layouts = two_hop_layouts();
  for (const Layout& layout : layout_zoo()) layouts.push_back(layout);
  for (const Layout& layout : layouts) {
    INFO(layout.describe());
    const auto result = shim::test::simulate_alltoall(two_hops, layout);
    for (const auto& error : result.errors) FAIL_CHECK(error);
    const auto aliased = shim::test::simulate_alltoall(two_hops, layout, /*in_place=*/true);
    for (const auto& error : aliased.errors) FAIL_CHECK(error);
    for (int rank = 0; rank < layout.size(); ++rank) {
      const auto schedule = shim::coll::build_alltoall_schedule(two_hops, layout, rank);
      CHECK(shim::coll::schedule_traffic(schedule, layout, rank) == result.traffic[rank]);
      REQUIRE(schedule.phases.size() == 5);
      const int ppn = layout.ppn(layout.node_of(rank));
      int width = 1;
      while (width * width < ppn) ++width;
      for (std::size_t phase : {0U, 1U, 3U, 4U}) {
        INFO("rank " << rank << ", phase " << phase);
        for (const auto* transfers : {&schedule.phases[phase].sends, &schedule.phases[phase].recvs}) {
          int others = 0;
          for (const auto& transfer : *transfers) {
            CHECK(layout.same_node(transfer.peer, rank));
            others += transfer.peer != rank;
          }
          CHECK(others <= 2 * (width - 1) + 1);
        }
      }
    }
  }
}

namespace {

// Runs every paced phase of `algorithm` on `layout` as the PMPI executor
// does, with `window` messages in flight each way, where a message moves
// only once both its send and its receive are posted (MPI's rendezvous
// protocol, the strictest case). Returns the messages left stuck.
int stuck_paced_messages(AlltoallAlgorithm algorithm, const Layout& layout, std::size_t window) {
  std::vector<shim::coll::Schedule> schedules;
  for (int rank = 0; rank < layout.size(); ++rank) {
    schedules.push_back(shim::coll::build_alltoall_schedule(algorithm, layout, rank));
  }
  int stuck = 0;
  for (std::size_t p = 0; p < schedules.front().phases.size(); ++p) {
    if (schedules.front().phases[p].kind != shim::coll::PhaseKind::paced_exchange) continue;
    const auto ranks = static_cast<std::size_t>(layout.size());
    // Per rank: transfers done so far, in listed order (done ones are a prefix
    // of the window's, since a slot refills from the list's next one).
    std::vector<std::vector<bool>> sent(ranks), received(ranks);
    for (std::size_t r = 0; r < ranks; ++r) {
      sent[r].assign(schedules[r].phases[p].sends.size(), false);
      received[r].assign(schedules[r].phases[p].recvs.size(), false);
    }
    auto posted = [&](const std::vector<bool>& done, std::size_t index) {
      std::size_t pending_before = 0;
      for (std::size_t i = 0; i < index; ++i) pending_before += done[i] ? 0 : 1;
      return !done[index] && pending_before < window;
    };
    for (bool progress = true; progress;) {
      progress = false;
      for (std::size_t r = 0; r < ranks; ++r) {
        const auto& sends = schedules[r].phases[p].sends;
        for (std::size_t i = 0; i < sends.size(); ++i) {
          if (!posted(sent[r], i)) continue;
          const auto to = static_cast<std::size_t>(sends[i].peer);
          const auto& recvs = schedules[to].phases[p].recvs;
          for (std::size_t j = 0; j < recvs.size(); ++j) {
            if (recvs[j].peer == static_cast<int>(r) && posted(received[to], j)) {
              sent[r][i] = true;
              received[to][j] = true;
              progress = true;
            }
          }
        }
      }
    }
    for (const auto& rank_sent : sent) {
      for (bool done : rank_sent) stuck += done ? 0 : 1;
    }
  }
  return stuck;
}

}  // namespace

TEST_CASE("paced exchanges cannot deadlock, whatever the window", "[schedule]") {
  std::vector<Layout> layouts = layout_zoo();
  layouts.push_back(blocked(17, 2));
  layouts.push_back(blocked(12, 3));
  for (const Layout& layout : layouts) {
    for (std::size_t window : {std::size_t{1}, std::size_t{2}, std::size_t{shim::coll::kNodePairsInFlight}}) {
      INFO(layout.describe() << ", window " << window);
      CHECK(stuck_paced_messages(AlltoallAlgorithm::node_pairs, layout, window) == 0);
      // SA's inter-node step on uneven nodes.
      CHECK(stuck_paced_messages(AlltoallAlgorithm::sa, layout, window) == 0);
    }
  }
}

TEST_CASE(
    "linear keeps 16 in flight from 17 processes for blocks of 4 KiB or more, for all beyond 128, and from 8 KiB "
    "with one process per node",
    "[schedule]") {
  std::vector<std::int64_t> round_robin_uneven;  // 71 processes on 9 nodes, dealt out in turn
  for (int rank = 0; rank < 71; ++rank) round_robin_uneven.push_back(rank % 9);
  const std::vector<Layout> layouts = {blocked(4, 4), blocked(17, 1), blocked(16, 4), blocked(13, 5),
                                       blocked(9, 8), blocked(70, 1), blocked(33, 4), from(round_robin_uneven)};
  for (const Layout& layout : layouts) {
    INFO(layout.describe());
    const bool windowed = layout.size() > shim::coll::kLinearInFlight;
    const bool always = layout.size() > shim::coll::kLinearAllAtOnceMaxRanks;
    for (int rank = 0; rank < layout.size(); ++rank) {
      const auto schedule = shim::coll::build_alltoall_schedule(AlltoallAlgorithm::linear, layout, rank);
      REQUIRE(schedule.phases.size() == 1);
      const shim::coll::Phase& phase = schedule.phases[0];
      CHECK(phase.kind == (windowed ? shim::coll::PhaseKind::paced_exchange : shim::coll::PhaseKind::exchange));
      CHECK(phase.window == (windowed ? shim::coll::kLinearInFlight : 0));
      std::int64_t paced_from = always ? 0 : shim::coll::kLinearPacedFromBlockBytes;
      if (layout.max_ppn() == 1) paced_from = shim::coll::kLinearOnePerNodePacedFromBlockBytes;
      CHECK(phase.paced_from_block_bytes == (windowed ? paced_from : 0));
    }
    const auto result = shim::test::simulate_alltoall(AlltoallAlgorithm::linear, layout);
    for (const auto& error : result.errors) FAIL_CHECK(error);
    for (std::size_t window : {std::size_t{1}, std::size_t{2}, std::size_t{shim::coll::kLinearInFlight}}) {
      INFO("window " << window);
      CHECK(stuck_paced_messages(AlltoallAlgorithm::linear, layout, window) == 0);
    }
  }
}
