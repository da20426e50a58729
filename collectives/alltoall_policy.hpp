// Automatic alltoall selection as a table of rules, tried in order; the first
// that matches decides. The table explains itself: SHIM_VERBOSE prints the
// matching rule and its reason, and shim-info prints the whole table.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "collectives/alltoall_algorithm.hpp"
#include "topology/nic_class.hpp"

namespace shim::coll {

struct AlltoallThresholds {
  // SA while one aggregated inter-node message (ppn x block) stays this
  // small. 16 KiB puts the crossover where seed 001 measured it on 64 x 8
  // InfiniPath: SA beat the tuned native alltoall up to 2 KiB blocks.
  std::int64_t sa_max_bytes = 16 * 1024;
  // On offload NICs, leader-based while one leader-to-leader message
  // (ppn^2 x block) stays this small; beyond it the leader's copies dominate.
  std::int64_t leader_max_bytes = 8 * 1024;
};

struct AlltoallPolicyInput {
  std::int64_t block_bytes = 0;  // bytes per block (count x type size)
  int nodes = 1;
  int ppn = 1;  // largest number of processes on one node
  topo::NicClass nic = topo::NicClass::onload;
};

struct AlltoallRule {
  std::string_view name;
  std::string_view condition;  // human-readable form of `matches`
  AlltoallAlgorithm algorithm;
  std::string_view why;
  bool (*matches)(const AlltoallPolicyInput&, const AlltoallThresholds&);
};

std::span<const AlltoallRule> alltoall_rules();

struct AlltoallDecision {
  AlltoallAlgorithm algorithm;
  const AlltoallRule* rule;
};

// Runs on every call: no allocation, no formatting.
AlltoallDecision choose_alltoall(const AlltoallPolicyInput& input, const AlltoallThresholds& thresholds);

// The rule's reason with this call's numbers, for SHIM_VERBOSE and shim-info.
std::string explain(const AlltoallDecision& decision, const AlltoallPolicyInput& input,
                    const AlltoallThresholds& thresholds);

// True when the table picks native for every block size: one node, or one
// process per node. Every sub-communicator of such a layout is one too.
bool alltoall_native_for_every_block(int nodes, int ppn);

}  // namespace shim::coll
