// Automatic broadcast selection (SHIM_BCAST=auto) as a rule table: the first
// matching rule decides and explains itself (SHIM_VERBOSE, shim-info).
#pragma once

#include <cstdint>

#include "collectives/bcast_algorithm.hpp"
#include "common/rule_table.hpp"

namespace shim::coll {

struct BcastFacts {
  std::int64_t bytes = 0;
  int nodes = 1;
  int ppn = 1;               // largest number of processes on one node
  int subnets = 0;           // subnets the communicator spans by the network profile; 0 without one
  bool consecutive = false;  // each node's ranks are one ascending block (topo::Layout::consecutive)
};

// Medium messages, [min, max) bytes, where MPICH's own broadcast (a scatter
// then an allgather) beats shim's tree when each node's ranks are one block.
inline constexpr std::int64_t kBcastMediumMin = 32 * 1024;
inline constexpr std::int64_t kBcastMediumMax = 256 * 1024;

using BcastRule = Rule<BcastFacts, BcastAlgorithm>;
using BcastPolicy = RuleTable<BcastFacts, BcastAlgorithm>;

const BcastPolicy& bcast_policy();

// True when the table picks native for every message and root.
bool bcast_native_for_every_size(int nodes, int ppn, int subnets);

}  // namespace shim::coll
