// MPI_Alltoall and MPI_Alltoall_c: check, dispatch, fall back.
#include <mpi.h>

#include "shim/alltoall_dispatch.hpp"
#include "shim/export.hpp"
#include "shim/runtime.hpp"

SHIM_EXPORT int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm) {
  if (!shim::alltoall_fast_path() && shim::shim_active()) {
    const auto outcome = shim::dispatch_alltoall({sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype}, comm);
    if (!outcome.use_native) return outcome.rc;
  }
  return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

SHIM_EXPORT int MPI_Alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                               MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (!shim::alltoall_fast_path() && shim::shim_active()) {
    const auto outcome = shim::dispatch_alltoall({sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype}, comm);
    if (!outcome.use_native) return outcome.rc;
  }
  return PMPI_Alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
