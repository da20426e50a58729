// Questions about a user's datatype that several wings ask before they
// build on it.
#pragma once

#include <mpi.h>

#include <functional>

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
// for data at address 0, of a predefined type or of a derived one with data
// that starts at its origin. A null buffer under a derived type without data
// is taken (nothing is read or written); under a datatype of absolute
// addresses it is MPI_BOTTOM, a valid buffer that some ranks of a collective
// may pass where the others pass their own memory, so every rank must take
// it the same way.
bool null_buffer_rejected(const void* buffer, MPI_Count count, MPI_Datatype type);
// Whether `type` holds basic elements of different sizes (MPI_DOUBLE_INT, a
// struct of a char and a double, ...). MPICH 4.0.2 (ch4:ucx) fails a
// message of contiguous bytes received into such a type once it leaves the
// eager protocol ("Message truncated" from 8 KiB here), where a message
// sent with a datatype of the same signature arrives intact.
// The answer is cached on a derived type (MPI_Type_dup carries it over).
bool mixes_element_sizes(MPI_Datatype type);
// Frees the keyval of those cached answers (at shim's stop).
void free_datatype_answers_keyval();
// Calls `visit` with each predefined type `type` is built from, depth first
// (a part a constructor lists more than once, once), while it returns true.
// MPI's error code from reading the type.
int visit_predefined_parts(MPI_Datatype type, const std::function<bool(MPI_Datatype)>& visit);

}  // namespace shim
