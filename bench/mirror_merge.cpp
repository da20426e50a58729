// mirror_merge: how long does merging a mirrored window of doubles take, by
// size, on the run's nodes: a full merge (shim_mirror_merge), a sparse
// merge (shim_mirror_merge_sparse) where each node filled only part of its
// copy (by default its 1/nodes share, as in the mirrored matrix multiply),
// and a patch merge (shim_mirror_merge_patch) of part of the array?
//
// Bytes per merging process come from the algorithm, not counted: full and
// patch merges are one MPI_Allreduce per local rank over its rail on its
// slice, and no allreduce sends less than 2 (N-1)/N x slice per process (N
// nodes; MPICH's recursive doubling for small slices sends log2(N) x slice).
// A sparse merge allgathers each node's non-zero blocks of the slice (plus
// an 8-byte id per block): counted here from the filled copies.
#include <shim/shim.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "mirror_common.hpp"

namespace {

constexpr std::string_view kUsage = R"(
  --min BYTES    smallest array (all of it); default 8K
  --max BYTES    largest array; default 16M
  --rounds R     rounds per size, each timing every mode; default 7
  --reps N       merges per mode per round; default 4 MiB / size, from 1 to 16
  --block BYTES  sparse merge block, >= 8; default 4K
  --fill F       sparse: fraction of the array each node fills, from its own share on; default 1/nodes
  --patch P      patch: percent of the array merged (from element count x 0.3 on); default 10
)";

enum Mode : int { full, sparse, patch, kModes };
constexpr std::array<const char*, kModes> kNames = {"full", "sparse", "patch"};
constexpr std::array<const char*, kModes> kByteRules = {"allreduce_minimum", "allgathered_in", "allreduce_minimum"};

// Node n's value of element i before a merge: small and exact, so sums in
// any order are exact.
double value(int node, std::int64_t i) { return (node + 1) + 0.5 * static_cast<double>(i % 7); }

struct Setup {
  bench::MirrorNode node;
  shim_mirror mirror = nullptr;
  std::int64_t count = 0, block = 1;
  bench::Range held;                               // this process's holder range
  std::vector<std::vector<bench::Range>> regions;  // sparse: what each node fills
  bench::Range patch;
};

bool filled(const Setup& s, Mode mode, int node, std::int64_t i) {
  const auto& region = s.regions[static_cast<std::size_t>(node)];
  return mode != sparse ||
         std::any_of(region.begin(), region.end(), [&](const bench::Range& r) { return r.contains(i); });
}

// Each process rewrites its own holder range of its node's copy.
void prepare(const Setup& s, Mode mode) {
  if (s.held.count == 0) return;
  double* data = bench::mirror_address(s.mirror, s.held.first);
  for (std::int64_t k = 0; k < s.held.count; ++k)
    data[k] = filled(s, mode, s.node.node, s.held.first + k) ? value(s.node.node, s.held.first + k) : 0.0;
}

void verify(const Setup& s, Mode mode) {
  if (s.held.count == 0) return;
  const double* data = bench::mirror_address(s.mirror, s.held.first);
  for (std::int64_t k = 0; k < s.held.count; ++k) {
    const std::int64_t i = s.held.first + k;
    double want = 0;
    for (int n = 0; n < s.node.nodes; ++n) want += filled(s, mode, n, i) ? value(n, i) : 0.0;
    if (mode == patch && !s.patch.contains(i)) want = value(s.node.node, i);
    if (data[k] != want)
      bench::fail(std::string("WRONG RESULT after the ") + kNames[static_cast<std::size_t>(mode)] + " merge of " +
                  bench::format_bytes(s.count * 8) + ": node " + std::to_string(s.node.node) + ", element " +
                  std::to_string(i));
  }
}

void merge(const Setup& s, Mode mode) {
  if (mode == full) bench::check(shim_mirror_merge(s.mirror), "shim_mirror_merge");
  if (mode == sparse) bench::check(shim_mirror_merge_sparse(s.mirror, s.block), "shim_mirror_merge_sparse");
  if (mode == patch)
    bench::check(shim_mirror_merge_patch(s.mirror, s.patch.first, s.patch.count), "shim_mirror_merge_patch");
}

// Collective. What a sparse merge allgathers: the most any merging process
// receives (the other nodes' non-zero blocks of its slice, 8-byte ids
// included). Reads the freshly prepared sparse copies.
double sparse_bytes_in(const Setup& s) {
  bench::check(shim_mirror_sync(s.mirror), "shim_mirror_sync");
  std::int64_t mine[2] = {-1, 0};  // merge slice (local rank), packed bytes
  if (s.node.local_rank < s.node.min_ppn) {
    const bench::Range slice = bench::share({0, s.count}, s.node.min_ppn, s.node.local_rank);
    std::vector<double> data(static_cast<std::size_t>(slice.count));
    if (slice.count > 0)
      bench::check(shim_mirror_get(s.mirror, slice.first, slice.count, data.data()), "shim_mirror_get");
    for (std::int64_t b = 0; b < slice.count; b += s.block) {
      const std::int64_t n = std::min(s.block, slice.count - b);
      if (std::any_of(data.begin() + b, data.begin() + b + n, [](double x) { return x != 0.0; })) mine[1] += n * 8 + 8;
    }
    mine[0] = s.node.local_rank;
  }
  std::vector<std::int64_t> all(2 * static_cast<std::size_t>(bench::ranks()));
  MPI_Allgather(mine, 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T, MPI_COMM_WORLD);
  std::vector<std::int64_t> total(static_cast<std::size_t>(s.node.min_ppn), 0);
  for (std::size_t r = 0; r < all.size(); r += 2)
    if (all[r] >= 0) total[static_cast<std::size_t>(all[r])] += all[r + 1];
  std::int64_t most = 0;
  for (std::size_t r = 0; r < all.size(); r += 2)
    if (all[r] >= 0) most = std::max(most, total[static_cast<std::size_t>(all[r])] - all[r + 1]);
  bench::check(shim_mirror_sync(s.mirror), "shim_mirror_sync");
  return static_cast<double>(most);
}

