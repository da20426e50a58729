#include "common/bottom_buffer.hpp"

#include "common/address.hpp"
#include "common/mpi_try.hpp"

namespace shim {

int rebase_bottom(const void* buffer, MPI_Datatype type, RebasedBuffer& out) {
  out.base = const_cast<void*>(buffer);
  out.type = type;
  if (buffer != nullptr) return MPI_SUCCESS;
  MPI_Aint true_lb = 0;
  MPI_Aint true_extent = 0;
  SHIM_TRY(PMPI_Type_get_true_extent(type, &true_lb, &true_extent));
  int one = 1;
  MPI_Aint back = -true_lb;
  SHIM_TRY(PMPI_Type_create_hindexed(1, &one, &back, type, out.owned.out()));
  out.base = pointer_at(true_lb);
  out.type = out.owned.get();
  return PMPI_Type_commit(&out.type);
}

}  // namespace shim
