// MPI_Bcast and MPI_Bcast_c: check, dispatch, fall back.
#include <mpi.h>

#include "shim/bcast_dispatch.hpp"
#include "shim/export.hpp"
#include "shim/runtime.hpp"

namespace {

// Out of line, so the interposers stay a flag test and a tail call on the
// fast path.
template <typename Count, typename Native>
[[gnu::noinline]] int bcast_through_shim(void* buffer, Count count, MPI_Datatype type, int root, MPI_Comm comm,
                                         Native native) {
  if (shim::shim_active()) {
    const auto outcome = shim::dispatch_bcast(buffer, count, type, root, comm);
    if (!outcome.use_native) return outcome.rc;
  }
  return native(buffer, count, type, root, comm);
}

}  // namespace

SHIM_EXPORT int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  if (shim::bcast_fast_path()) return PMPI_Bcast(buffer, count, type, root, comm);
  return bcast_through_shim(buffer, count, type, root, comm, PMPI_Bcast);
}

SHIM_EXPORT int MPI_Bcast_c(void* buffer, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm) {
  if (shim::bcast_fast_path()) return PMPI_Bcast_c(buffer, count, type, root, comm);
  return bcast_through_shim(buffer, count, type, root, comm, PMPI_Bcast_c);
}
