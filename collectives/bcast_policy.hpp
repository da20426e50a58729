// Automatic broadcast selection as a table of rules, tried in order; the
// first that matches decides and explains itself (SHIM_VERBOSE, shim-info).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "collectives/bcast_algorithm.hpp"

namespace shim::coll {

struct BcastPolicyInput {
  std::int64_t bytes = 0;
  int nodes = 1;
  int ppn = 1;      // largest number of processes on one node
  int subnets = 0;  // subnets the communicator spans by the network profile; 0 without one
};

struct BcastRule {
  std::string_view name;
  std::string_view condition;
  BcastAlgorithm algorithm;
  std::string_view why;
  bool (*matches)(const BcastPolicyInput&);
};

std::span<const BcastRule> bcast_rules();

struct BcastDecision {
  BcastAlgorithm algorithm;
  const BcastRule* rule;
};

BcastDecision choose_bcast(const BcastPolicyInput& input);
std::string explain(const BcastDecision& decision, const BcastPolicyInput& input);

// True when the table picks native for every message and root.
bool bcast_native_for_every_size(int nodes, int ppn, int subnets);

}  // namespace shim::coll
