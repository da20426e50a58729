#include "common/datatype_checks.hpp"

#include "common/local_comm.hpp"

namespace shim {

bool predefined_type(MPI_Datatype type) {
  int ints = 0, addresses = 0, types = 0, combiner = 0;
  return PMPI_Type_get_envelope(type, &ints, &addresses, &types, &combiner) == MPI_SUCCESS &&
         (combiner == MPI_COMBINER_NAMED || combiner == MPI_COMBINER_F90_REAL || combiner == MPI_COMBINER_F90_COMPLEX ||
          combiner == MPI_COMBINER_F90_INTEGER);
}

// (The int forms: the simulated build's MPI has no large-count calls. A type
// too large for an int answers with an error, and MPI gets the call.)
bool committed_type(MPI_Datatype type) {
  int bytes = 0;
  return type != MPI_DATATYPE_NULL && PMPI_Pack_size(1, type, local_comm(), &bytes) == MPI_SUCCESS;
}

}  // namespace shim
