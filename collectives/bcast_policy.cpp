#include "collectives/bcast_policy.hpp"

#include <array>
#include <string>

#include "common/format.hpp"

namespace shim::coll {

namespace {

std::string shape(const BcastFacts& f) {
  std::string text = std::to_string(f.nodes) + " nodes, ppn " + std::to_string(f.ppn);
  if (f.subnets > 0) text += ", " + std::to_string(f.subnets) + " subnets";
  if (f.consecutive) text += ", consecutive ranks";
  text += ", " + format_bytes(f.bytes);
  return text;
}

constexpr std::array kRules = {
    BcastRule{"single-node", "nodes == 1", BcastAlgorithm::native,
              "all ranks share one node: nothing crosses the network", [](const BcastFacts& f) { return f.nodes <= 1; },
              shape},
    BcastRule{
        "slow-node-links",
        "no measured subnets && node bandwidth <= 250 MB/s && nodes >= 8 && bytes >= 4 KiB && the two-level tree is "
        "no chain",
        BcastAlgorithm::scatter_allgather,
        "a tree's relays send the whole message to each child through a slow link; scatter-allgather between "
        "node leaders sends about the message once each way (scale model, 1 GbE: collectives/bcast_policy.hpp)",
        [](const BcastFacts& f) {
          return f.subnets < 2 && f.node_bandwidth > 0 && f.node_bandwidth <= kBcastSlowLinkMaxBytesPerSecond &&
                 f.nodes >= kBcastScatterAllgatherMinNodes && f.bytes >= kBcastScatterAllgatherMinBytes &&
                 !f.twolevel_chains;
        },
        [](const BcastFacts& f) { return shape(f) + ", node link " + std::to_string(f.node_bandwidth) + " B/s"; }},
    BcastRule{"costly-sends-short",
              "send cost >= 1 us && bytes <= 4 KiB (measured subnets: 1 KiB, and nodes per subnet x bytes <= 1 KiB)",
              BcastAlgorithm::native,
              "each message costs its sender more than it takes to arrive: MPI's binomial tree sends the fewest "
              "messages one after another (scale model, docs/scale/few-nodes.md)",
              [](const BcastFacts& f) {
                if (f.send_cost_ns < kBcastCostlySendNs) return false;
                if (f.subnets < 2) return f.bytes <= kBcastCostlySendMaxBytes;
                const std::int64_t nodes_per_subnet = (std::int64_t{f.nodes} + f.subnets - 1) / f.subnets;
                return f.bytes <= kBcastCostlySendSubnetsMaxBytes &&
                       nodes_per_subnet * f.bytes <= kBcastCostlySendSubnetCrossingBytes;
              },
              [](const BcastFacts& f) { return shape(f) + ", " + std::to_string(f.send_cost_ns) + " ns per message"; }},
    BcastRule{"measured-subnets", "the profile places the nodes in >= 2 subnets", BcastAlgorithm::eco,
              "ECO (Lowekamp and Beguelin): one crossing per subnet boundary, trees inside subnets and nodes",
              [](const BcastFacts& f) { return f.subnets >= 2; }, shape},
    BcastRule{"two-nodes-of-one", "ppn == 1 && nodes == 2", BcastAlgorithm::native,
              "two nodes of one process each: one message either way, which the tree's segments only cut up "
              "(collectives/bcast_policy.hpp)",
              [](const BcastFacts& f) { return f.ppn <= 1 && f.nodes <= 2; }, shape},
    BcastRule{"few-nodes-whole", "consecutive ranks && nodes <= 4 && 64 KiB <= bytes < 96 KiB", BcastAlgorithm::native,
              "MPICH's binomial tree sends the whole message, and with each node one block of at most 4 nodes only two "
              "of its steps cross the network: the scale model has it 1.0-1.2x faster than the two-level tree's 8 KiB "
              "segments there, and slower everywhere else (collectives/bcast_policy.hpp)",
              [](const BcastFacts& f) {
                return f.consecutive && f.nodes <= kBcastFewNodes && f.bytes >= kBcastWholeMin &&
                       f.bytes < kBcastWholeMax;
              },
              shape},
    BcastRule{"node-aware", "otherwise", BcastAlgorithm::twolevel,
              "a tree over nodes, then a tree inside each node, pipelined for large messages",
              [](const BcastFacts&) { return true; }, shape},
};

constexpr BcastPolicy kPolicy{kRules};

}  // namespace

const BcastPolicy& bcast_policy() { return kPolicy; }

bool bcast_native_for_every_size(int nodes, int ppn, int subnets) {
  return nodes <= 1 || (subnets < 2 && ppn <= 1 && nodes <= 2);
}

}  // namespace shim::coll
