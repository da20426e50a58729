#include "common/local_comm.hpp"

#include "common/mpi_try.hpp"

namespace shim {

namespace {

// A plain handle: a static owner would free it after MPI_Finalize when a
// program exits without stopping shim.
MPI_Comm g_local = MPI_COMM_NULL;

}  // namespace

int open_local_comm() {
  if (g_local != MPI_COMM_NULL) return MPI_SUCCESS;
  MPI_Comm comm = MPI_COMM_NULL;
  SHIM_TRY(PMPI_Comm_dup(MPI_COMM_SELF, &comm));
  if (const int rc = PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN); rc != MPI_SUCCESS) {
    static_cast<void>(PMPI_Comm_free(&comm));  // the error that matters is rc
    return rc;
  }
  g_local = comm;
  return MPI_SUCCESS;
}

void close_local_comm() {
  // Freeing a communicator only shim used cannot fail.
  if (g_local != MPI_COMM_NULL) static_cast<void>(PMPI_Comm_free(&g_local));
}

MPI_Comm local_comm() { return g_local; }

}  // namespace shim
