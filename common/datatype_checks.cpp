#include "common/datatype_checks.hpp"

#include "common/local_comm.hpp"

namespace shim {

// (The large-count form: MPICH refuses the int form for a datatype built
// with large counts, through the error handler.)
bool predefined_type(MPI_Datatype type) {
  MPI_Count ints = 0, addresses = 0, counts = 0, types = 0;
  int combiner = 0;
  return PMPI_Type_get_envelope_c(type, &ints, &addresses, &counts, &types, &combiner) == MPI_SUCCESS &&
         (combiner == MPI_COMBINER_NAMED || combiner == MPI_COMBINER_F90_REAL || combiner == MPI_COMBINER_F90_COMPLEX ||
          combiner == MPI_COMBINER_F90_INTEGER);
}

// (The large-count form: with the int form a type of 2 GiB or more answered
// "not committed", so the rank that passed it left a collective to MPI while
// ranks that described the same message in smaller elements ran shim's.)
bool committed_type(MPI_Datatype type) {
  MPI_Count bytes = 0;
  return type != MPI_DATATYPE_NULL && PMPI_Pack_size_c(1, type, local_comm(), &bytes) == MPI_SUCCESS;
}

bool null_buffer_rejected(const void* buffer, MPI_Count count, MPI_Datatype type) {
  if (buffer != nullptr || count == 0) return false;
  if (predefined_type(type)) return true;
  MPI_Aint true_lb = 0;
  MPI_Aint true_extent = 0;
  return PMPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS || true_lb == 0;
}

}  // namespace shim
