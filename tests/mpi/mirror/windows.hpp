// Mirrored windows and distributed arrays under test: creating and freeing
// them (every call checked), and reading and writing them through the
// public API; distributed arrays also through their own MPI window.
#pragma once

#include <mpi.h>
#include <shim/mirror.h>

#include <string>
#include <vector>

#include "tests/mpi/mirror/job.hpp"
#include "tests/mpi/mirror/values.hpp"

namespace shim::test::mirror {

template <typename T>
std::vector<T> mirror_get(shim_mirror m, MPI_Count first, MPI_Count count, const std::string& where) {
  std::vector<T> out(static_cast<std::size_t>(count), make<T>(-12345));
  ok(shim_mirror_get(m, first, count, out.data()), where + ": get");
  return out;
}

template <typename T, typename Value>
void mirror_put(shim_mirror m, MPI_Count first, MPI_Count count, Value value, const std::string& where) {
  std::vector<T> in(static_cast<std::size_t>(count));
  for (MPI_Count k = 0; k < count; ++k) in[static_cast<std::size_t>(k)] = make<T>(value(first + k));
  ok(shim_mirror_put(m, first, count, in.data()), where + ": put");
}

// Each process writes the block it holds (as the test computes it).
template <typename T, typename Value>
void put_own_block(const Comm& c, shim_mirror m, MPI_Count count, Value value, const std::string& where) {
  const Block mine = block_of(count, c.local_size(), c.local_rank);
  mirror_put<T>(m, mine.first, mine.count, value, where + " own block");
}

template <typename T, typename Want>
void expect_mirror(shim_mirror m, MPI_Count count, Want want, const std::string& where) {
  expect_elements(mirror_get<T>(m, 0, count, where), 0, want, where);
}

shim_mirror create_mirror(MPI_Count count, MPI_Datatype type, const Comm& c, const std::string& where);
void free_mirror(shim_mirror& m, const std::string& where);

// A window under test: its communicator, handle, size and datatype, and the
// label its failures carry.
struct Win {
  const Comm& c;
  shim_mirror m;
  MPI_Count count;
  MPI_Datatype type;
  std::string where;
};

Win open_window(const Comm& c, MPI_Datatype type, const std::string& type_name, MPI_Count count);
void close_window(Win& w);

shim_distributed create_distributed(MPI_Count count, MPI_Datatype type, MPI_Comm comm, const std::string& where);
void free_distributed(shim_distributed& d, const std::string& where);

// Every rank writes the elements i with i % size == rank, wherever they live,
// with MPI_Put in a fence epoch.
template <typename T, typename Value>
void distributed_write(shim_distributed d, MPI_Datatype type, MPI_Comm comm, MPI_Count count, Value value,
                       const std::string& where) {
  int rank = 0, size = 0;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  MPI_Win win = MPI_WIN_NULL;
  ok(shim_distributed_window(d, &win), where + ": window");
  std::vector<T> values;
  for (MPI_Count i = rank; i < count; i += size) values.push_back(make<T>(value(i)));
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  std::size_t k = 0;
  for (MPI_Count i = rank; i < count; i += size, ++k) {
    int owner = -1;
    MPI_Aint displacement = -1;
    ok(shim_distributed_locate(d, i, &owner, &displacement), where + ": locate");
    MPI_Put(&values[k], 1, type, owner, displacement, 1, type, win);
  }
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
}

// Every rank reads the whole array with MPI_Get in a lock_all epoch, one get
// per owner (from shim_distributed_locate of the owner's first element), and
// checks range and locate of every element against the balanced blocks.
template <typename T, typename Want>
void expect_distributed(shim_distributed d, MPI_Datatype type, MPI_Comm comm, MPI_Count count, Want want,
                        const std::string& where) {
  int size = 0;
  PMPI_Comm_size(comm, &size);
  MPI_Win win = MPI_WIN_NULL;
  ok(shim_distributed_window(d, &win), where + ": window");
  long long bad_layout = 0;
  for (int r = 0; r < size; ++r) {
    Block b;
    shim_distributed_range(d, r, &b.first, &b.count);
    const Block w = block_of(count, size, r);
    bad_layout += b.first != w.first || b.count != w.count;
  }
  for (MPI_Count i = 0; i < count; ++i) {
    int owner = -1;
    MPI_Aint displacement = -1;
    shim_distributed_locate(d, i, &owner, &displacement);
    const int want_owner = owner_of(count, size, i);
    bad_layout += owner != want_owner || displacement != i - block_of(count, size, want_owner).first;
  }
  check->expect(bad_layout == 0, where + ": " + str(bad_layout) + " ranges or locations differ from balanced blocks");
  std::vector<T> got(static_cast<std::size_t>(count), make<T>(-777));
  MPI_Win_lock_all(0, win);
  for (int r = 0; r < size; ++r) {
    const Block b = block_of(count, size, r);
    if (b.count == 0) continue;
    int owner = -1;
    MPI_Aint displacement = -1;
    shim_distributed_locate(d, b.first, &owner, &displacement);
    MPI_Get(&got[static_cast<std::size_t>(b.first)], static_cast<int>(b.count), type, owner, displacement,
            static_cast<int>(b.count), type, win);
  }
  MPI_Win_unlock_all(win);
  expect_elements(got, 0, want, where + " (MPI_Get from the distributed array)");
}

}  // namespace shim::test::mirror
