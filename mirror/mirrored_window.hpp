// A mirrored window: one copy of N elements per node, in node shared memory,
// each node's copy cut into blocks over the node's processes (local rank r
// holds block r and first-touches it). Local access is plain loads and
// stores into the node's copy; merge makes every copy the sum of all copies.
//
// Synchronisation: get/put/accumulate imply none. Accumulates are atomic
// against each other (stripe locks); everything else is ordered by sync(),
// a memory fence plus a barrier over the node. zero, merge and the copies
// are collective over the communicator and synchronise before and after.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/element_kind.hpp"
#include "common/mpi_handle.hpp"
#include "common/node_shared_memory.hpp"
#include "common/stripe_locks.hpp"
#include "mirror/block_distribution.hpp"
#include "topology/hierarchy.hpp"

namespace shim::mirror {

class MirroredWindow {
 public:
  MirroredWindow(const MirroredWindow&) = delete;
  MirroredWindow& operator=(const MirroredWindow&) = delete;
  // Collective, like release(); the communicator duplicate outlives
  // release() so that its errors can still be raised on it.
  ~MirroredWindow() = default;

  // Collective over comm, whose nodes `hierarchy` describes. On failure
  // returns an MPI error code (see mirror_error.hpp) and leaves `out` empty.
  static int create(std::int64_t count, MPI_Datatype type, ElementKind kind, MPI_Comm comm,
                    const topo::Hierarchy& hierarchy, bool per_process_segments, std::unique_ptr<MirroredWindow>& out);
  // Collective: frees the shared memory and the derived communicators.
  int release();

  // A duplicate of the user's communicator: errors are raised on it.
  MPI_Comm comm() const { return comm_.get(); }
  std::int64_t count() const { return count_; }
  MPI_Datatype type() const { return type_; }
  ElementKind kind() const { return kind_; }
  int node() const { return node_; }
  int nodes() const { return nodes_; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  // Whether this node's copy is one array (else: one per holder).
  bool contiguous() const { return contiguous_; }

  // The elements local rank `local` holds in this node's copy.
  Range block(int local) const { return blocks_.block(local); }
  // Communicator rank of the process on this node that holds `index`.
  int holder(std::int64_t index) const { return comm_rank_of_local_[blocks_.owner(index)]; }
  std::byte* address(std::int64_t index) const;

  // Local access to this node's copy; buffer holds range.count elements.
  void get(Range range, void* buffer) const;
  void put(Range range, const void* buffer);
  // copy[i] += scale * buffer[i]; scale nullptr means 1.
  void accumulate(Range range, const void* buffer, const void* scale);

  int sync();
  int zero();
  int merge(Range range);
  // Moves only the blocks of `block` elements that hold a non-zero byte.
  int merge_sparse(std::int64_t block);

 private:
  MirroredWindow() = default;
  void lay_out(std::int64_t count, MPI_Datatype type, ElementKind kind, const topo::Hierarchy& hierarchy);
  int allocate(std::int64_t count, MPI_Datatype type, ElementKind kind, MPI_Comm comm, const topo::Hierarchy& hierarchy,
               bool per_process_segments);
  // Calls visit(pointer, offset into range, elements) for each piece of
  // `range` that is contiguous in this node's copy.
  void for_each_piece(Range range, const std::function<void(std::byte*, std::int64_t, std::int64_t)>& visit) const;
  // Runs work on `range` as one contiguous span: in place when the node's
  // copy is contiguous, otherwise through a scratch copy.
  int with_contiguous(Range range, const std::function<int(std::byte*)>& work);

  OwnedComm comm_;
  OwnedComm node_comm_;
  OwnedComm merge_comm_;                      // same local rank, one per node; null if this rank idles in merges
  std::unique_ptr<NodeSharedMemory> memory_;  // after the communicators: goes first
  std::int64_t count_ = 0;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  ElementKind kind_ = ElementKind::int8;
  std::size_t element_bytes_ = 1;
  int node_ = 0, nodes_ = 1, local_rank_ = 0, local_size_ = 1;
  int merge_slices_ = 1;  // the smallest node's process count
  BlockDistribution blocks_{0, 1};
  std::vector<std::byte*> base_of_local_;
  std::vector<int> comm_rank_of_local_;
  bool contiguous_ = false;
  std::int64_t stripe_elements_ = 1;
  mutable StripeLocks locks_;
};

}  // namespace shim::mirror
