#include "mirror/distributed_array.hpp"

#include <cstring>

namespace shim::mirror {

int DistributedArray::create(std::int64_t count, MPI_Datatype type, ElementKind kind, MPI_Comm comm,
                             std::unique_ptr<DistributedArray>& out) {
  std::unique_ptr<DistributedArray> array(new DistributedArray());
  int size = 0;
  PMPI_Comm_size(comm, &size);
  PMPI_Comm_rank(comm, &array->rank_);
  array->type_ = type;
  array->blocks_ = BlockDistribution(count, size);
  if (int rc = PMPI_Comm_dup(comm, &array->comm_); rc != MPI_SUCCESS) return rc;

  const std::size_t element = element_size(kind);
  const auto bytes = static_cast<MPI_Aint>(array->blocks_.block(array->rank_).count) * static_cast<MPI_Aint>(element);
  void* memory = nullptr;
  if (bytes > 0) {
    if (int rc = PMPI_Alloc_mem(bytes, MPI_INFO_NULL, &memory); rc != MPI_SUCCESS) {
      array->release();
      return rc;
    }
    std::memset(memory, 0, static_cast<std::size_t>(bytes));
  }
  array->local_ = static_cast<std::byte*>(memory);
  if (int rc = PMPI_Win_create(memory, bytes, static_cast<int>(element), MPI_INFO_NULL, array->comm_,
                               &array->window_);
      rc != MPI_SUCCESS) {
    array->window_ = MPI_WIN_NULL;
    array->release();
    return rc;
  }
  out = std::move(array);
  return MPI_SUCCESS;
}

int DistributedArray::release() {
  const int rc = window_ == MPI_WIN_NULL ? MPI_SUCCESS : PMPI_Win_free(&window_);
  if (local_ != nullptr) {
    PMPI_Free_mem(local_);
    local_ = nullptr;
  }
  return rc;
}

DistributedArray::~DistributedArray() {
  if (comm_ != MPI_COMM_NULL) PMPI_Comm_free(&comm_);
}

}  // namespace shim::mirror
