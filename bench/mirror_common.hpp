// What the mirrored-window benchmarks (bench/mirror_*.cpp) share: the
// mirror's nodes in their headers, balanced shares of a range, and
// distributed-array access through MPI one-sided calls.
#ifndef SHIM_BENCH_MIRROR_COMMON_HPP
#define SHIM_BENCH_MIRROR_COMMON_HPP

#include <mpi.h>
#include <shim/mirror.h>

#include <cstdint>
#include <vector>

#include "harness.hpp"

namespace bench {

struct MirrorNode {
  int node = 0, nodes = 1, local_rank = 0, local_size = 1;
  int min_ppn = 1;  // processes on the smallest node: the merging processes per node
};
// Collective (creates and frees a 1-element mirror); reports the nodes.
MirrorNode describe_mirror_nodes(const Report& report);

struct Range {
  std::int64_t first = 0;
  std::int64_t count = 0;
  std::int64_t end() const { return first + count; }
  bool contains(std::int64_t i) const { return i >= first && i < end(); }
};

// Part `part` of `parts` balanced blocks of `whole`: the first whole.count %
// parts hold one more (mirror.h's rule for holders and merge slices).
Range share(Range whole, int parts, int part);

// Whether this node's copy is one consecutive array (the header promises
// only each holder's range to be): then element pointers may be used
// across holders.
bool copy_is_contiguous(shim_mirror mirror);
double* mirror_address(shim_mirror mirror, std::int64_t index);

// MPI_WIN_BASE of a distributed array's window: this rank's block.
double* local_block(shim_distributed array);
MPI_Win window_of(shim_distributed array);

// The ranks a batch of RMA calls touched, to flush them one by one:
// MPICH 4.0.2's MPI_Win_flush_all returned here before every MPI_Get had
// landed (stale data in the first of a batch of gets; see bench/mirror_dft),
// while MPI_Win_flush on each target completes them all.
class Targets {
 public:
  explicit Targets(int ranks) : touched_(static_cast<std::size_t>(ranks), 0) {}
  void add(int rank);
  // MPI_Win_flush (or MPI_Win_flush_local) of every touched rank; clears.
  void flush(MPI_Win window, bool local = false);

 private:
  std::vector<char> touched_;
  std::vector<int> list_;
};

// [first, first + count) of the array into buffer with MPI_Get, one get per
// owner the range touches (added to `targets`); the caller flushes. Inside a
// passive epoch.
void get_range(shim_distributed array, std::int64_t first, std::int64_t count, double* buffer, Targets& targets);
// The same with MPI_Accumulate(MPI_SUM).
void accumulate_range(shim_distributed array, std::int64_t first, std::int64_t count, const double* buffer,
                      Targets& targets);

// A hash of the bits of doubles, for "bit-identical" checks.
std::uint64_t hash_bits(const double* data, std::int64_t count);

}  // namespace bench

#endif  // SHIM_BENCH_MIRROR_COMMON_HPP
