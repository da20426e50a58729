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

#include "mirror/block_distribution.hpp"
#include "mirror/element_kind.hpp"

namespace shim::mirror {

class DistributedArray {
 public:
  DistributedArray(const DistributedArray&) = delete;
  DistributedArray& operator=(const DistributedArray&) = delete;
  // Frees the communicator duplicate, kept past release() for errors.
  ~DistributedArray();

  // Collective over comm; the memory starts zeroed.
  static int create(std::int64_t count, MPI_Datatype type, ElementKind kind, MPI_Comm comm,
                    std::unique_ptr<DistributedArray>& out);
  // Collective: frees the window and its memory.
  int release();

  MPI_Comm comm() const { return comm_; }  // a duplicate of the user's
  MPI_Win window() const { return window_; }
  std::int64_t count() const { return blocks_.count(); }
  MPI_Datatype type() const { return type_; }
  int rank() const { return rank_; }
  Range block(int rank) const { return blocks_.block(rank); }
  int owner(std::int64_t index) const { return blocks_.owner(index); }
  // This process's block, in its window memory.
  std::byte* local_data() const { return local_; }

 private:
  DistributedArray() = default;

  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Win window_ = MPI_WIN_NULL;
  std::byte* local_ = nullptr;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  int rank_ = 0;
  BlockDistribution blocks_{0, 1};
};

}  // namespace shim::mirror
