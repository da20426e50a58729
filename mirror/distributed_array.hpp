// The distributed side of mirrored windows: N elements block-distributed
// over a communicator (rank r holds block r of BlockDistribution(N, size)),
// exposed as an MPI window with disp_unit = the element size, so element i
// is at displacement i - block(owner).first on its owner.
//
// The memory comes from MPI_Alloc_mem and MPI_Win_create, not
// MPI_Win_allocate: Debian's MPICH 4.0.2 MPI_Win_allocate misplaces RMA
// aimed at windows whose per-rank size is an odd multiple of 8 bytes
// (MPICH issue #6110).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "common/element_kind.hpp"
#include "common/mpi_handle.hpp"
#include "mirror/block_distribution.hpp"

namespace shim::mirror {

class DistributedArray {
 public:
  DistributedArray(const DistributedArray&) = delete;
  DistributedArray& operator=(const DistributedArray&) = delete;
  // Collective, like release(); the communicator duplicate outlives
  // release() so that its errors can still be raised on it.
  ~DistributedArray() = default;

  // Collective over comm; the memory starts zeroed.
  static int create(std::int64_t count, MPI_Datatype type, ElementKind kind, MPI_Comm comm,
                    std::unique_ptr<DistributedArray>& out);
  // Collective: frees the window and its memory.
  int release();

  MPI_Comm comm() const { return comm_.get(); }  // a duplicate of the user's
  MPI_Win window() const { return window_.get(); }
  std::int64_t count() const { return blocks_.count(); }
  MPI_Datatype type() const { return type_; }
  int rank() const { return rank_; }
  Range block(int rank) const { return blocks_.block(rank); }
  int owner(std::int64_t index) const { return blocks_.owner(index); }
  // This process's block, in its window memory.
  std::byte* local_data() const { return memory_.get(); }

 private:
  DistributedArray() = default;

  OwnedComm comm_;
  OwnedMpiMemory memory_;  // the window's: freed after it
  OwnedWin window_;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  int rank_ = 0;
  BlockDistribution blocks_{0, 1};
};

}  // namespace shim::mirror
