// What every part of mirror_matrix shares: the checker, the world rank,
// MPI return codes and error classes, and the layout the test derives itself
// (never from shim's answers): balanced blocks, and the nodes of a
// communicator.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/mpi/checker.hpp"

namespace shim::test::mirror {

inline Checker* check = nullptr;
inline int world_rank = 0;
inline int world_size = 1;
inline std::vector<int> node_of_world;  // tests/mpi/nodes.hpp

inline std::string str(long long v) { return std::to_string(v); }

inline void ok(int rc, const std::string& where) { check->expect_success(rc, where); }
// The error class `rc` belongs to must be `want` (MPI_SUCCESS included).
void expect_class(int rc, int want, const std::string& where);

struct Block {
  MPI_Count first = 0;
  MPI_Count count = 0;
  MPI_Count end() const { return first + count; }
};

// n elements in `parts` consecutive balanced blocks, the first n % parts
// one element longer.
inline Block block_of(MPI_Count n, int parts, int part) {
  const MPI_Count base = n / parts, extra = n % parts;
  return {part * base + std::min<MPI_Count>(part, extra), base + (part < extra ? 1 : 0)};
}

inline int owner_of(MPI_Count n, int parts, MPI_Count index) {
  for (int p = 0; p < parts; ++p)
    if (index < block_of(n, parts, p).end()) return p;
  return -1;
}

// A communicator and its nodes (those of its processes' world ranks),
// numbered in order of their lowest rank in this communicator, local ranks
// ascending.
struct Comm {
  std::string name;
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 0;
  int node = 0;
  int local_rank = 0;
  std::vector<int> node_of;               // of each comm rank
  std::vector<std::vector<int>> members;  // comm ranks of each node

  int nodes() const { return static_cast<int>(members.size()); }
  int local_size() const { return static_cast<int>(members[static_cast<std::size_t>(node)].size()); }
  int local_size_of(int n) const { return static_cast<int>(members[static_cast<std::size_t>(n)].size()); }
  int local_rank_of(int r) const {
    const auto& m = members[static_cast<std::size_t>(node_of[static_cast<std::size_t>(r)])];
    return static_cast<int>(std::find(m.begin(), m.end(), r) - m.begin());
  }
};

Comm describe(const std::string& name, MPI_Comm comm);

}  // namespace shim::test::mirror
