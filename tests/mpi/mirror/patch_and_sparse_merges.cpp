// Scenario: patch and sparse merges. merge_patch sums inside the patch and
// leaves each node's values outside it (whole, last element, middle, empty,
// across holders' blocks); merge_sparse with any block size, up to the
// largest MPI_Count, equals a full merge of the same copies.
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tests/mpi/mirror/scenarios.hpp"
#include "tests/mpi/mirror/windows.hpp"

namespace shim::test::mirror {

template <typename T>
void patch_rounds(const Win& w, bool thorough) {
  const Comm& c = w.c;
  const MPI_Count count = w.count;
  std::vector<Block> patches = {{0, count}};
  if (count > 0) patches.push_back({count - 1, 1});
  if (count > 2) patches.push_back({count / 3, count / 3 + 1});
  if (thorough) {
    patches.push_back({0, 0});
    if (count > 0) patches.push_back({count, 0});
    if (count > 1) patches.push_back({0, 1});
    // Across holders' blocks (the patch is collective: the same everywhere).
    const Block b = block_of(count, c.local_size_of(0), 1);
    if (c.local_size_of(0) > 1 && b.first >= 2 && b.first + 3 <= count) patches.push_back({b.first - 2, 5});
  }
  int round = 0;
  for (const Block& p : patches) {
    ++round;
    const std::string what = w.where + " merge_patch [" + str(p.first) + ", +" + str(p.count) + ")";
    auto mine = [&](MPI_Count i) { return node_value(c.node, i + round); };
    put_own_block<T>(c, w.m, count, mine, what);
    ok(shim_mirror_merge_patch(w.m, p.first, p.count), what + ": merge_patch");
    expect_mirror<T>(
        w.m, count,
        [&](MPI_Count i) {
          return make<T>(i >= p.first && i < p.end() ? merged_value(c.nodes(), i + round) : mine(i));
        },
        what + ": sum inside the patch, this node's values outside");
    ok(shim_mirror_sync(w.m), what + ": sync");
  }
}

namespace {

// Node n writes only its own stretches of 37 elements, plus every 101st
// element, which all nodes write; the rest stays zero.
long long sparse_value(const Comm& c, int node, MPI_Count i) {
  const bool own = (i / 37) % c.nodes() == node;
  const bool shared = i % 101 == 0;
  return own || shared ? node_value(node, i) + 1000 : 0;
}

}  // namespace

template <typename T>
void sparse_rounds(const Win& w, bool thorough) {
  const Comm& c = w.c;
  const MPI_Count count = w.count;
  const std::string where = w.where + " merge_sparse";
  auto want = [&](MPI_Count i) {
    long long sum = 0;
    for (int n = 0; n < c.nodes(); ++n) sum += sparse_value(c, n, i);
    return make<T>(sum);
  };
  auto write_mine = [&](const std::string& what) {
    ok(shim_mirror_zero(w.m), what + ": zero");
    put_own_block<T>(
        c, w.m, count, [&](MPI_Count i) { return sparse_value(c, c.node, i); }, what);
  };
  // The reference: a full merge of the same inputs.
  write_mine(where);
  ok(shim_mirror_merge(w.m), where + ": full merge");
  const std::vector<T> full = mirror_get<T>(w.m, 0, count, where);
  expect_elements(full, 0, want, where + ": full merge");

  // 1, 10 (divides none of the counts here), one block larger than the
  // array; thorough: 64, 2^40 and the largest MPI_Count too.
  std::vector<MPI_Count> blocks = {1};
  if (count > 10) blocks.push_back(10);
  if (thorough && count > 64) blocks.push_back(64);
  blocks.push_back(count + 5);
  if (thorough) blocks.insert(blocks.end(), {MPI_Count{1} << 40, std::numeric_limits<MPI_Count>::max()});
  for (const MPI_Count block : blocks) {
    const std::string what = where + " block " + str(block);
    write_mine(what);
    ok(shim_mirror_merge_sparse(w.m, block), what + ": merge_sparse");
    const std::vector<T> got = mirror_get<T>(w.m, 0, count, what);
    expect_elements(got, 0, want, what);
    expect_elements(
        got, 0, [&](MPI_Count i) { return full[static_cast<std::size_t>(i)]; }, what + ": equals the full merge");
  }
  if (!thorough) return;
  // All nodes zero: stays zero. One node only: its values everywhere.
  ok(shim_mirror_zero(w.m), where + ": zero");
  ok(shim_mirror_merge_sparse(w.m, 16), where + ": merge_sparse of zeros");
  expect_mirror<T>(
      w.m, count, [](MPI_Count) { return make<T>(0); }, where + " of all-zero copies");
  ok(shim_mirror_sync(w.m), where + ": sync");
  const int lone = c.nodes() - 1;
  if (c.node == lone)
    put_own_block<T>(
        c, w.m, count, [&](MPI_Count i) { return node_value(lone, i); }, where);
  ok(shim_mirror_merge_sparse(w.m, 7), where + ": merge_sparse, one node non-zero");
  expect_mirror<T>(
      w.m, count, [&](MPI_Count i) { return make<T>(node_value(lone, i)); }, where + " when only the last node wrote");
  ok(shim_mirror_sync(w.m), where + ": sync");
}

// The element types mirror_matrix.cpp runs these with.
template void patch_rounds<int>(const Win&, bool);
template void patch_rounds<float>(const Win&, bool);
template void patch_rounds<double>(const Win&, bool);
template void sparse_rounds<int>(const Win&, bool);
template void sparse_rounds<double>(const Win&, bool);
template void sparse_rounds<long double>(const Win&, bool);
template void sparse_rounds<std::complex<double>>(const Win&, bool);
template void sparse_rounds<std::int64_t>(const Win&, bool);

}  // namespace shim::test::mirror
