// A managed window's memory as one node sees it: every segment of the
// node's processes and the stripe locks that make the accumulate family
// atomic per element. A segment is mapped here (node shared memory, or this
// process's own) or lies in another process (a window over memory the
// caller allocated), reached through cross-memory attach. The origin's same-node path and the
// node's server both apply operations through apply(), so they take the very
// same locks.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <span>
#include <vector>

#include "common/stripe_locks.hpp"
#include "rma/cross_memory.hpp"
#include "rma/datatype_layout.hpp"

namespace shim::rma {

struct NodeSegment {
  unsigned char* mapped = nullptr;  // null: in `other`
  ProcessMemory other;
  std::int64_t bytes = 0;
};

class NodeMemory {
 public:
  // One window's memory on this node: each process's part, by node rank.
  NodeMemory(std::vector<NodeSegment> segments, StripeLocks locks) : segments_(std::move(segments)), locks_(locks) {}

  const NodeSegment& segment(int local) const { return segments_[static_cast<std::size_t>(local)]; }
  int segments() const { return static_cast<int>(segments_.size()); }

  // Applies `op` with the packed `origin` stream to the target bytes that
  // `runs` (offsets from base + offset) name, holding the locks of every
  // stripe they touch. `old`, if given, receives the previous contents
  // (packed). Compare-and-swap when `compare` is given (one element).
  // Returns MPI_SUCCESS or an MPI error class.
  int apply(int local, std::int64_t offset, std::span<const ByteRun> runs, const void* origin, std::int64_t bytes,
            MPI_Op op, MPI_Datatype basic, void* old, const void* compare = nullptr);

 private:
  void lock(std::uint64_t stripes);
  void unlock(std::uint64_t stripes);
  int apply_in_place(int local, std::int64_t offset, std::span<const ByteRun> runs, const unsigned char* origin,
                     MPI_Op op, MPI_Datatype basic, MPI_Count element);
  int apply_gathered(int local, std::int64_t offset, std::span<const ByteRun> runs, const void* origin,
                     std::int64_t bytes, MPI_Op op, MPI_Datatype basic, MPI_Count element, void* old,
                     const void* compare);
  // The runs' bytes of segment `local` to packed order and back; MPI error code.
  int gather(int local, std::int64_t offset, std::span<const ByteRun> runs, unsigned char* packed) const;
  int scatter(int local, std::int64_t offset, std::span<const ByteRun> runs, const unsigned char* packed) const;

  std::vector<NodeSegment> segments_;
  StripeLocks locks_;
};

}  // namespace shim::rma
