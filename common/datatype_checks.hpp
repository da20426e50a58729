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

}  // namespace shim
