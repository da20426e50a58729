#include "collectives/bcast_policy.hpp"

#include <array>

namespace shim::coll {

namespace {

constexpr std::array kRules = {
    BcastRule{"single-node", "nodes == 1", BcastAlgorithm::native,
              "all ranks share one node: nothing crosses the network",
              [](const BcastPolicyInput& in) { return in.nodes <= 1; }},
    BcastRule{"measured-subnets", "the profile places the nodes in >= 2 subnets", BcastAlgorithm::eco,
              "ECO (seed 003): one crossing per subnet boundary, trees inside subnets and nodes",
              [](const BcastPolicyInput& in) { return in.subnets >= 2; }},
    BcastRule{"one-per-node", "ppn == 1", BcastAlgorithm::native,
              "one process per node on one subnet: MPICH's tree already sends one message per node",
              [](const BcastPolicyInput& in) { return in.ppn <= 1; }},
    BcastRule{"node-aware", "otherwise", BcastAlgorithm::twolevel,
              "one message into each node, then a tree inside it, pipelined for large messages",
              [](const BcastPolicyInput&) { return true; }},
};

}  // namespace

std::span<const BcastRule> bcast_rules() { return kRules; }

BcastDecision choose_bcast(const BcastPolicyInput& input) {
  // The last rule matches everything, so the search always ends inside.
  const BcastRule* rule = kRules.begin();
  while (!rule->matches(input)) ++rule;
  return {rule->algorithm, rule};
}

std::string explain(const BcastDecision& decision, const BcastPolicyInput& input) {
  std::string text(decision.rule->why);
  text += " [" + std::to_string(input.nodes) + " nodes, ppn " + std::to_string(input.ppn);
  if (input.subnets > 0) text += ", " + std::to_string(input.subnets) + " subnets";
  return text + "]";
}

bool bcast_native_for_every_size(int nodes, int ppn, int subnets) {
  return nodes <= 1 || (subnets < 2 && ppn <= 1);
}

}  // namespace shim::coll
