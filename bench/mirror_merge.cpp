// mirror_merge: the cost of merging a mirrored window of doubles, by size,
// on however many nodes the run has: a full merge (shim_mirror_merge), a
// sparse merge (shim_mirror_merge_sparse) where each node filled only part
// of its copy (by default its 1/nodes share, as in the mirrored matrix
// multiply), and a patch merge (shim_mirror_merge_patch) of a part of the
// array (default 10%). `--help` lists the flags.
//
// Each merge is timed alone: the copies are refilled (untimed) before every
// merge, MPI_Barrier, then the call. time = median over rounds of the max
// over ranks of the rank's mean over the round's merges; modes alternate in
// a rotating order within each round. Every round's last merge of each mode
// is checked element by element on every node's copy.
//
// Bytes per merging process are computed from the algorithm, not counted:
// full and patch merges are one MPI_Allreduce per local rank over its rail
// (the same local rank of every node) on its slice of the range, and no
// allreduce sends less than 2 (N-1)/N x slice per process (N nodes; MPICH's
// recursive doubling, used for small slices, sends log2(N) x slice). A
// sparse merge allgathers each node's non-zero blocks of the slice (plus an
// 8-byte id per block): each merging process receives what the other nodes
// found non-zero, counted here from the filled copies.
#include <mpi.h>
#include <shim/mirror.h>
#include <shim/shim.h>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "mirror_common.hpp"

