// One block of node shared memory: each process's segment from
// PMPI_Win_allocate_shared over a node communicator, and every segment's
// address as this process sees it. The window stays in a shared lock_all
// epoch, MPI's model for load/store access to shared memory, and reports
// its errors to shim, never to a fatal handler.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "common/mpi_handle.hpp"

namespace shim {

struct SharedSegment {
  unsigned char* base = nullptr;
  std::int64_t bytes = 0;
};

class SharedSegments {
 public:
  SharedSegments(const SharedSegments&) = delete;
  SharedSegments& operator=(const SharedSegments&) = delete;
  // Collective over the node communicator, like the allocation.
  ~SharedSegments();
  // The same, reporting MPI's result; the memory is gone afterwards.
  int release();

  // Collective over `node`. `own_pages`: each segment on pages of its own
  // (MPI's alloc_shared_noncontig), so no page is shared between two
  // processes. Returns an MPI error code; on error nothing stays allocated.
  static int allocate(MPI_Comm node, MPI_Aint bytes, int disp_unit, bool own_pages,
                      std::unique_ptr<SharedSegments>& out);

  // By rank in the node communicator.
  std::span<const SharedSegment> segments() const { return segments_; }
  unsigned char* mine() const { return segments_[static_cast<std::size_t>(node_rank_)].base; }
  // A memory barrier for this memory (MPI_Win_sync).
  int sync() const { return PMPI_Win_sync(window_.get()); }

 private:
  SharedSegments() = default;

  int node_rank_ = 0;
  OwnedWin window_;
  bool epoch_open_ = false;
  std::vector<SharedSegment> segments_;
};

}  // namespace shim
