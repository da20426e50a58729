// What the per-collective dispatchers share: SHIM_VERBOSE's decision lines
// and raising errors the way MPI would.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "shim/comm_state.hpp"

namespace shim {

// "<collective> on <comm>: <what>; <size label> <n> (class <=c) -> <algorithm>: <reason>"
void announce_decision(std::string_view collective, const CommState& state, const std::string& what,
                       std::string_view size_label, std::int64_t bytes, std::string_view algorithm,
                       const std::string& reason);

// Raises `rc` on the user's communicator's error handler, as MPI would, and
// returns it.
int raise_error(MPI_Comm comm, int rc);

}  // namespace shim
