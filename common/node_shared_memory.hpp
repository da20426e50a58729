// Memory shared by the processes of a node, as both mirrored windows and
// shim's MPI_Win_allocate windows use it: each process's segment from
// PMPI_Win_allocate_shared over the node communicator, every segment's
// address as this process sees it, and a second small shared window with the
// node's stripe lock words (zeroed: all unlocked). Both windows stay in a
// shared lock_all epoch, MPI's model for load/store access to shared memory.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "common/mpi_handle.hpp"
#include "common/stripe_locks.hpp"

namespace shim {

struct SharedSegment {
  unsigned char* base = nullptr;
  std::int64_t bytes = 0;
};

class NodeSharedMemory {
 public:
  NodeSharedMemory(const NodeSharedMemory&) = delete;
  NodeSharedMemory& operator=(const NodeSharedMemory&) = delete;
  // Collective over the node communicator, like the allocation.
  ~NodeSharedMemory();
  // The same, reporting MPI's result; the memory is gone afterwards.
  int release();

  // Collective over `node`, which must outlive the result. `own_pages`: each
  // segment on pages of its own (MPI's alloc_shared_noncontig), so no page
  // is shared between two processes. Returns an MPI error code; on error
  // nothing stays allocated.
  static int allocate(MPI_Comm node, MPI_Aint bytes, int disp_unit, bool own_pages,
                      std::unique_ptr<NodeSharedMemory>& out);

  // By rank in the node communicator.
  std::span<const SharedSegment> segments() const { return segments_; }
  unsigned char* mine() const { return segments_[static_cast<std::size_t>(node_rank_)].base; }
  std::uint32_t* lock_words() const { return lock_words_; }
  StripeLocks locks() const { return StripeLocks(lock_words_); }

  // Orders every process's earlier stores before every process's later
  // loads: a memory barrier, a barrier over the node, a memory barrier.
  int sync() const;

 private:
  NodeSharedMemory() = default;
  int allocate_segments(MPI_Aint bytes, int disp_unit, bool own_pages);
  int allocate_lock_words();
  int open_epoch(MPI_Win window);

  MPI_Comm node_ = MPI_COMM_NULL;
  int node_rank_ = 0;
  OwnedWin data_;
  OwnedWin locks_;
  std::vector<SharedSegment> segments_;
  std::uint32_t* lock_words_ = nullptr;
  int epochs_open_ = 0;  // data window first, then the lock window
};

}  // namespace shim
