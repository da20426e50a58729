#include <catch2/catch.hpp>

#include "collectives/bcast_policy.hpp"

using shim::coll::BcastAlgorithm;
using shim::coll::BcastFacts;

namespace {
const shim::coll::BcastRule& rule_for(const BcastFacts& facts) { return shim::coll::bcast_policy().choose(facts); }
}  // namespace

TEST_CASE("broadcast: one node, or two nodes of one process, stays native", "[policy]") {
  CHECK(rule_for({1 << 20, 1, 8, 0, true}).name == "single-node");
  for (const std::int64_t bytes : {std::int64_t{1}, std::int64_t{64} << 10, std::int64_t{1} << 20}) {
    CHECK(rule_for({bytes, 2, 1, 0, true}).name == "two-nodes-of-one");
    // From three nodes the tree over nodes, chained for long messages.
    CHECK(rule_for({bytes, 5, 1, 0, true}).outcome == BcastAlgorithm::twolevel);
  }
  CHECK(rule_for({std::int64_t{1} << 20, 3, 1, 0, true}).outcome == BcastAlgorithm::twolevel);
  CHECK(rule_for({1, 3, 1, 0, true}).outcome == BcastAlgorithm::twolevel);
  // 64-96 KiB on 3-4 nodes of one: whole messages win, as on blocked nodes.
  CHECK(rule_for({std::int64_t{64} << 10, 4, 1, 0, true}).name == "few-nodes-whole");
}

TEST_CASE("broadcast: measured subnets take ECO at every size and placement", "[policy]") {
  for (const std::int64_t bytes : {1, 64 * 1024, 1 << 20}) {
    for (const bool consecutive : {false, true}) {
      CHECK(rule_for({bytes, 8, 4, 3, consecutive}).outcome == BcastAlgorithm::eco);
    }
  }
}

TEST_CASE("broadcast: where sends are costly, short messages stay with MPI's binomial tree", "[policy]") {
  using shim::coll::kBcastCostlySendMaxBytes;
  using shim::coll::kBcastCostlySendNs;
  using shim::coll::kBcastCostlySendSubnetsMaxBytes;
  for (const int subnets : {0, 4}) {
    const std::int64_t most = subnets == 0 ? kBcastCostlySendMaxBytes : kBcastCostlySendSubnetsMaxBytes;
    CHECK(rule_for({1, 8, 4, subnets, true, kBcastCostlySendNs}).name == "costly-sends-short");
    CHECK(rule_for({most, 4, 8, subnets, false, 6390}).outcome == BcastAlgorithm::native);
    CHECK(rule_for({most + 1, 4, 8, subnets, true, 6390}).outcome != BcastAlgorithm::native);
    CHECK(rule_for({1, 8, 4, subnets, true, kBcastCostlySendNs - 1}).outcome != BcastAlgorithm::native);
  }
  // Between subnets ECO from 4 KiB, and from less where MPI's tree would push
  // more than kBcastCostlySendSubnetCrossingBytes across a subnet's link:
  // about a message per node, so nodes per subnet x bytes, whatever the ppn.
  CHECK(rule_for({4096, 8, 4, 3, true, 6390}).outcome == BcastAlgorithm::eco);
  for (const int ppn : {1, 8, 16}) {
    // 64 nodes in 4 subnets: 16 each.
    CHECK(rule_for({64, 64, ppn, 4, true, 6390}).outcome == BcastAlgorithm::native);
    CHECK(rule_for({65, 64, ppn, 4, true, 6390}).outcome == BcastAlgorithm::eco);
    CHECK(rule_for({256, 64, ppn, 4, false, 6390}).outcome == BcastAlgorithm::eco);
    // 128 nodes in 4 subnets: 32 each.
    CHECK(rule_for({32, 128, ppn, 4, true, 6390}).outcome == BcastAlgorithm::native);
    CHECK(rule_for({64, 128, ppn, 4, true, 6390}).outcome == BcastAlgorithm::eco);
    // 16 nodes: 4 each; 4 nodes: 1 each, where MPI leads up to the 1 KiB cap.
    CHECK(rule_for({256, 16, ppn, 4, true, 6390}).outcome == BcastAlgorithm::native);
    CHECK(rule_for({1024, 16, ppn, 4, true, 6390}).outcome == BcastAlgorithm::eco);
    CHECK(rule_for({1024, 4, ppn, 4, true, 6390}).outcome == BcastAlgorithm::native);
  }
  // Nodes that do not split evenly round up: 6 nodes in 4 subnets, 2 in some.
  CHECK(rule_for({512, 6, 2, 4, true, 6390}).outcome == BcastAlgorithm::native);
  CHECK(rule_for({513, 6, 2, 4, true, 6390}).outcome == BcastAlgorithm::eco);
  const BcastFacts facts{1, 8, 4, 0, true, 6390};
  CHECK(shim::coll::BcastPolicy::explain(rule_for(facts), facts).find("6390 ns per message") != std::string::npos);
}

