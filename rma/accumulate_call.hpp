// One call of the accumulate family, as the user made it. Compare-and-swap
// has `compare`; the fetching calls have `result`. `form` says which call
// it was where MPI checks the calls differently.
#pragma once

#include <mpi.h>

namespace shim::rma {

// MPI checks the buffers of the calls with counts and datatypes as user
// buffers (null only as MPI_BOTTOM: MPI_ERR_BUFFER), those of the
// single-element calls as arguments (never null: MPI_ERR_ARG).
enum class AccumulateForm : unsigned char { counted, fetch_and_op, compare_and_swap };

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
  AccumulateForm form = AccumulateForm::counted;
};

}  // namespace shim::rma
