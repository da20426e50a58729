#include "collectives/alltoall_policy.hpp"

#include <array>
#include <limits>

#include "common/format.hpp"

namespace shim::coll {

namespace {

// x * y, or int64 max when that would overflow, so absurd sizes never match
// a "small enough" rule.
std::int64_t saturating_product(std::int64_t x, std::int64_t y) {
  if (x != 0 && y > std::numeric_limits<std::int64_t>::max() / x) return std::numeric_limits<std::int64_t>::max();
  return x * y;
}

std::int64_t aggregated_bytes(const AlltoallPolicyInput& in) { return saturating_product(in.ppn, in.block_bytes); }
std::int64_t leader_bytes(const AlltoallPolicyInput& in) {
  return saturating_product(saturating_product(in.ppn, in.ppn), in.block_bytes);
}

constexpr std::array kRules = {
    AlltoallRule{"single-node", "nodes == 1", AlltoallAlgorithm::native,
                 "all ranks share one node: there is no inter-node traffic to aggregate",
                 [](const AlltoallPolicyInput& in, const AlltoallThresholds&) { return in.nodes <= 1; }},
    AlltoallRule{"one-per-node", "ppn == 1", AlltoallAlgorithm::native,
                 "one process per node: the exchange is already one message per node pair",
                 [](const AlltoallPolicyInput& in, const AlltoallThresholds&) { return in.ppn <= 1; }},
    AlltoallRule{"offload-leader", "nic == offload && ppn^2 * block <= SHIM_ALLTOALL_LEADER_MAX",
                 AlltoallAlgorithm::leader,
                 "offload NIC: one sender per node avoids contention on the NIC (seed 001, Fig. 4 and 10)",
                 [](const AlltoallPolicyInput& in, const AlltoallThresholds& t) {
                   return in.nic == topo::NicClass::offload && leader_bytes(in) <= t.leader_max_bytes;
                 }},
    AlltoallRule{"aggregate", "ppn * block <= SHIM_ALLTOALL_SA_MAX", AlltoallAlgorithm::sa,
                 "start-up cost dominates: ppn times fewer, larger inter-node messages, sent by all cores "
                 "(seed 001, Fig. 7)",
                 [](const AlltoallPolicyInput& in, const AlltoallThresholds& t) {
                   return aggregated_bytes(in) <= t.sa_max_bytes;
                 }},
    AlltoallRule{"bandwidth-bound", "otherwise", AlltoallAlgorithm::native,
                 "bandwidth-bound: aggregation would only add copies",
                 [](const AlltoallPolicyInput&, const AlltoallThresholds&) { return true; }},
};

std::string numbers_for(const AlltoallRule& rule, const AlltoallPolicyInput& in, const AlltoallThresholds& t) {
  const std::string shape = std::to_string(in.nodes) + " nodes x " + std::to_string(in.ppn);
  if (rule.name == "offload-leader") {
    return " [ppn^2 x block = " + format_bytes(leader_bytes(in)) + " <= " + format_bytes(t.leader_max_bytes) + "]";
  }
  if (rule.name == "aggregate") {
    return " [ppn x block = " + format_bytes(aggregated_bytes(in)) + " <= " + format_bytes(t.sa_max_bytes) +
           ", " + shape + "]";
  }
  if (rule.name == "bandwidth-bound") {
    return " [ppn x block = " + format_bytes(aggregated_bytes(in)) + " > " + format_bytes(t.sa_max_bytes) + "]";
  }
  return "";
}

}  // namespace

std::span<const AlltoallRule> alltoall_rules() { return kRules; }

AlltoallDecision choose_alltoall(const AlltoallPolicyInput& input, const AlltoallThresholds& thresholds) {
  // The last rule matches everything, so the search always ends inside.
  const AlltoallRule* rule = kRules.begin();
  while (!rule->matches(input, thresholds)) ++rule;
  return {rule->algorithm, rule};
}

std::string explain(const AlltoallDecision& decision, const AlltoallPolicyInput& input,
                    const AlltoallThresholds& thresholds) {
  return std::string(decision.rule->why) + numbers_for(*decision.rule, input, thresholds);
}

bool alltoall_native_for_every_block(int nodes, int ppn) { return nodes <= 1 || ppn <= 1; }

}  // namespace shim::coll
