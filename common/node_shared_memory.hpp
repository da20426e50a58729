// Memory shared by the processes of a node together with the node's stripe
// lock words (a second small shared block, zeroed: all unlocked), as a
// mirrored window uses them.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <span>

#include "common/shared_segments.hpp"
#include "common/stripe_locks.hpp"

namespace shim {

class NodeSharedMemory {
 public:
  // Collective over `node`, which must outlive the result. `own_pages` as in
  // SharedSegments. Returns an MPI error code; on error nothing stays
  // allocated.
  static int allocate(MPI_Comm node, MPI_Aint bytes, int disp_unit, bool own_pages,
                      std::unique_ptr<NodeSharedMemory>& out);
  // Collective over the node; the memory is gone afterwards.
  int release();

  std::span<const SharedSegment> segments() const { return data_->segments(); }
  unsigned char* mine() const { return data_->mine(); }
  StripeLocks locks() const { return StripeLocks(lock_words_); }

  // Orders every process's earlier stores before every process's later
  // loads: a memory barrier, a barrier over the node, a memory barrier.
  int sync() const;

 private:
  MPI_Comm node_ = MPI_COMM_NULL;
  std::unique_ptr<SharedSegments> data_;
  std::unique_ptr<SharedSegments> locks_;
  std::uint32_t* lock_words_ = nullptr;
};

// The node's lock words: a shared block that only local rank 0 holds,
// zeroed and seen zeroed by every process before anyone locks. Collective
// over `node`.
int allocate_lock_words(MPI_Comm node, std::unique_ptr<SharedSegments>& out);

}  // namespace shim
