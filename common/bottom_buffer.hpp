// A user buffer given as MPI_BOTTOM (null, under a datatype of absolute
// addresses), described again from a non-null base: MPI_Pack, which shim's
// algorithms call on user buffers, rejects a null pointer whatever the
// datatype says.
#pragma once

#include <mpi.h>

#include "common/mpi_handle.hpp"

namespace shim {

struct RebasedBuffer {
  void* base = nullptr;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  OwnedType owned;  // type, when it had to be made
};

// `buffer` and `type` unchanged unless buffer is null; then the base is the
// datatype's first byte and the type the user's shifted back by as much, so
// counts, extents and every element's address stay as they were. Returns
// MPI_SUCCESS or an MPI error code.
int rebase_bottom(const void* buffer, MPI_Datatype type, RebasedBuffer& out);

}  // namespace shim
