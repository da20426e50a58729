// Mirrored windows (include/shim/mirror.h), in the manner of Global Arrays'
// mirrored-array tests: every node writes node-dependent values, merges, and
// every process reads back the sum over nodes; patch and sparse merges match
// a full merge; copies to and from distributed arrays round-trip exactly
// (checked through the distributed array's own MPI window); concurrent local
// accumulates are exact; the layout queries agree with each other; odd and
// empty sizes, sub-communicators and every documented error.
//
// Every expected value is computed here, from the layout the test derives
// itself (SHIM_NODE_SIZE's virtual nodes of world ranks, or processor names),
// never from shim's answers. Element values are small integers mapped
// linearly into each type (integers wrap modulo 2^bits, floating-point sums
// stay exact), so every sum is predictable to the bit.
//
// This file chooses the windows (communicators, element types, counts) and
// what runs on each; the scenarios and the values are in mirror/: merges,
// patch_and_sparse_merges, copies, local_access, layout_queries, errors and
// cxx_wrappers.
#include <mpi.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/mpi/checker.hpp"
#include "tests/mpi/mirror/job.hpp"
#include "tests/mpi/mirror/scenarios.hpp"
#include "tests/mpi/mirror/windows.hpp"
#include "tests/mpi/nodes.hpp"

namespace {

using namespace shim::test::mirror;

// ---- the windows ----------------------------------------------------------------

// Merge of one element type, then whatever else `more` checks on the window.
// (Two merge rounds when `more` checks more: the other writes too.)
template <typename T, typename More>
void type_case(const Comm& c, MPI_Datatype type, const std::string& type_name, MPI_Count count, More more) {
  Win w = open_window(c, type, type_name, count);
  fresh_checks<T>(w);
  merge_rounds<T>(w, true);
  more(w);
  close_window(w);
}

template <typename T>
void type_case(const Comm& c, MPI_Datatype type, const std::string& type_name, MPI_Count count) {
  Win w = open_window(c, type, type_name, count);
  fresh_checks<T>(w);
  merge_rounds<T>(w, false);
  close_window(w);
}

// Everything, briefly, on one window: for small and odd counts and
// sub-communicators.
template <typename T>
void everything(const Comm& c, MPI_Datatype type, const std::string& type_name, MPI_Count count, int acc_iterations) {
  type_case<T>(c, type, type_name, count, [&](const Win& w) {
    layout_checks<T>(w);
    patch_rounds<T>(w, false);
    sparse_rounds<T>(w, false);
    copy_rounds<T>(w, false);
    if (acc_iterations > 0) acc_rounds<T>(w, acc_iterations);
  });
}

void small_counts(const Comm& c) {
  // Fewer elements than processes on the largest node (some blocks empty),
  // or 1; 0; 7.
  int largest = 0;
  for (int n = 0; n < c.nodes(); ++n) largest = std::max(largest, c.local_size_of(n));
  everything<int>(c, MPI_INT, "MPI_INT", largest > 2 ? largest - 1 : 1, 0);
  everything<int>(c, MPI_INT, "MPI_INT", 0, 0);
  // The Fortran integer, as the Fortran compiler sized it.
  int integer_size = 0;
  MPI_Type_size(MPI_INTEGER, &integer_size);
  check->expect(integer_size == 4, "MPI_INTEGER is " + str(integer_size) + " bytes");
  if (integer_size == 4) type_case<std::int32_t>(c, MPI_INTEGER, "MPI_INTEGER", 7);
}

// ---- the suites ----------------------------------------------------------------------

// MIRROR_MATRIX_TIMES=1: rank 0 prints how long each part took.
template <typename Part>
void timed(const Comm& c, const std::string& name, Part part) {
  const double start = MPI_Wtime();
  part();
  PMPI_Barrier(c.comm);
  if (world_rank == 0 && std::getenv("MIRROR_MATRIX_TIMES") != nullptr)
    std::printf("  %-10s %-28s %7.3f s\n", c.name.c_str(), name.c_str(), MPI_Wtime() - start);
}

// The whole job: every element type, and everything else on one window
// each, chosen to span several 4 KiB lock stripes and every holder's block.
void world_suite(const Comm& c) {
  timed(c, "MPI_INT x5003", [&] {
    type_case<int>(c, MPI_INT, "MPI_INT", 5003, [](const Win& w) {
      layout_checks<int>(w);
      patch_rounds<int>(w, true);
      sparse_rounds<int>(w, true);
      copy_rounds<int>(w, true);
      acc_rounds<int>(w, 200);
      local_access<int>(w);
    });
  });
  timed(c, "MPI_LONG_LONG x1001", [&] { type_case<long long>(c, MPI_LONG_LONG, "MPI_LONG_LONG", 1001); });
  timed(c, "MPI_UNSIGNED_CHAR x9001", [&] {
    type_case<unsigned char>(c, MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR (wraps)", 9001,
                             [](const Win& w) { acc_rounds<unsigned char>(w, 200); });
  });
  timed(c, "MPI_SHORT x4099",
        [&] { type_case<short>(c, MPI_SHORT, "MPI_SHORT", 4099, [](const Win& w) { acc_rounds<short>(w, 100); }); });
  timed(c, "MPI_FLOAT x1001", [&] {
    type_case<float>(c, MPI_FLOAT, "MPI_FLOAT", 1001, [](const Win& w) { patch_rounds<float>(w, false); });
  });
  // MPI_DOUBLE itself: the sub-communicator and C++ wrapper windows. The
  // Fortran type as the Fortran compiler sized it.
  int precision_size = 0;
  MPI_Type_size(MPI_DOUBLE_PRECISION, &precision_size);
  check->expect(precision_size == 8, "MPI_DOUBLE_PRECISION is " + str(precision_size) + " bytes");
  const bool fortran = precision_size == 8;
  timed(c, "MPI_DOUBLE_PRECISION x5003", [&] {
    type_case<double>(c, fortran ? MPI_DOUBLE_PRECISION : MPI_DOUBLE, fortran ? "MPI_DOUBLE_PRECISION" : "MPI_DOUBLE",
                      5003, [](const Win& w) {
                        acc_rounds<double>(w, 200);
                        sparse_rounds<double>(w, false);
                        copy_rounds<double>(w, false);
                        identical_sums(w);
                      });
  });
  timed(c, "MPI_LONG_DOUBLE x1001", [&] {
    type_case<long double>(c, MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", 1001,
                           [](const Win& w) { sparse_rounds<long double>(w, false); });
  });
  timed(c, "MPI_C_DOUBLE_COMPLEX x999", [&] {
    using Z = std::complex<double>;
    type_case<Z>(c, MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", 999, [](const Win& w) {
      sparse_rounds<Z>(w, false);
      copy_rounds<Z>(w, false);
      acc_rounds<Z>(w, 100);
    });
  });
  timed(c, "MPI_INT64_T x65537", [&] {
    type_case<std::int64_t>(c, MPI_INT64_T, "MPI_INT64_T", 65537, [](const Win& w) {
      local_access<std::int64_t>(w);
      sparse_rounds<std::int64_t>(w, false);
    });
  });
  timed(c, "small counts", [&] { small_counts(c); });
  timed(c, "C++ wrappers", [&] { cxx_wrappers(c); });
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  shim::test::Checker checker("mirror_matrix");
  check = &checker;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
  node_of_world = shim::test::node_of_world_ranks();

