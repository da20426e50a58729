// Scenario: merges sum the node copies. A new window reads zero and reports
// its size; after each holder writes its block, or one process the whole
// node copy, a merge leaves the sum over nodes everywhere; sums that are not
// exact in floating point still end bit-identical on every process.
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tests/mpi/mirror/scenarios.hpp"
#include "tests/mpi/mirror/windows.hpp"

namespace shim::test::mirror {

template <typename T>
void fresh_checks(const Win& w) {
  MPI_Count got_count = -1;
  MPI_Datatype got_type = MPI_DATATYPE_NULL;
  ok(shim_mirror_size(w.m, &got_count, &got_type), w.where + ": size");
  check->expect(got_count == w.count && got_type == w.type,
                w.where + ": shim_mirror_size says " + str(got_count) + " elements of another datatype");
  expect_mirror<T>(
      w.m, w.count, [](MPI_Count) { return make<T>(0); }, w.where + " new window reads zero");
  ok(shim_mirror_sync(w.m), w.where + ": sync");
}

template <typename T>
void merge_rounds(const Win& w, bool both) {
  const Comm& c = w.c;
  // Round 1: each process writes its own block.
  put_own_block<T>(
      c, w.m, w.count, [&](MPI_Count i) { return node_value(c.node, i); }, w.where);
  ok(shim_mirror_merge(w.m), w.where + ": merge");
  expect_mirror<T>(
      w.m, w.count, [&](MPI_Count i) { return make<T>(merged_value(c.nodes(), i)); },
      w.where + " merged (each holder wrote its block)");
  ok(shim_mirror_sync(w.m), w.where + ": sync");
  if (!both) return;
  // Round 2: the node's last process writes the whole copy, others' blocks too.
  if (c.local_rank == c.local_size() - 1)
    mirror_put<T>(
        w.m, 0, w.count, [&](MPI_Count i) { return 3 * node_value(c.node, i + 1); }, w.where);
  ok(shim_mirror_merge(w.m), w.where + ": merge");
  expect_mirror<T>(
      w.m, w.count, [&](MPI_Count i) { return make<T>(3 * merged_value(c.nodes(), i + 1)); },
      w.where + " merged (one process wrote the whole copy)");
  ok(shim_mirror_sync(w.m), w.where + ": sync");
}

// Values that do not add exactly: every process must still read the same
// bits (compared with the communicator's rank 0), close to the exact sum.
void identical_sums(const Win& w) {
  const Comm& c = w.c;
  auto value = [&](int node, MPI_Count i) { return 0.1 * static_cast<double>(i % 97) / (node + 3) + 1e-9 * node; };
  auto sum = [&](MPI_Count i) {
    long double exact = 0;
    for (int n = 0; n < c.nodes(); ++n) exact += value(n, i);
    return static_cast<double>(exact);
  };
  for (int sparse = 0; sparse < 2; ++sparse) {
    const std::string what = w.where + (sparse ? " merge_sparse" : " merge") + " of inexact sums";
    ok(shim_mirror_zero(w.m), what + ": zero");
    const Block mine = block_of(w.count, c.local_size(), c.local_rank);
    std::vector<double> in(static_cast<std::size_t>(mine.count));
    for (MPI_Count k = 0; k < mine.count; ++k) in[static_cast<std::size_t>(k)] = value(c.node, mine.first + k);
    ok(shim_mirror_put(w.m, mine.first, mine.count, in.data()), what + ": put");
    ok(sparse ? shim_mirror_merge_sparse(w.m, 100) : shim_mirror_merge(w.m), what);
    std::vector<double> got = mirror_get<double>(w.m, 0, w.count, what);
    std::vector<double> first = got;
    PMPI_Bcast(first.data(), static_cast<int>(w.count), MPI_DOUBLE, 0, c.comm);
    check->expect(std::memcmp(first.data(), got.data(), got.size() * sizeof(double)) == 0,
                  what + ": differs in some bit from the communicator's rank 0");
    long long far = 0;
    for (MPI_Count i = 0; i < w.count; ++i)
      far += std::abs(got[static_cast<std::size_t>(i)] - sum(i)) > 1e-12 * (1 + std::abs(sum(i)));
    check->expect(far == 0, what + ": " + str(far) + " elements are not the sum");
  }
  ok(shim_mirror_sync(w.m), w.where + ": sync");
}

// The element types mirror_matrix.cpp runs these with.
template void fresh_checks<int>(const Win&);
template void fresh_checks<long long>(const Win&);
template void fresh_checks<unsigned char>(const Win&);
template void fresh_checks<short>(const Win&);
template void fresh_checks<float>(const Win&);
template void fresh_checks<double>(const Win&);
template void fresh_checks<long double>(const Win&);
template void fresh_checks<std::complex<double>>(const Win&);
template void fresh_checks<std::int64_t>(const Win&);
template void merge_rounds<int>(const Win&, bool);
template void merge_rounds<long long>(const Win&, bool);
template void merge_rounds<unsigned char>(const Win&, bool);
template void merge_rounds<short>(const Win&, bool);
template void merge_rounds<float>(const Win&, bool);
template void merge_rounds<double>(const Win&, bool);
template void merge_rounds<long double>(const Win&, bool);
template void merge_rounds<std::complex<double>>(const Win&, bool);
template void merge_rounds<std::int64_t>(const Win&, bool);

}  // namespace shim::test::mirror
