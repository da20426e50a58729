// Scenario: copies between mirrored windows and distributed arrays, both
// ways, over stale contents: the round trip is exact, the source is left as
// it was, and distributed arrays are checked through their own MPI window.
#include <complex>
#include <string>

#include "tests/mpi/mirror/scenarios.hpp"
#include "tests/mpi/mirror/windows.hpp"

namespace shim::test::mirror {

template <typename T>
void copy_rounds(const Win& w, bool thorough) {
  const Comm& c = w.c;
  const MPI_Count count = w.count;
  const std::string where = w.where + " copies";
  shim_distributed d = create_distributed(count, w.type, c.comm, where);
  auto g = [](MPI_Count i) { return (i * 7) % 1009 - 300; };
  auto junk = [&](MPI_Count i) { return 55 - i % 13 + c.rank; };
  if (thorough)
    expect_distributed<T>(
        d, w.type, c.comm, count, [](MPI_Count) { return make<T>(0); }, where + " new array is zero");

  // distributed -> mirrored (over stale node copies), distributed untouched.
  ok(shim_mirror_sync(w.m), where + ": sync");
  put_own_block<T>(
      c, w.m, count, [&](MPI_Count i) { return node_value(c.node, i); }, where);
  distributed_write<T>(d, w.type, c.comm, count, g, where);
  ok(shim_mirror_copy_from_distributed(w.m, d), where + ": copy_from_distributed");
  expect_mirror<T>(
      w.m, count, [&](MPI_Count i) { return make<T>(g(i)); }, where + " distributed -> mirrored");
  if (thorough)
    expect_distributed<T>(
        d, w.type, c.comm, count, [&](MPI_Count i) { return make<T>(g(i)); }, where + " source left as it was");

  // ... -> distributed again, over other contents: the round trip is exact.
  distributed_write<T>(d, w.type, c.comm, count, junk, where);
  ok(shim_mirror_copy_to_distributed(w.m, d), where + ": copy_to_distributed");
  expect_distributed<T>(
      d, w.type, c.comm, count, [&](MPI_Count i) { return make<T>(g(i)); },
      where + " distributed -> mirrored -> distributed");
  expect_mirror<T>(
      w.m, count, [&](MPI_Count i) { return make<T>(g(i)); }, where + " source left as it was");
  ok(shim_mirror_sync(w.m), where + ": sync");

  // mirrored (merged) -> distributed -> mirrored, over different node copies.
  put_own_block<T>(
      c, w.m, count, [&](MPI_Count i) { return node_value(c.node, i); }, where);
  ok(shim_mirror_merge(w.m), where + ": merge");
  ok(shim_mirror_copy_to_distributed(w.m, d), where + ": copy_to_distributed");
  expect_distributed<T>(
      d, w.type, c.comm, count, [&](MPI_Count i) { return make<T>(merged_value(c.nodes(), i)); },
      where + " merged mirror -> distributed");
  put_own_block<T>(
      c, w.m, count, [&](MPI_Count i) { return junk(i) + c.node; }, where);
  ok(shim_mirror_copy_from_distributed(w.m, d), where + ": copy_from_distributed");
  expect_mirror<T>(
      w.m, count, [&](MPI_Count i) { return make<T>(merged_value(c.nodes(), i)); },
      where + " mirrored -> distributed -> mirrored");
  ok(shim_mirror_sync(w.m), where + ": sync");
  free_distributed(d, where);
}

// The element types mirror_matrix.cpp runs this with.
template void copy_rounds<int>(const Win&, bool);
template void copy_rounds<double>(const Win&, bool);
template void copy_rounds<std::complex<double>>(const Win&, bool);

}  // namespace shim::test::mirror