TEST_CASE("broadcast: over slow node links, scatter-allgather from 4 KiB unless the two-level tree is a chain",
          "[policy]") {
  constexpr std::int64_t kGigabitEthernet = 117'000'000;  // 1 Gb/s less TCP's headers
  constexpr int kTcpSendNs = 6390;
  const auto facts = [](std::int64_t bytes, int nodes, int subnets, std::int64_t bandwidth, bool chains = false) {
    return BcastFacts{bytes, nodes, 4, subnets, true, kTcpSendNs, bandwidth, chains};
  };
  for (const int nodes : {8, 16, 32, 64, 128}) {
    INFO(nodes << " nodes");
    for (const std::int64_t bytes : {std::int64_t{4096}, std::int64_t{16384}, std::int64_t{1} << 20}) {
      CHECK(rule_for(facts(bytes, nodes, 0, kGigabitEthernet)).name == "slow-node-links");
      CHECK(rule_for(facts(bytes, nodes, 0, kGigabitEthernet)).outcome == BcastAlgorithm::scatter_allgather);
      // A chain streams the message at the link's rate.
      CHECK(rule_for(facts(bytes, nodes, 0, kGigabitEthernet, true)).name != "slow-node-links");
    }
    // Below 4 KiB the sends count more than the link: MPI's binomial tree.
    CHECK(rule_for(facts(1024, nodes, 0, kGigabitEthernet)).name == "costly-sends-short");
    // 25 GbE, an unknown link, or measured subnets: not this rule.
    CHECK(rule_for(facts(16384, nodes, 0, 2'900'000'000)).name == "node-aware");
    CHECK(rule_for(facts(16384, nodes, 0, 0)).name == "node-aware");
    CHECK(rule_for(facts(16384, nodes, 4, kGigabitEthernet)).name == "measured-subnets");
  }
  // Fewer nodes than the model ran.
  CHECK(rule_for(facts(16384, 7, 0, kGigabitEthernet)).name == "node-aware");
  CHECK(rule_for(facts(16384, 8, 0, shim::coll::kBcastSlowLinkMaxBytesPerSecond)).name == "slow-node-links");
  CHECK(rule_for(facts(16384, 8, 0, shim::coll::kBcastSlowLinkMaxBytesPerSecond + 1)).name == "node-aware");
}

TEST_CASE("broadcast: whole messages on a few blocked nodes go to MPICH's binomial tree", "[policy]") {
  using shim::coll::kBcastFewNodes;
  using shim::coll::kBcastWholeMax;
  using shim::coll::kBcastWholeMin;
  CHECK(rule_for({kBcastWholeMin - 1, 4, 4, 0, true}).outcome == BcastAlgorithm::twolevel);
  CHECK(rule_for({kBcastWholeMin, 4, 4, 0, true}).outcome == BcastAlgorithm::native);
  CHECK(rule_for({kBcastWholeMin, 4, 4, 0, true}).name == "few-nodes-whole");
  CHECK(rule_for({kBcastWholeMax - 1, 2, 16, 0, true}).outcome == BcastAlgorithm::native);
  CHECK(rule_for({kBcastWholeMax, 4, 4, 0, true}).outcome == BcastAlgorithm::twolevel);
  CHECK(rule_for({kBcastWholeMin, kBcastFewNodes + 1, 4, 0, true}).outcome == BcastAlgorithm::twolevel);
  // Round-robin placement: the binomial tree would cross nodes at every step.
  CHECK(rule_for({kBcastWholeMin, 4, 4, 0, false}).outcome == BcastAlgorithm::twolevel);
}

TEST_CASE("broadcast: every rule explains itself", "[policy]") {
  for (const auto& rule : shim::coll::bcast_policy().rules()) {
    CHECK_FALSE(rule.condition.empty());
    CHECK_FALSE(rule.why.empty());
  }
  const BcastFacts facts{64 * 1024, 4, 8, 0, true};
  const std::string text = shim::coll::BcastPolicy::explain(rule_for(facts), facts);
  CHECK(text.find("64 KiB") != std::string::npos);
  CHECK(text.find("consecutive") != std::string::npos);
  CHECK(shim::coll::bcast_native_for_every_size(2, 1, 0));
  CHECK(shim::coll::bcast_native_for_every_size(1, 8, 0));
  CHECK_FALSE(shim::coll::bcast_native_for_every_size(3, 1, 0));
  CHECK_FALSE(shim::coll::bcast_native_for_every_size(8, 8, 0));
  CHECK_FALSE(shim::coll::bcast_native_for_every_size(2, 1, 3));
}

TEST_CASE("broadcast: the always-native shortcut agrees with the table at every size", "[policy]") {
  for (int nodes = 1; nodes <= 10; ++nodes) {
    for (int ppn = 1; ppn <= 3; ++ppn) {
      for (const int subnets : {0, 3}) {
        bool all_native = true;
        for (std::int64_t bytes = 0; bytes <= (std::int64_t{1} << 22); bytes = bytes == 0 ? 1 : bytes * 2) {
          for (const bool consecutive : {false, true}) {
            all_native =
                all_native && rule_for({bytes, nodes, ppn, subnets, consecutive}).outcome == BcastAlgorithm::native;
          }
        }
        INFO(nodes << " nodes, ppn " << ppn << ", " << subnets << " subnets");
        CHECK(shim::coll::bcast_native_for_every_size(nodes, ppn, subnets) == all_native);
      }
    }
  }
}
