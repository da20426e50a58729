#include "shim/errors.hpp"

namespace shim {

int raise_on_comm(MPI_Comm comm, int rc) {
  // The handler's own result is the user's business (a handler that returns
  // instead of aborting); the caller returns rc, as MPI's calls do.
  if (rc != MPI_SUCCESS) static_cast<void>(PMPI_Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_SELF : comm, rc));
  return rc;
}

int raise_on_window(MPI_Win win, int rc) {
  if (rc == MPI_SUCCESS) return rc;
  if (win == MPI_WIN_NULL) return raise_on_comm(MPI_COMM_SELF, rc);
  static_cast<void>(PMPI_Win_call_errhandler(win, rc));
  return rc;
}

}  // namespace shim
