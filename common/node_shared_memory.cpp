#include "common/node_shared_memory.hpp"

#include <cstring>

#include "common/mpi_try.hpp"

namespace shim {

int NodeSharedMemory::allocate(MPI_Comm node, MPI_Aint bytes, int disp_unit, bool own_pages,
                               std::unique_ptr<NodeSharedMemory>& out) {
  std::unique_ptr<NodeSharedMemory> memory(new NodeSharedMemory);
  memory->node_ = node;
  SHIM_TRY(PMPI_Comm_rank(node, &memory->node_rank_));
  SHIM_TRY(memory->allocate_segments(bytes, disp_unit, own_pages));
  SHIM_TRY(memory->allocate_lock_words());
  out = std::move(memory);
  return MPI_SUCCESS;
}

int NodeSharedMemory::allocate_segments(MPI_Aint bytes, int disp_unit, bool own_pages) {
  OwnedInfo info;
  if (own_pages) {
    SHIM_TRY(PMPI_Info_create(info.out()));
    SHIM_TRY(PMPI_Info_set(info.get(), "alloc_shared_noncontig", "true"));
  }
  unsigned char* base = nullptr;
  SHIM_TRY(PMPI_Win_allocate_shared(bytes, disp_unit, info ? info.get() : MPI_INFO_NULL, node_, &base, data_.out()));
  SHIM_TRY(open_epoch(data_.get()));
  int node_size = 0;
  SHIM_TRY(PMPI_Comm_size(node_, &node_size));
  segments_.resize(static_cast<std::size_t>(node_size));
  for (int local = 0; local < node_size; ++local) {
    MPI_Aint size = 0;
    int unit = 0;
    void* segment = nullptr;
    SHIM_TRY(PMPI_Win_shared_query(data_.get(), local, &size, &unit, &segment));
    segments_[static_cast<std::size_t>(local)] = {static_cast<unsigned char*>(segment), size};
  }
  return MPI_SUCCESS;
}

int NodeSharedMemory::allocate_lock_words() {
  const MPI_Aint bytes = node_rank_ == 0 ? static_cast<MPI_Aint>(StripeLocks::kBytes) : 0;
  void* words = nullptr;
  SHIM_TRY(PMPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, node_, &words, locks_.out()));
  SHIM_TRY(open_epoch(locks_.get()));
  MPI_Aint size = 0;
  int unit = 0;
  SHIM_TRY(PMPI_Win_shared_query(locks_.get(), 0, &size, &unit, &words));
  lock_words_ = static_cast<std::uint32_t*>(words);
  if (node_rank_ == 0) std::memset(lock_words_, 0, StripeLocks::kBytes);
  // The zeroed words are seen by every process before anyone locks.
  return sync();
}

int NodeSharedMemory::sync() const {
  auto memory_barrier = [this] {
    SHIM_TRY(PMPI_Win_sync(data_.get()));
    return locks_ ? PMPI_Win_sync(locks_.get()) : MPI_SUCCESS;
  };
  SHIM_TRY(memory_barrier());
  SHIM_TRY(PMPI_Barrier(node_));
  return memory_barrier();
}

// shim's own windows report errors to shim, never to a fatal handler: an
// error on the way out of a failed creation must not abort the job.
int NodeSharedMemory::open_epoch(MPI_Win window) {
  SHIM_TRY(PMPI_Win_set_errhandler(window, MPI_ERRORS_RETURN));
  SHIM_TRY(PMPI_Win_lock_all(MPI_MODE_NOCHECK, window));
  ++epochs_open_;
  return MPI_SUCCESS;
}

int NodeSharedMemory::release() {
  // A window in an epoch cannot be freed. Epochs were opened data window
  // first. Every step runs even after an error, so nothing stays behind.
  int rc = MPI_SUCCESS;
  auto keep_first = [&rc](int step) {
    if (rc == MPI_SUCCESS) rc = step;
  };
  if (epochs_open_ == 2) keep_first(PMPI_Win_unlock_all(locks_.get()));
  if (epochs_open_ >= 1) keep_first(PMPI_Win_unlock_all(data_.get()));
  epochs_open_ = 0;
  keep_first(locks_.free());
  keep_first(data_.free());
  segments_.clear();
  lock_words_ = nullptr;
  return rc;
}

// Nothing to report to from a destructor; release() reports.
NodeSharedMemory::~NodeSharedMemory() { static_cast<void>(release()); }

}  // namespace shim
