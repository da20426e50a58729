#include "rma/caller_computes.hpp"

#include <cstring>
#include <vector>

#include "common/local_comm.hpp"
#include "common/mpi_try.hpp"
#include "rma/combine.hpp"

namespace shim::rma {

namespace {

// Inside the exclusive epoch: the target's elements in memory layout (pair
// types have padding) in `native`, packed for combine(), updated, written
// back. `native` is the put's origin buffer: it must live until the unlock.
int get_compute_put(MPI_Win window, const AccumulateCall& call, MPI_Aint target_offset, const DatatypeLayout& target,
                    const unsigned char* stream, std::int64_t bytes, unsigned char* old_stream,
                    std::vector<unsigned char>& native) {
  const MPI_Datatype basic = target.basic;
  MPI_Count basic_lb = 0, basic_extent = 0;
  SHIM_TRY(PMPI_Type_get_extent_c(basic, &basic_lb, &basic_extent));
  const MPI_Count elements = bytes / target.basic_size;
  native.resize(static_cast<std::size_t>(elements * basic_extent));
  std::vector<unsigned char> packed(static_cast<std::size_t>(bytes));
  SHIM_TRY(PMPI_Get_c(native.data(), elements, basic, call.target, target_offset, call.target_count, call.target_type,
                      window));
  SHIM_TRY(PMPI_Win_flush(call.target, window));
  MPI_Count position = 0;
  SHIM_TRY(PMPI_Pack_c(native.data(), elements, basic, packed.data(), bytes, &position, local_comm()));
  if (call.compare != nullptr) {
    std::vector<unsigned char> previous(static_cast<std::size_t>(bytes));
    compare_and_swap(stream, call.compare, packed.data(), previous.data(), static_cast<int>(bytes));
    if (old_stream != nullptr) std::memcpy(old_stream, previous.data(), static_cast<std::size_t>(bytes));
  } else {
    if (old_stream != nullptr) std::memcpy(old_stream, packed.data(), static_cast<std::size_t>(bytes));
    SHIM_TRY(combine(call.op, basic, stream, packed.data(), elements));
  }
  if (call.op == MPI_NO_OP) return MPI_SUCCESS;
  position = 0;
  SHIM_TRY(PMPI_Unpack_c(packed.data(), bytes, &position, native.data(), elements, basic, local_comm()));
  return PMPI_Put_c(native.data(), elements, basic, call.target, target_offset, call.target_count, call.target_type,
                    window);
}

}  // namespace

int apply_caller(MPI_Win window, const AccumulateCall& call, MPI_Aint target_offset, const DatatypeLayout& target,
                 const unsigned char* stream, std::int64_t bytes, unsigned char* old_stream) {
  std::vector<unsigned char> native;
  SHIM_TRY(PMPI_Win_lock(MPI_LOCK_EXCLUSIVE, call.target, 0, window));
  const int rc = get_compute_put(window, call, target_offset, target, stream, bytes, old_stream, native);
  // The epoch closes whatever happened inside it.
  const int unlock_rc = PMPI_Win_unlock(call.target, window);
  return rc != MPI_SUCCESS ? rc : unlock_rc;
}

}  // namespace shim::rma
