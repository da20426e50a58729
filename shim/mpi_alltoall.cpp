// MPI_Alltoall and MPI_Alltoall_c: check, dispatch, fall back.
#include <mpi.h>

#include "shim/alltoall_dispatch.hpp"
#include "shim/export.hpp"
#include "shim/runtime.hpp"

namespace {

// Out of line, so the interposers stay a flag test and a tail call on the
// single-node fast path: inlined, this body made every call save and restore
// six registers first.
template <typename Count, typename Native>
[[gnu::noinline]] int alltoall_through_shim(const void* sendbuf, Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                            Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, Native native) {
  if (shim::shim_active()) {
    const auto outcome = shim::dispatch_alltoall({sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype}, comm);
    if (!outcome.use_native) return outcome.rc;
  }
  return native(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

}  // namespace

SHIM_EXPORT int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm) {
  if (shim::alltoall_fast_path()) {
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  }
  return alltoall_through_shim(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, PMPI_Alltoall);
}

SHIM_EXPORT int MPI_Alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                               MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (shim::alltoall_fast_path()) {
    return PMPI_Alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  }
  return alltoall_through_shim(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, PMPI_Alltoall_c);
}
