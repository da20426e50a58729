// The RMA wing's process-wide start and stop, as the runtime drives them:
// the keyval that marks shim's windows and, when the settings and MPI's
// thread level allow, one communication server per node.
#pragma once

#include <string>

#include "shim/runtime.hpp"

namespace shim {

// After the settings are read and MPI_COMM_WORLD's hierarchy is built.
void start_rma_wing(StartMode mode);
// Collective when servers run; before per-communicator state goes.
void stop_rma_wing();
// Whether MPI_Win_allocate may create shim's windows.
bool rma_wing_ready();
// Whether this MPI's MPI_Win_lock returns only with the lock held
// (rma/lock_grant.hpp), read once when the wing starts.
bool mpi_locks_held_on_return();
// The running servers' clusters in one line: how many, the largest
// server's buffers and peers, and why the width is what it is.
std::string describe_server_clusters();

}  // namespace shim
