// MPI_Init, MPI_Init_thread and MPI_Finalize: start shim after MPI is up and
// stop it while MPI is still usable.
#include <mpi.h>

#include "shim/export.hpp"
#include "shim/runtime.hpp"

SHIM_EXPORT int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) shim::start_runtime(shim::StartMode::collective);
  return rc;
}

SHIM_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) shim::start_runtime(shim::StartMode::collective);
  return rc;
}

SHIM_EXPORT int MPI_Finalize(void) {
  shim::stop_runtime(shim::StopCause::finalize_wrapper);
  return PMPI_Finalize();
}
