// Questions about a user's datatype that several wings ask before they
// build on it.
#pragma once

#include <mpi.h>

namespace shim {

// A predefined datatype (named, or a Fortran parameterised one): never to
// be freed, and the same handle in every process.
bool predefined_type(MPI_Datatype type);
// Whether MPI takes `type` in communication: predefined, or derived and
// committed. Asked of MPI through MPI_Pack_size on a private communicator,
// so an uncommitted type costs no error report here; the caller leaves the
// call to MPI, which reports it where it should.
bool committed_type(MPI_Datatype type);
// Whether MPI rejects `buffer` as null (MPICH 4.0.2's rule): a null buffer
// holding data at address 0, of a predefined type or a derived one whose
// data starts at its origin. Otherwise a null buffer is MPI_BOTTOM under a
// datatype of absolute addresses, a valid buffer that some ranks of a
// collective may pass where the others pass their own memory, so every rank
// must take it the same way.
bool null_buffer_rejected(const void* buffer, MPI_Count count, MPI_Datatype type);

}  // namespace shim
