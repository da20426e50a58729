#include "mirror/distributed_array.hpp"

#include <cstring>

#include "common/mpi_try.hpp"

namespace shim::mirror {

int DistributedArray::create(std::int64_t count, MPI_Datatype type, ElementKind kind, MPI_Comm comm,
                             std::unique_ptr<DistributedArray>& out) {
  std::unique_ptr<DistributedArray> array(new DistributedArray());
  int size = 0;
  SHIM_TRY(PMPI_Comm_size(comm, &size));
  SHIM_TRY(PMPI_Comm_rank(comm, &array->rank_));
  array->type_ = type;
  array->blocks_ = BlockDistribution(count, size);
  SHIM_TRY(PMPI_Comm_dup(comm, array->comm_.out()));

  const std::size_t element = element_size(kind);
  const auto bytes = static_cast<MPI_Aint>(array->blocks_.block(array->rank_).count) * static_cast<MPI_Aint>(element);
  if (bytes > 0) {
    std::byte* memory = nullptr;
    SHIM_TRY(PMPI_Alloc_mem(bytes, MPI_INFO_NULL, &memory));
    array->memory_.reset(memory);
    std::memset(memory, 0, static_cast<std::size_t>(bytes));
  }
  SHIM_TRY(PMPI_Win_create(array->memory_.get(), bytes, static_cast<int>(element), MPI_INFO_NULL, array->comm_.get(),
                           array->window_.out()));
  out = std::move(array);
  return MPI_SUCCESS;
}

int DistributedArray::release() {
  const int rc = window_.free();
  memory_.reset();
  return rc;
}

}  // namespace shim::mirror