void benchmark(const bench::Args& args) {
  const auto sizes = args.sizes(8 << 10, 16 << 20);
  const int rounds = args.count("--rounds", 7, 1), reps_given = args.count("--reps", 0, 1);
  const std::int64_t block_bytes = args.bytes("--block", 4 << 10);
  const double fill = args.real("--fill", 0, 1e-9, 1), patch_percent = args.real("--patch", 10, 1e-9, 100);
  if (sizes.front() < 8 || block_bytes < 8)
    throw bench::UsageError("--min and --block must be at least 8 (one double)");
  const bench::Report report(
      args,
      "shim_mirror_merge (full), shim_mirror_merge_sparse (sparse) and shim_mirror_merge_patch (patch) "
      "of a mirrored window of doubles");
  Setup s;
  s.node = bench::describe_mirror_nodes(report);
  s.block = block_bytes / 8;
  report.line("modes: sparse: node n non-zero only in " +
              (fill > 0 ? "a run of " + bench::format_number(fill * 100) + "% of the elements from its share on"
                        : std::string("its own 1/nodes share")) +
              " (block " + bench::format_bytes(block_bytes) + "); patch: the elements [0.3 count, +" +
              bench::format_number(patch_percent) + "%) of dense copies");
  report.line(
      "bytes per merging process, from the algorithm: full and patch >= 2(N-1)/N x slice (one MPI_Allreduce "
      "of the process's slice over N nodes); sparse: the most any merging process receives in the "
      "MPI_Allgatherv of the nodes' non-zero blocks (ids included)");
  report.line(
      "method: per merge the copies are refilled (untimed), MPI_Barrier, then the merge alone is timed; "
      "modes rotate within each round; median over rounds of the max over ranks of the mean per round; "
      "every round's last merge of each mode is checked on every node's copy");
  report.columns({"bytes", "mode", "nodes", "merging_per_node", "reps", "rounds", "time_us", "min_us", "max_us",
                  "bytes_per_process", "rule"},
                 "Merge time, us");

  for (const std::int64_t bytes : sizes) {
    s.count = bytes / 8;
    bench::check(shim_mirror_create(s.count, MPI_DOUBLE, MPI_COMM_WORLD, &s.mirror), "shim_mirror_create");
    MPI_Count first = 0, held = 0;
    bench::check(shim_mirror_range(s.mirror, s.node.local_rank, &first, &held), "shim_mirror_range");
    s.held = {first, held};
    s.regions.clear();
    for (int n = 0; n < s.node.nodes; ++n) {
      const bench::Range own = bench::share({0, s.count}, s.node.nodes, n);
      const std::int64_t length =
          fill > 0 ? std::clamp<std::int64_t>(std::llround(fill * static_cast<double>(s.count)), 1, s.count)
                   : own.count;
      s.regions.push_back({{own.first, std::min(length, s.count - own.first)}, {0, own.first + length - s.count}});
    }
    const std::int64_t patch_count =
        std::clamp<std::int64_t>(std::llround(patch_percent / 100 * static_cast<double>(s.count)), 1, s.count);
    s.patch = {std::min(s.count * 3 / 10, s.count - patch_count), patch_count};
    const int reps = reps_given > 0 ? reps_given : static_cast<int>(std::clamp<std::int64_t>((4 << 20) / bytes, 1, 16));
    auto allreduce_minimum = [&](std::int64_t elements) {
      const double slice = static_cast<double>(bench::share({0, elements}, s.node.min_ppn, 0).count) * 8;
      return 2.0 * (s.node.nodes - 1) / s.node.nodes * slice;
    };
    prepare(s, sparse);
    const std::array<double, kModes> bytes_per_process = {allreduce_minimum(s.count), sparse_bytes_in(s),
                                                          allreduce_minimum(s.patch.count)};
    for (int m = 0; m < kModes; ++m) {  // first-use costs (connections, buffers)
      prepare(s, static_cast<Mode>(m));
      merge(s, static_cast<Mode>(m));
    }
    const bench::Samples seconds = bench::alternate(kModes, rounds, 1, [&](int m, int) {
      double total = 0;
      for (int rep = 0; rep < reps; ++rep) {
        prepare(s, static_cast<Mode>(m));
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = MPI_Wtime();
        merge(s, static_cast<Mode>(m));
        total += MPI_Wtime() - start;
      }
      verify(s, static_cast<Mode>(m));
      return std::vector<double>{total / reps};
    });
    for (int m = 0; m < kModes; ++m)
      report.row({std::to_string(bytes), kNames[static_cast<std::size_t>(m)], std::to_string(s.node.nodes),
                  std::to_string(s.node.min_ppn), std::to_string(reps), std::to_string(rounds),
                  bench::fixed(seconds.median(m) * 1e6, 2), bench::fixed(seconds.min(m) * 1e6, 2),
                  bench::fixed(seconds.max(m) * 1e6, 2),
                  bench::fixed(bytes_per_process[static_cast<std::size_t>(m)], 0),
                  kByteRules[static_cast<std::size_t>(m)]});
    bench::check(shim_mirror_free(&s.mirror), "shim_mirror_free");
  }
  report.line("verified: every checked merge gave the exact sums on every node's copy");
}

}  // namespace

int main(int argc, char** argv) { return bench::run("mirror_merge", kUsage, argc, argv, benchmark); }
