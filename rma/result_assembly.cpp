#include "rma/result_assembly.hpp"

#include "common/bottom_buffer.hpp"
#include "common/datatype_checks.hpp"
#include "common/local_comm.hpp"
#include "common/mpi_try.hpp"

namespace shim::rma {

void ResultAssembly::keep(void* buffer, MPI_Count count, MPI_Datatype type, std::int64_t packed_bytes) {
  result_ = buffer;
  count_ = count;
  type_ = type;
  packed.resize(static_cast<std::size_t>(packed_bytes));
}

int ResultAssembly::hold_type() {
  if (owned_type_ || predefined_type(type_)) return MPI_SUCCESS;
  SHIM_TRY(PMPI_Type_dup(type_, owned_type_.out()));
  type_ = owned_type_.get();
  return MPI_SUCCESS;
}

int ResultAssembly::finish() {
  done = true;
  MPI_Count position = 0;
  RebasedBuffer user;
  SHIM_TRY(rebase_bottom(result_, type_, user));
  return PMPI_Unpack_c(packed.data(), static_cast<MPI_Count>(packed.size()), &position, user.base, count_, user.type,
                       local_comm());
}

}  // namespace shim::rma
