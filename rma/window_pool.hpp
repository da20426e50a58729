// What every managed window of one communicator shares, so that a window
// costs MPI one communicator context (the user's MPI_Win_create window) as
// MPICH's own MPI_Win_allocate does, and creating one costs little more:
// a duplicate of the communicator and of its node part, the node's stripe
// lock words, and node shared memory that windows are carved from, in
// chunks that grow as needed and are reused when windows go.
//
// Cached on the user's communicator through an attribute; every window
// holds it too, so it outlives a communicator freed before its windows.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "common/mpi_handle.hpp"
#include "common/shared_segments.hpp"
#include "common/stripe_locks.hpp"
#include "rma/node_memory.hpp"
#include "rma/range_allocator.hpp"
#include "topology/hierarchy.hpp"

namespace shim::rma {

class WindowPool {
 public:
  // Where one window's memory lies, in this process's part of the pool.
  struct Carving {
    int chunk = -1;  // -1: no memory (zero bytes)
    std::int64_t offset = 0;
    std::int64_t bytes = 0;
  };

  WindowPool(const WindowPool&) = delete;
  WindowPool& operator=(const WindowPool&) = delete;
  // Collective over the communicator: frees what the pool holds.
  ~WindowPool();

  // The pool of `comm`, whose nodes `hierarchy` describes: the cached one,
  // or a new one (collective over comm). MPI error code.
  static int of(MPI_Comm comm, const topo::Hierarchy& hierarchy, std::shared_ptr<WindowPool>& out);
  // The attribute keyval that caches pools on communicators: created after
  // MPI_Init; at the end the pools of MPI_COMM_WORLD and MPI_COMM_SELF go
  // first, while MPI still works.
  static int create_keyval();
  static void free_keyval();

  MPI_Comm comm() const { return comm_.get(); }  // a duplicate of the user's
  MPI_Comm node() const { return node_.get(); }
  StripeLocks locks() const;

  // Collective over node(): `bytes` for this process, and where each process
  // of the node put its part of the same window (by node rank, addresses as
  // this process sees them).
  int carve(std::int64_t bytes, Carving& mine, std::vector<NodeSegment>& node_view);
  // Collective over node(): where each process of the node has its part of
  // a window over memory it allocated itself (`base`, `bytes` here).
  int locate(void* base, std::int64_t bytes, std::vector<NodeSegment>& node_view);
  // Collective over comm(): whether every process may read and write every
  // other process's memory on its node (cross-memory attach). Asked of the
  // kernel once per pool.
  int cross_memory_allowed(bool& allowed);
  // Collective over node(), like the window's free: the memory comes back;
  // a chunk no window uses any more is freed unless it is the one kept for
  // the next windows.
  int give_back(const Carving& carving);

 private:
  struct Chunk {
    std::unique_ptr<SharedSegments> memory;  // null: a freed slot
    RangeAllocator allocator{0, 1};
    int windows = 0;
    std::int64_t largest_segment = 0;  // over the node: the same on every process
  };

  WindowPool() = default;
  int add_chunk(std::int64_t bytes, std::int64_t largest_request, int& chunk);
  int release();

  OwnedComm comm_;
  OwnedComm node_;
  std::unique_ptr<SharedSegments> lock_words_;
  std::vector<Chunk> chunks_;
  std::optional<bool> cross_memory_;
};

}  // namespace shim::rma