  const Comm world = describe("world", MPI_COMM_WORLD);
  world_suite(world);

  // Sub-communicators: nodes are those of the communicator (a node of the
  // world may split, and node numbers follow the communicator's ranks).
  MPI_Comm reversed = MPI_COMM_NULL, halves = MPI_COMM_NULL;
  PMPI_Comm_split(MPI_COMM_WORLD, 0, world_size - 1 - world_rank, &reversed);
  PMPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &halves);
  const Comm reversed_comm = describe("reversed", reversed);
  timed(reversed_comm, "MPI_INT x1001", [&] { everything<int>(reversed_comm, MPI_INT, "MPI_INT", 1001, 50); });
  const Comm half = describe(world_rank % 2 == 0 ? "even ranks" : "odd ranks", halves);
  timed(half, "MPI_DOUBLE x1001", [&] { everything<double>(half, MPI_DOUBLE, "MPI_DOUBLE", 1001, 50); });
  const Comm self = describe("self", MPI_COMM_SELF);
  timed(self, "MPI_INT x101", [&] { everything<int>(self, MPI_INT, "MPI_INT", 101, 20); });
  PMPI_Comm_free(&reversed);
  PMPI_Comm_free(&halves);

  timed(world, "errors", [&] { errors(world); });

  const int status = checker.finish();
  MPI_Finalize();
  return status;
}
