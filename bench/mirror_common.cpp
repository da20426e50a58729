#include "mirror_common.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace bench {

MirrorNode describe_mirror_nodes(const Report& report) {
  MirrorNode n;
  shim_mirror probe = nullptr;
  check(shim_mirror_create(1, MPI_DOUBLE, MPI_COMM_WORLD, &probe), "shim_mirror_create");
  check(shim_mirror_node(probe, &n.node, &n.nodes, &n.local_rank, &n.local_size), "shim_mirror_node");
  check(shim_mirror_free(&probe), "shim_mirror_free");
  int max_ppn = 0;
  MPI_Allreduce(&n.local_size, &n.min_ppn, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&n.local_size, &max_ppn, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  report.line("mirror nodes " + std::to_string(n.nodes) + " (SHIM_NODE_SIZE or hosts; " + std::to_string(n.min_ppn) +
              ".." + std::to_string(max_ppn) + " processes each)");
  return n;
}

Range share(Range whole, int parts, int part) {
  const std::int64_t base = whole.count / parts, extra = whole.count % parts;
  return {whole.first + part * base + std::min<std::int64_t>(part, extra), base + (part < extra ? 1 : 0)};
}

double* mirror_address(shim_mirror mirror, std::int64_t index) {
  void* p = nullptr;
  check(shim_mirror_address(mirror, index, &p), "shim_mirror_address");
  return static_cast<double*>(p);
}

bool copy_is_contiguous(shim_mirror mirror) {
  MPI_Count count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  check(shim_mirror_size(mirror, &count, &type), "shim_mirror_size");
  return count < 2 || mirror_address(mirror, count - 1) - mirror_address(mirror, 0) == count - 1;
}

MPI_Win window_of(shim_distributed array) {
  MPI_Win window = MPI_WIN_NULL;
  check(shim_distributed_window(array, &window), "shim_distributed_window");
  return window;
}

double* local_block(shim_distributed array) {
  void* base = nullptr;
  int found = 0;
  check(MPI_Win_get_attr(window_of(array), MPI_WIN_BASE, &base, &found), "MPI_Win_get_attr");
  return found ? static_cast<double*>(base) : nullptr;
}

void Targets::add(int rank) {
  char& seen = touched_[static_cast<std::size_t>(rank)];
  if (!seen) list_.push_back(rank);
  seen = 1;
}

void Targets::flush(MPI_Win window, bool local) {
  for (const int rank : list_) {
    check(local ? MPI_Win_flush_local(rank, window) : MPI_Win_flush(rank, window), "MPI_Win_flush");
    touched_[static_cast<std::size_t>(rank)] = 0;
  }
  list_.clear();
}

namespace {

// op(owner, displacement, offset in the range, elements) per owner the
// range touches.
template <typename Op>
void for_each_owner(shim_distributed array, std::int64_t first, std::int64_t count, Op op) {
  std::int64_t index = first;
  const std::int64_t end = first + count;
  while (index < end) {
    int owner = 0;
    MPI_Aint displacement = 0;
    check(shim_distributed_locate(array, index, &owner, &displacement), "shim_distributed_locate");
    MPI_Count held_first = 0, held_count = 0;
    check(shim_distributed_range(array, owner, &held_first, &held_count), "shim_distributed_range");
    const std::int64_t n = std::min(end, static_cast<std::int64_t>(held_first + held_count)) - index;
    op(owner, displacement, index - first, static_cast<int>(n));
    index += n;
  }
}

}  // namespace

void get_range(shim_distributed array, std::int64_t first, std::int64_t count, double* buffer, Targets& targets) {
  const MPI_Win window = window_of(array);
  for_each_owner(array, first, count, [&](int owner, MPI_Aint displacement, std::int64_t offset, int n) {
    check(MPI_Get(buffer + offset, n, MPI_DOUBLE, owner, displacement, n, MPI_DOUBLE, window), "MPI_Get");
    targets.add(owner);
  });
}

void accumulate_range(shim_distributed array, std::int64_t first, std::int64_t count, const double* buffer,
                      Targets& targets) {
  const MPI_Win window = window_of(array);
  for_each_owner(array, first, count, [&](int owner, MPI_Aint displacement, std::int64_t offset, int n) {
    check(MPI_Accumulate(buffer + offset, n, MPI_DOUBLE, owner, displacement, n, MPI_DOUBLE, MPI_SUM, window),
          "MPI_Accumulate");
    targets.add(owner);
  });
}

std::uint64_t hash_bits(const double* data, std::int64_t count) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::int64_t i = 0; i < count; ++i) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, data + i, sizeof bits);
    h = (h ^ bits) * 0x100000001b3ULL;
    h ^= h >> 29;
  }
  return h;
}

}  // namespace bench
