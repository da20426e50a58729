// The alltoall decision path: checks that shim can handle a call, picks the
// algorithm (policy table, SHIM_ALLTOALL, or the control API), announces it
// under SHIM_VERBOSE, counts it, and runs it. Anything it cannot handle goes
// to native MPI, explicitly.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>

#include "collectives/alltoall_algorithm.hpp"
#include "collectives/alltoall_runner.hpp"
#include "shim/comm_state.hpp"
#include "topology/hierarchy.hpp"

namespace shim {

struct AlltoallChoiceMade {
  coll::AlltoallAlgorithm algorithm;
  std::string rule;    // policy rule name, or what forced the choice
  std::string reason;  // the human explanation, with numbers
};

// What shim does for a block of `block_bytes` on this communicator.
AlltoallChoiceMade decide_alltoall(const CommState& state, const topo::Hierarchy& hierarchy, std::int64_t block_bytes);

struct AlltoallOutcome {
  bool use_native;  // the caller runs PMPI_Alltoall(_c) with the original arguments
  int rc;           // otherwise: the result, already raised on comm's handler
};

AlltoallOutcome dispatch_alltoall(const coll::AlltoallArgs& args, MPI_Comm comm);

}  // namespace shim
