// The alltoall decision path: checks that shim can handle a call, picks the
// algorithm (policy table, SHIM_ALLTOALL, or the control API), announces it
// under SHIM_VERBOSE, counts it, and runs it. Anything it cannot handle goes
// to native MPI, explicitly.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "collectives/alltoall_algorithm.hpp"
#include "collectives/alltoall_policy.hpp"
#include "collectives/alltoall_runner.hpp"
#include "shim/comm_state.hpp"
#include "topology/hierarchy.hpp"

namespace shim {

struct AlltoallChoiceMade {
  coll::AlltoallAlgorithm algorithm;
  const coll::AlltoallRule* rule;  // nullptr when SHIM_ALLTOALL or the control API forced it
  bool forced_by_api;
};

// What shim does for a block of `block_bytes` on this communicator. Runs on
// every call, so it only looks things up.
AlltoallChoiceMade decide_alltoall(const CommState& state, const topo::Hierarchy& hierarchy, std::int64_t block_bytes);

// The policy rule's name, or "forced".
std::string_view rule_name(const AlltoallChoiceMade& made);
// Why, with this call's numbers and what the layout changes.
std::string explain_alltoall(const AlltoallChoiceMade& made, const topo::Hierarchy& hierarchy,
                             std::int64_t block_bytes);

struct AlltoallOutcome {
  bool use_native;  // the caller runs PMPI_Alltoall(_c) with the original arguments
  int rc;           // otherwise: the result, already raised on comm's handler
};

AlltoallOutcome dispatch_alltoall(const coll::AlltoallArgs& args, MPI_Comm comm);

}  // namespace shim
