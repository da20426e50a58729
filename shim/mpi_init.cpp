// MPI_Init, MPI_Init_thread and MPI_Finalize: start shim after MPI is up and
// stop it while MPI is still usable. When the communication servers are
// wanted, MPI is initialised with MPI_THREAD_MULTIPLE underneath (a server
// thread calls MPI beside the application); the application is still told
// the level it asked for.
#include <mpi.h>

#include <algorithm>

#include "shim/export.hpp"
#include "shim/runtime.hpp"

namespace {

int init_thread(int* argc, char*** argv, int required, int* provided) {
  if (!shim::server_wanted_before_init() || required >= MPI_THREAD_MULTIPLE) {
    return PMPI_Init_thread(argc, argv, required, provided);
  }
  const int rc = PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, provided);
  if (rc == MPI_SUCCESS && *provided >= required) {
    shim::remember_thread_level_asked(required);
    *provided = required;
  }
  return rc;
}

}  // namespace

SHIM_EXPORT int MPI_Init(int* argc, char*** argv) {
  int provided = MPI_THREAD_SINGLE;
  const int rc = init_thread(argc, argv, MPI_THREAD_SINGLE, &provided);
  if (rc == MPI_SUCCESS) shim::start_runtime(shim::StartMode::collective);
  return rc;
}

SHIM_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) shim::start_runtime(shim::StartMode::collective);
  return rc;
}

SHIM_EXPORT int MPI_Query_thread(int* provided) {
  const int rc = PMPI_Query_thread(provided);
  const int asked = shim::thread_level_asked();
  if (rc == MPI_SUCCESS && asked >= 0) *provided = std::min(*provided, asked);
  return rc;
}

SHIM_EXPORT int MPI_Finalize(void) {
  shim::stop_runtime(shim::StopCause::finalize_wrapper);
  return PMPI_Finalize();
}
