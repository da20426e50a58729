// The broadcast decision path: checks that shim can handle a call, picks the
// algorithm (policy table, SHIM_BCAST, or the control API), announces it
// under SHIM_VERBOSE, counts it, and runs this rank's part of the tree.
// Anything it cannot handle goes to native MPI, explicitly.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "collectives/bcast_algorithm.hpp"
#include "collectives/bcast_policy.hpp"
#include "shim/comm_state.hpp"

namespace shim {

struct BcastChoiceMade {
  coll::BcastAlgorithm algorithm;
  const coll::BcastRule* rule;  // nullptr when SHIM_BCAST or the control API forced it
  bool forced_by_api;
};

// Requires state.hierarchy(). Looks things up; builds nothing per call.
BcastChoiceMade decide_bcast(CommState& state, std::int64_t bytes);
std::string_view rule_name(const BcastChoiceMade& made);
std::string explain_bcast(const BcastChoiceMade& made, CommState& state, std::int64_t bytes);

struct BcastOutcome {
  bool use_native;  // the caller runs PMPI_Bcast(_c) with the original arguments
  int rc;           // otherwise: the result, already raised on comm's handler
};

BcastOutcome dispatch_bcast(void* buffer, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm);

}  // namespace shim
