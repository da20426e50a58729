// A duplicate of MPI_COMM_SELF whose errors come back to shim instead of
// going to a handler: the communicator of shim's local pack, unpack and
// datatype checks, so that a bad datatype is reported once, where MPI would
// report it. Opened after MPI_Init, closed before MPI_Finalize.
#pragma once

#include <mpi.h>

namespace shim {

int open_local_comm();
void close_local_comm();
MPI_Comm local_comm();

}  // namespace shim
