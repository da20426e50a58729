#include "common/shared_segments.hpp"

#include "common/mpi_try.hpp"

namespace shim {

int SharedSegments::allocate(MPI_Comm node, MPI_Aint bytes, int disp_unit, bool own_pages,
                             std::unique_ptr<SharedSegments>& out) {
  std::unique_ptr<SharedSegments> memory(new SharedSegments);
  SHIM_TRY(PMPI_Comm_rank(node, &memory->node_rank_));
  OwnedInfo info;
  if (own_pages) {
    SHIM_TRY(PMPI_Info_create(info.out()));
    SHIM_TRY(PMPI_Info_set(info.get(), "alloc_shared_noncontig", "true"));
  }
  unsigned char* base = nullptr;
  SHIM_TRY(PMPI_Win_allocate_shared(bytes, disp_unit, info ? info.get() : MPI_INFO_NULL, node, &base,
                                    memory->window_.out()));
  // An error on the way out of a failed creation must not abort the job.
  SHIM_TRY(PMPI_Win_set_errhandler(memory->window_.get(), MPI_ERRORS_RETURN));
  SHIM_TRY(PMPI_Win_lock_all(MPI_MODE_NOCHECK, memory->window_.get()));
  memory->epoch_open_ = true;
  int node_size = 0;
  SHIM_TRY(PMPI_Comm_size(node, &node_size));
  memory->segments_.resize(static_cast<std::size_t>(node_size));
  for (int local = 0; local < node_size; ++local) {
    MPI_Aint size = 0;
    int unit = 0;
    void* segment = nullptr;
    SHIM_TRY(PMPI_Win_shared_query(memory->window_.get(), local, &size, &unit, &segment));
    memory->segments_[static_cast<std::size_t>(local)] = {static_cast<unsigned char*>(segment), size};
  }
  out = std::move(memory);
  return MPI_SUCCESS;
}

int SharedSegments::release() {
  // A window in an epoch cannot be freed. Both steps run even after an
  // error, so nothing stays behind.
  const int unlocked = epoch_open_ ? PMPI_Win_unlock_all(window_.get()) : MPI_SUCCESS;
  epoch_open_ = false;
  const int freed = window_.free();
  segments_.clear();
  return unlocked != MPI_SUCCESS ? unlocked : freed;
}

// Nothing to report to from a destructor; release() reports.
SharedSegments::~SharedSegments() { static_cast<void>(release()); }

}  // namespace shim
