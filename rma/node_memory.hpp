// A managed window's memory as one node sees it: every segment of the
// node's processes (node shared memory) and the stripe locks that make the
// accumulate family atomic per element. The origin's same-node path and the
// node's server both apply operations through apply(), so they take the very
// same locks.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <span>
#include <vector>

#include "common/shared_segments.hpp"
#include "common/stripe_locks.hpp"
#include "rma/datatype_layout.hpp"

namespace shim::rma {

class NodeMemory {
 public:
  // One window's memory on this node: each process's part, by node rank.
  NodeMemory(std::vector<SharedSegment> segments, StripeLocks locks)
      : segments_(std::move(segments)), locks_(locks) {}

  const SharedSegment& segment(int local) const { return segments_[static_cast<std::size_t>(local)]; }
  int segments() const { return static_cast<int>(segments_.size()); }

  // Applies `op` with the packed `origin` stream to the target bytes that
  // `runs` (offsets from base + offset) name, holding the locks of every
  // stripe they touch. `old`, if given, receives the previous contents
  // (packed). Compare-and-swap when `compare` is given (one element).
  // Returns MPI_SUCCESS or an MPI error class.
  int apply(int local, std::int64_t offset, std::span<const ByteRun> runs, const void* origin,
            std::int64_t bytes, MPI_Op op, MPI_Datatype basic, void* old, const void* compare = nullptr);

 private:
  void lock(std::uint64_t stripes);
  void unlock(std::uint64_t stripes);
  int apply_in_place(int local, std::int64_t offset, std::span<const ByteRun> runs, const unsigned char* origin,
                     MPI_Op op, MPI_Datatype basic, MPI_Count element);
  int apply_gathered(int local, std::int64_t offset, std::span<const ByteRun> runs, const void* origin,
                     std::int64_t bytes, MPI_Op op, MPI_Datatype basic, MPI_Count element, void* old,
                     const void* compare);

  std::vector<SharedSegment> segments_;
  StripeLocks locks_;
};

}  // namespace shim::rma