namespace {

using bench::check;
using bench::fail;
using bench::format_bytes;
using bench::median;
using bench::UsageError;

constexpr std::string_view kUsage =
    "usage: mirror_merge [options]\n"
    "  --min BYTES     smallest array (all of it, doubles), a power of two; default 8K\n"
    "  --max BYTES     largest array; default 16M (K, M and G suffixes are accepted)\n"
    "  --rounds R      rounds per size; each round times every mode; default 7\n"
    "  --reps N        merges per mode per round; default: 4 MiB / size, between 1 and 16\n"
    "  --block BYTES   sparse merge block, a power of two >= 8; default 4K\n"
    "  --fill F        sparse mode: fraction of the array each node fills (from its own 1/nodes share on,\n"
    "                  wrapping); default 1/nodes (disjoint shares: the matrix-multiply case)\n"
    "  --patch P       patch mode: percent of the array merged (from element count * 0.3 on); default 10\n"
    "  --csv           CSV rows instead of the table; '#' lines are comments\n"
    "  --help          print this and exit\n";

struct Options {
  std::int64_t min_bytes = 8 << 10;
  std::int64_t max_bytes = 16 << 20;
  int rounds = 7;
  int reps = 0;  // 0: by size
  std::int64_t block_bytes = 4 << 10;
  double fill = 0;  // 0: 1/nodes
  double patch_percent = 10;
  bool csv = false;
};

Options parse(int argc, char** argv, bool& help) {
  const mbench::Args args(argc, argv, {"--min", "--max", "--rounds", "--reps", "--block", "--fill", "--patch"},
                          {"--csv"});
  help = args.flag("--help");
  Options o;
  o.min_bytes = args.bytes("--min", o.min_bytes);
  o.max_bytes = args.bytes("--max", o.max_bytes);
  o.rounds = args.count("--rounds", o.rounds, 1);
  o.reps = args.count("--reps", 0, 1);
  o.block_bytes = args.bytes("--block", o.block_bytes);
  o.fill = args.real("--fill", 0, 1e-9, 1);
  o.patch_percent = args.real("--patch", o.patch_percent, 1e-9, 100);
  o.csv = args.flag("--csv");
  if (o.min_bytes < 8 || o.block_bytes < 8) throw UsageError("--min and --block must be at least 8 (one double)");
  if (o.min_bytes > o.max_bytes) throw UsageError("--min is larger than --max");
  return o;
}

enum Mode : int { full, sparse, patch, kModes };
constexpr std::array<const char*, kModes> kNames = {"full", "sparse", "patch"};

struct Range {
  std::int64_t first = 0;
  std::int64_t count = 0;
  std::int64_t end() const { return first + count; }
  bool contains(std::int64_t i) const { return i >= first && i < end(); }
};

// Part `part` of `parts` balanced blocks of `whole`: the first whole.count %
// parts hold one more (mirror.h's rule for holders and merge slices).
Range share(Range whole, int parts, int part) {
  const std::int64_t base = whole.count / parts, extra = whole.count % parts;
  return {whole.first + part * base + std::min<std::int64_t>(part, extra), base + (part < extra ? 1 : 0)};
}

// Node n's value of element i before a merge: small and exact, so sums in
// any order are exact.
double value(int node, std::int64_t i) { return (node + 1) + 0.5 * static_cast<double>(i % 7); }

struct Setup {
  int rank = 0, size = 0;
  int node = 0, nodes = 1, local_rank = 0, local_size = 1, min_ppn = 1;
  shim_mirror mirror = nullptr;
  std::int64_t count = 0;
  Range held;                                // this process's holder range
  std::vector<std::vector<Range>> regions;   // sparse: what each node fills
  Range patch;
  std::int64_t block = 1;                    // sparse block, elements
};

std::vector<Range> fill_region(const Options& o, std::int64_t count, int nodes, int n) {
  const Range own = share({0, count}, nodes, n);
  const std::int64_t length =
      o.fill > 0 ? std::min<std::int64_t>(count, std::max<std::int64_t>(1, std::llround(o.fill * static_cast<double>(count))))
                 : own.count;
  if (own.first + length <= count) return {{own.first, length}};
  return {{own.first, count - own.first}, {0, own.first + length - count}};
}

bool in_region(const std::vector<Range>& region, std::int64_t i) {
  return std::any_of(region.begin(), region.end(), [&](const Range& r) { return r.contains(i); });
}

// Each process rewrites its own holder range of its node's copy.
void prepare(const Setup& s, Mode mode) {
  if (s.held.count == 0) return;
  void* address = nullptr;
  check(shim_mirror_address(s.mirror, s.held.first, &address), "shim_mirror_address");
  auto* data = static_cast<double*>(address);
  const std::vector<Range>& mine = s.regions[static_cast<std::size_t>(s.node)];
  for (std::int64_t k = 0; k < s.held.count; ++k) {
    const std::int64_t i = s.held.first + k;
    data[k] = mode != sparse || in_region(mine, i) ? value(s.node, i) : 0.0;
  }
}

double expected(const Setup& s, Mode mode, std::int64_t i) {
  if (mode == patch && !s.patch.contains(i)) return value(s.node, i);
  double sum = 0;
  for (int n = 0; n < s.nodes; ++n)
    if (mode != sparse || in_region(s.regions[static_cast<std::size_t>(n)], i)) sum += value(n, i);
  return sum;
}

void verify(const Setup& s, Mode mode, std::int64_t bytes) {
  if (s.held.count == 0) return;
  void* address = nullptr;
  check(shim_mirror_address(s.mirror, s.held.first, &address), "shim_mirror_address");
  const auto* data = static_cast<const double*>(address);
  for (std::int64_t k = 0; k < s.held.count; ++k) {
    const std::int64_t i = s.held.first + k;
    const double want = expected(s, mode, i);
    if (data[k] == want) continue;
    fail(std::string("WRONG RESULT after the ") + kNames[static_cast<std::size_t>(mode)] + " merge of " +
         format_bytes(bytes) + ": node " + std::to_string(s.node) + " (rank " + std::to_string(s.rank) +
         "), element " + std::to_string(i) + " is " + std::to_string(data[k]) + ", expected " + std::to_string(want));
  }
}

void merge(const Setup& s, Mode mode) {
  switch (mode) {
    case full: check(shim_mirror_merge(s.mirror), "shim_mirror_merge"); break;
    case sparse: check(shim_mirror_merge_sparse(s.mirror, s.block), "shim_mirror_merge_sparse"); break;
    case patch: check(shim_mirror_merge_patch(s.mirror, s.patch.first, s.patch.count), "shim_mirror_merge_patch"); break;
    case kModes: break;
  }
}

// Collective. What a sparse merge allgathers: the most any merging process
// receives (the other nodes' non-zero blocks of its slice, 8-byte ids
// included). Reads the freshly prepared sparse copies.
double sparse_bytes_in(const Setup& s) {
  check(shim_mirror_sync(s.mirror), "shim_mirror_sync");
  std::int64_t mine[2] = {-1, 0};  // merge slice (local rank), packed bytes
  if (s.local_rank < s.min_ppn) {
    const Range slice = share({0, s.count}, s.min_ppn, s.local_rank);
    std::vector<double> data(static_cast<std::size_t>(slice.count));
    if (slice.count > 0) check(shim_mirror_get(s.mirror, slice.first, slice.count, data.data()), "shim_mirror_get");
    for (std::int64_t b = 0; b < slice.count; b += s.block) {
      const std::int64_t n = std::min(s.block, slice.count - b);
      const bool nonzero = std::any_of(data.begin() + b, data.begin() + b + n, [](double x) { return x != 0.0; });
      if (nonzero) mine[1] += n * 8 + 8;
    }
    mine[0] = s.local_rank;
  }
  std::vector<std::int64_t> all(2 * static_cast<std::size_t>(s.size));
  MPI_Allgather(mine, 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T, MPI_COMM_WORLD);
  std::vector<std::int64_t> total(static_cast<std::size_t>(s.min_ppn), 0);
  for (int r = 0; r < s.size; ++r)
    if (all[2 * r] >= 0) total[static_cast<std::size_t>(all[2 * r])] += all[2 * r + 1];
  std::int64_t most = 0;
  for (int r = 0; r < s.size; ++r)
    if (all[2 * r] >= 0) most = std::max(most, total[static_cast<std::size_t>(all[2 * r])] - all[2 * r + 1]);
  check(shim_mirror_sync(s.mirror), "shim_mirror_sync");
  return static_cast<double>(most);
}

struct Row {
  std::int64_t bytes = 0;
  int reps = 0;
  std::array<double, kModes> median_us{}, min_us{}, max_us{};
  std::array<double, kModes> bytes_per_process{};
};

Row measure(const Options& o, Setup& s, std::int64_t bytes) {
  Row row;
  row.bytes = bytes;
  s.count = bytes / 8;
  check(shim_mirror_create(s.count, MPI_DOUBLE, MPI_COMM_WORLD, &s.mirror), "shim_mirror_create");
  MPI_Count first = 0, held = 0;
  check(shim_mirror_range(s.mirror, s.local_rank, &first, &held), "shim_mirror_range");
  s.held = {first, held};
  s.regions.clear();
  for (int n = 0; n < s.nodes; ++n) s.regions.push_back(fill_region(o, s.count, s.nodes, n));
  const std::int64_t patch_count =
      std::clamp<std::int64_t>(std::llround(o.patch_percent / 100 * static_cast<double>(s.count)), 1, s.count);
  s.patch = {std::min(s.count * 3 / 10, s.count - patch_count), patch_count};
  s.block = o.block_bytes / 8;
  row.reps = o.reps > 0 ? o.reps : static_cast<int>(std::clamp<std::int64_t>((4 << 20) / bytes, 1, 16));

  // Bytes per merging process (the largest slice, local rank 0's).
  const auto allreduce_minimum = [&](std::int64_t elements) {
    const double slice = static_cast<double>(share({0, elements}, s.min_ppn, 0).count) * 8;
    return 2.0 * (s.nodes - 1) / s.nodes * slice;
  };
  row.bytes_per_process[full] = allreduce_minimum(s.count);
  row.bytes_per_process[patch] = allreduce_minimum(s.patch.count);
  prepare(s, sparse);
  row.bytes_per_process[sparse] = sparse_bytes_in(s);

  // One untimed merge per mode: first-use costs (connections, buffers).
  for (int m = 0; m < kModes; ++m) {
    prepare(s, static_cast<Mode>(m));
    merge(s, static_cast<Mode>(m));
  }

  const auto rounds = static_cast<std::size_t>(o.rounds);
  std::vector<double> seconds(kModes * rounds, 0.0);
  for (std::size_t round = 0; round < rounds; ++round) {
    for (int k = 0; k < kModes; ++k) {
      const auto m = static_cast<Mode>((k + static_cast<int>(round)) % kModes);
      double total = 0;
      for (int rep = 0; rep < row.reps; ++rep) {
        prepare(s, m);
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = MPI_Wtime();
        merge(s, m);
        total += MPI_Wtime() - start;
      }
      seconds[static_cast<std::size_t>(m) * rounds + round] = total / row.reps;
      verify(s, m, bytes);
    }
  }
  seconds = mbench::max_over_ranks(seconds);
  for (int m = 0; m < kModes; ++m) {
    const auto i = static_cast<std::size_t>(m);
    std::vector<double> us(seconds.begin() + static_cast<std::ptrdiff_t>(i * rounds),
                           seconds.begin() + static_cast<std::ptrdiff_t>((i + 1) * rounds));
    for (double& t : us) t *= 1e6;
    row.median_us[i] = median(us);
    row.min_us[i] = *std::min_element(us.begin(), us.end());
    row.max_us[i] = *std::max_element(us.begin(), us.end());
  }
  check(shim_mirror_free(&s.mirror), "shim_mirror_free");
  return row;
}

constexpr std::array<const char*, kModes> kByteRules = {"allreduce_minimum", "allgathered_in", "allreduce_minimum"};

void print_csv_row(const Options& o, const Setup& s, const Row& r) {
  for (int m = 0; m < kModes; ++m) {
    const auto i = static_cast<std::size_t>(m);
    std::printf("%" PRId64 ",%s,%d,%d,%d,%d,%.2f,%.2f,%.2f,%.0f,%s\n", r.bytes, kNames[i], s.nodes, s.min_ppn, r.reps,
                o.rounds, r.median_us[i], r.min_us[i], r.max_us[i], r.bytes_per_process[i], kByteRules[i]);
  }
  std::fflush(stdout);
}

std::string format_amount(double bytes) {
  char text[32];
  if (bytes >= 1 << 20) {
    std::snprintf(text, sizeof text, "%.2f MiB", bytes / (1 << 20));
  } else if (bytes >= 1 << 10) {
    std::snprintf(text, sizeof text, "%.1f KiB", bytes / (1 << 10));
  } else {
    std::snprintf(text, sizeof text, "%.0f B", bytes);
  }
  return text;
}

void print_table(const Options& o, const Setup& s, const std::vector<Row>& rows) {
  char patch_name[32];
  std::snprintf(patch_name, sizeof patch_name, "patch %g%%", o.patch_percent);
  std::printf("\nMerge time, us (median over %d rounds of the max over ranks of the mean per round), %d node%s, %d "
              "merging process%s per node; bytes per merging process (see the header)\n",
              o.rounds, s.nodes, s.nodes == 1 ? "" : "s", s.min_ppn, s.min_ppn == 1 ? "" : "es");
  std::printf("%9s %5s %10s %10s %11s   %14s %14s %14s\n", "size", "reps", "full", "sparse", patch_name,
              "full >=", "sparse in", "patch >=");
  for (const Row& r : rows) {
    std::printf("%9s %5d %10s %10s %11s   %14s %14s %14s\n", format_bytes(r.bytes).c_str(), r.reps,
                mbench::format_us(r.median_us[full]).c_str(), mbench::format_us(r.median_us[sparse]).c_str(),
                mbench::format_us(r.median_us[patch]).c_str(), format_amount(r.bytes_per_process[full]).c_str(),
                format_amount(r.bytes_per_process[sparse]).c_str(), format_amount(r.bytes_per_process[patch]).c_str());
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  bench::set_program_name("mirror_merge");
  MPI_Init(&argc, &argv);
  Options o;
  if (const auto status = mbench::parse_or_exit("mirror_merge", kUsage, argc, argv, o, parse)) return *status;

  Setup s;
  MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &s.size);
  const mbench::Machine machine = mbench::describe_machine();
  {
    shim_mirror probe = nullptr;
    check(shim_mirror_create(1, MPI_DOUBLE, MPI_COMM_WORLD, &probe), "shim_mirror_create");
    check(shim_mirror_node(probe, &s.node, &s.nodes, &s.local_rank, &s.local_size), "shim_mirror_node");
    check(shim_mirror_free(&probe), "shim_mirror_free");
  }
  s.min_ppn = machine.min_ppn;

  if (s.rank == 0) {
    mbench::print_line(o.csv, std::string("mirror_merge (shim ") + shim_version() +
                                  "): shim_mirror_merge (full), shim_mirror_merge_sparse (sparse) and "
                                  "shim_mirror_merge_patch (patch) of a mirrored window of doubles");
    mbench::print_machine(machine, o.csv);
    char text[1024];
    std::snprintf(text, sizeof text,
                  "modes: full: every node's copy dense. sparse: node n non-zero only in %s (block %s). patch: the "
                  "elements [0.3 count, +%g%%) of dense copies",
                  o.fill > 0 ? ("a run of " + bench::format_number(o.fill * 100) + "% of the elements from its share on")
                                   .c_str()
                             : "its own 1/nodes share",
                  format_bytes(o.block_bytes).c_str(), o.patch_percent);
    mbench::print_line(o.csv, text);
    mbench::print_line(o.csv, "bytes per merging process, from the algorithm: full and patch: one MPI_Allreduce of "
                              "the process's slice (the range / merging processes per node) over the N nodes; no "
                              "allreduce sends less than 2(N-1)/N x slice per process ('>=': MPICH's recursive "
                              "doubling for small slices sends log2(N) x slice). sparse: one MPI_Allgatherv of each "
                              "node's non-zero blocks of the slice plus 8-byte block ids ('in': the most any "
                              "merging process receives, counted from the filled copies; a ring sends as much)");
    mbench::print_line(o.csv, "method: per merge the copies are refilled (untimed), MPI_Barrier, then the merge "
                              "alone is timed; modes rotate within each round; every round's last merge of each mode "
                              "is checked on every node's copy");
    if (o.csv)
      std::printf("bytes,mode,nodes,merging_per_node,reps,rounds,time_us,min_us,max_us,bytes_per_process,rule\n");
    std::fflush(stdout);
  }

  std::vector<Row> rows;
  for (std::int64_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= 2) {
    rows.push_back(measure(o, s, bytes));
    if (s.rank == 0 && o.csv) print_csv_row(o, s, rows.back());
  }
  if (s.rank == 0 && !o.csv) print_table(o, s, rows);
  if (s.rank == 0)
    mbench::print_line(o.csv, "verified: every checked merge gave the exact sums on every node's copy");
  MPI_Finalize();
  return 0;
}
