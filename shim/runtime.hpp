// Process-wide lifecycle: settings, the attribute keyval, and the finalize
// hook. Started right after PMPI_Init* by the MPI_Init wrappers, or lazily by
// the first intercepted call when MPI was initialised behind shim's back
// (MPICH's mpi_f08 MPI_Init does not go through the C MPI_Init).
#pragma once

#include "shim/config.hpp"

namespace shim {

enum class StartMode {
  // Inside MPI_Init on every process: rank 0's settings are broadcast so all
  // processes decide alike, and MPI_COMM_WORLD's hierarchy is built eagerly.
  collective,
  // From whichever call came first on this process: settings are read
  // locally, and the stats report is printed per process.
  lazy,
};

void start_runtime(StartMode mode);

enum class StopCause {
  finalize_wrapper,
  // MPI_COMM_SELF's attributes are deleted first thing in MPI_Finalize, while
  // MPI is fully usable; this catches a Finalize that bypassed the wrapper.
  self_attribute_hook,
};
// Prints the stats report and releases per-communicator state. Idempotent.
void stop_runtime(StopCause cause);

// Started (lazily if needed), not stopped, and SHIM_ENABLE is on.
bool shim_active();
// Started (lazily if needed) and not stopped, whatever SHIM_ENABLE says.
bool runtime_running();

const Config& config();
int world_rank();

}  // namespace shim
