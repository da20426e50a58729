#include "common/node_shared_memory.hpp"

#include <cstring>

#include "common/mpi_try.hpp"

namespace shim {

int allocate_lock_words(MPI_Comm node, std::unique_ptr<SharedSegments>& out) {
  int node_rank = 0;
  SHIM_TRY(PMPI_Comm_rank(node, &node_rank));
  const MPI_Aint bytes = node_rank == 0 ? static_cast<MPI_Aint>(StripeLocks::kBytes) : 0;
  std::unique_ptr<SharedSegments> words;
  SHIM_TRY(SharedSegments::allocate(node, bytes, 1, false, words));
  if (node_rank == 0) std::memset(words->mine(), 0, StripeLocks::kBytes);
  SHIM_TRY(words->sync());
  SHIM_TRY(PMPI_Barrier(node));
  SHIM_TRY(words->sync());
  out = std::move(words);
  return MPI_SUCCESS;
}

int NodeSharedMemory::allocate(MPI_Comm node, MPI_Aint bytes, int disp_unit, bool own_pages,
                               std::unique_ptr<NodeSharedMemory>& out) {
  auto memory = std::make_unique<NodeSharedMemory>();
  memory->node_ = node;
  SHIM_TRY(SharedSegments::allocate(node, bytes, disp_unit, own_pages, memory->data_));
  SHIM_TRY(allocate_lock_words(node, memory->locks_));
  memory->lock_words_ = reinterpret_cast<std::uint32_t*>(memory->locks_->segments()[0].base);
  out = std::move(memory);
  return MPI_SUCCESS;
}

int NodeSharedMemory::release() {
  // Both blocks go even after an error, so nothing stays behind.
  const int locks = locks_ ? locks_->release() : MPI_SUCCESS;
  const int data = data_ ? data_->release() : MPI_SUCCESS;
  lock_words_ = nullptr;
  return locks != MPI_SUCCESS ? locks : data;
}

int NodeSharedMemory::sync() const {
  auto memory_barrier = [this] {
    SHIM_TRY(data_->sync());
    return locks_->sync();
  };
  SHIM_TRY(memory_barrier());
  SHIM_TRY(PMPI_Barrier(node_));
  return memory_barrier();
}

}  // namespace shim
