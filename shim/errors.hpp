// How shim reports an MPI error to the user, as native MPI would: on the
// error handler of the communicator or window the call was about, returning
// the code. Errors that belong to no valid communicator go to MPI_COMM_SELF
// (MPI-4.0, section 9.3). MPI_SUCCESS passes through untouched.
#pragma once

#include <mpi.h>

namespace shim {

int raise_on_comm(MPI_Comm comm, int rc);
// MPICH's MPI_Win and MPI_Comm are both int: the names keep them apart.
int raise_on_window(MPI_Win win, int rc);

}  // namespace shim
