// One call of the accumulate family, as the user made it. Compare-and-swap
// has `compare`; the fetching calls have `result`.
#pragma once

#include <mpi.h>

namespace shim::rma {

struct AccumulateCall {
  const void* origin = nullptr;
  MPI_Count origin_count = 0;
  MPI_Datatype origin_type = MPI_DATATYPE_NULL;
  void* result = nullptr;
  MPI_Count result_count = 0;
  MPI_Datatype result_type = MPI_DATATYPE_NULL;
  const void* compare = nullptr;
  int target = MPI_PROC_NULL;
  MPI_Aint displacement = 0;
  MPI_Count target_count = 0;
  MPI_Datatype target_type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  bool fetch = false;
};

}  // namespace shim::rma
