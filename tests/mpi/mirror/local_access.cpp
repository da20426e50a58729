// Scenario: local access. Get, put and accumulate (with a scale factor) on
// any range of the node copy, across holders' blocks, by processes that do
// not hold it, and empty ranges anywhere; zero; and every process of a node
// accumulating into the same elements at once, which must add up exactly
// before and after a merge.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/mpi/mirror/scenarios.hpp"
#include "tests/mpi/mirror/windows.hpp"

namespace shim::test::mirror {

template <typename T>
void local_access(const Win& w) {
  const Comm& c = w.c;
  const MPI_Count count = w.count;
  const std::string where = w.where + " local access";
  const int ls = c.local_size();
  ok(shim_mirror_zero(w.m), where + ": zero");
  // The node's copy as the test expects it, updated round by round.
  std::vector<long long> model(static_cast<std::size_t>(count), 0);
  // Rounds of disjoint ranges; range k of a round is written by local rank
  // (k + 1) % ls, mostly not its holder, while the others write theirs.
  std::vector<std::vector<Block>> rounds(3);
  auto add = [&](std::vector<Block>& round, Block r) {
    const bool fits = r.first >= 0 && r.count > 0 && r.end() <= count;
    const bool disjoint = std::none_of(round.begin(), round.end(),
                                       [&](const Block& o) { return r.first < o.end() && o.first < r.end(); });
    if (fits && disjoint) round.push_back(r);
  };
  for (int l = 1; l < ls; ++l) add(rounds[0], {block_of(count, ls, l).first - 2, 4});  // across each boundary
  add(rounds[0], {0, 1});                                                              // single elements
  add(rounds[0], {count - 1, 1});
  if (ls > 1) add(rounds[0], {block_of(count, ls, 1).first + 3, 1});
  add(rounds[1], {0, count});      // every block
  add(rounds[2], {1, count / 2});  // two halves
  add(rounds[2], {count / 2 + 1, count - count / 2 - 2});

  for (std::size_t round = 0; round < rounds.size(); ++round) {
    const long long s = static_cast<long long>(round) + 1;
    const std::string what = where + " round " + str(s);
    auto put_value = [&](MPI_Count i) { return (s * 1000 + i % 5000) * (c.node + 1); };
    auto acc_value = [&](MPI_Count i) { return i % 11 - 5 + s; };
    const long long scale = s % 2 == 0 ? -3 : 2;
    const auto& ranges = rounds[round];
    for (std::size_t k = 0; k < ranges.size(); ++k) {
      const Block r = ranges[k];
      if (static_cast<int>((k + 1) % static_cast<std::size_t>(ls)) == c.local_rank) {
        mirror_put<T>(w.m, r.first, r.count, put_value, what);
        std::vector<T> more(static_cast<std::size_t>(r.count));
        for (MPI_Count j = 0; j < r.count; ++j) more[static_cast<std::size_t>(j)] = make<T>(acc_value(r.first + j));
        const T factor = scalar<T>(scale);
        ok(shim_mirror_acc(w.m, r.first, r.count, more.data(), &factor), what + ": acc");
      }
      for (MPI_Count i = r.first; i < r.end(); ++i)
        model[static_cast<std::size_t>(i)] = put_value(i) + scale * acc_value(i);
    }
    // Empty ranges anywhere, by everyone, without a buffer: no effect.
    for (const MPI_Count at : {MPI_Count{0}, count / 2, count}) {
      ok(shim_mirror_get(w.m, at, 0, nullptr), what + ": get of 0 elements");
      ok(shim_mirror_put(w.m, at, 0, nullptr), what + ": put of 0 elements");
      ok(shim_mirror_acc(w.m, at, 0, nullptr, nullptr), what + ": acc of 0 elements");
    }
    ok(shim_mirror_sync(w.m), what + ": sync");
    for (const Block& r : ranges)
      expect_elements(
          mirror_get<T>(w.m, r.first, r.count, what), r.first,
          [&](MPI_Count i) { return make<T>(put_value(i) + scale * acc_value(i)); },
          what + " [" + str(r.first) + ", +" + str(r.count) + ") read back");
    expect_mirror<T>(
        w.m, count, [&](MPI_Count i) { return make<T>(model[static_cast<std::size_t>(i)]); }, what + " whole copy");
    ok(shim_mirror_sync(w.m), what + ": sync");
  }
  // zero clears every copy.
  ok(shim_mirror_zero(w.m), where + ": zero");
  expect_mirror<T>(
      w.m, count, [](MPI_Count) { return make<T>(0); }, where + " after zero");
  ok(shim_mirror_sync(w.m), where + ": sync");
}

namespace {

// The range and values comm rank r accumulates in iteration `it`: every
// process of a node hits the same elements, through different ranges.
Block acc_range(MPI_Count count, int rank, int it) {
  const MPI_Count margin = std::min<MPI_Count>(300, count / 4);
  const MPI_Count first = margin == 0 ? 0 : (it * 37 + rank * 11) % margin;
  const MPI_Count end = count - (margin == 0 ? 0 : (it * 53 + rank * 5) % margin);
  return {first, end - first};
}
long long acc_value(int rank, int it, MPI_Count i) { return 1 + rank % 5 + (i + it) % 3; }
long long acc_scale(int it) { return it % 7 == 6 ? -1 : 1 + it % 3; }

}  // namespace

template <typename T>
void acc_rounds(const Win& w, int iterations) {
  const Comm& c = w.c;
  const std::string where = w.where + " concurrent acc x" + str(iterations);
  // What each node's copy must hold: every process of the node, every iteration.
  std::vector<std::vector<long long>> node_sum(static_cast<std::size_t>(c.nodes()),
                                               std::vector<long long>(static_cast<std::size_t>(w.count), 0));
  for (int r = 0; r < c.size; ++r) {
    auto& sum = node_sum[static_cast<std::size_t>(c.node_of[static_cast<std::size_t>(r)])];
    for (int it = 0; it < iterations; ++it) {
      const Block b = acc_range(w.count, r, it);
      for (MPI_Count i = b.first; i < b.end(); ++i)
        sum[static_cast<std::size_t>(i)] += acc_scale(it) * acc_value(r, it, i);
    }
  }
  ok(shim_mirror_zero(w.m), where + ": zero");  // and start together, to collide
  std::vector<T> buffer;
  for (int it = 0; it < iterations; ++it) {
    const Block b = acc_range(w.count, c.rank, it);
    buffer.resize(static_cast<std::size_t>(b.count));
    for (MPI_Count k = 0; k < b.count; ++k)
      buffer[static_cast<std::size_t>(k)] = make<T>(acc_value(c.rank, it, b.first + k));
    const T scale = scalar<T>(acc_scale(it));
    // Scale 1 both ways: explicit, and NULL.
    const bool implicit_one = acc_scale(it) == 1 && it % 2 == 0;
    const int rc = shim_mirror_acc(w.m, b.first, b.count, buffer.data(), implicit_one ? nullptr : &scale);
    if (rc != MPI_SUCCESS) ok(rc, where + ": acc iteration " + str(it));
  }
  ok(shim_mirror_sync(w.m), where + ": sync");
  const auto& mine = node_sum[static_cast<std::size_t>(c.node)];
  expect_mirror<T>(
      w.m, w.count, [&](MPI_Count i) { return make<T>(mine[static_cast<std::size_t>(i)]); },
      where + ": node copy before merge");
  ok(shim_mirror_merge(w.m), where + ": merge");
  expect_mirror<T>(
      w.m, w.count,
      [&](MPI_Count i) {
        long long total = 0;
        for (const auto& sum : node_sum) total += sum[static_cast<std::size_t>(i)];
        return make<T>(total);
      },
      where + ": merged");
  ok(shim_mirror_sync(w.m), where + ": sync");
}

// The element types mirror_matrix.cpp runs these with.
template void local_access<int>(const Win&);
template void local_access<std::int64_t>(const Win&);
template void acc_rounds<int>(const Win&, int);
template void acc_rounds<unsigned char>(const Win&, int);
template void acc_rounds<short>(const Win&, int);
template void acc_rounds<double>(const Win&, int);
template void acc_rounds<std::complex<double>>(const Win&, int);

}  // namespace shim::test::mirror
