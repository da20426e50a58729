// mirror_access: latency and bandwidth of get and put on a mirrored window
// (shim_mirror_get / shim_mirror_put: copies within the node's copy) against
// MPI_Get / MPI_Put + MPI_Win_flush on the window of a distributed array
// holding the same elements, always aimed at elements that a REMOTE owner
// (a rank of another mirror node) holds. `--help` lists the flags.
//
// Method (bcast_latency's): per size, warm-up calls of each method size its
// batch (about --batch-ms long, the same on every rank), then --rounds
// rounds run one batch of each method back to back in a rotating order,
// MPI_Barrier before each. latency = median over rounds of the max over
// ranks of the rank's mean time per operation; x/mirror = median over rounds
// of the same-round ratio. Every get batch's last buffer is checked against
// the array's contents; puts write the values already there, so the checks
// stay valid, and the whole target block is checked at the end.
#include <mpi.h>
#include <shim/mirror.h>
#include <shim/shim.h>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
    "usage: mirror_access [options]\n"
    "  --min BYTES      smallest transfer, a power of two >= 8 (elements are doubles); default 8\n"
    "  --max BYTES      largest transfer; default 1M (K, M and G suffixes are accepted)\n"
    "  --rounds R       rounds per size, each one batch of every method; default 9\n"
    "  --warmup N       untimed operations per method and size, which also size the batches; default 10\n"
    "  --batch-ms MS    target length of one batch, from the warm-up's speed; default 20\n"
    "  --max-iters N    at most N operations per batch; default 100000\n"
    "  --origins WHO    'all': every rank accesses its remote owner at once (each rank is origin and target);\n"
    "                   'one': only rank 0 does, the others wait in MPI_Barrier (OSU style); default all\n"
    "  --buffer-offset B  the user buffer starts B bytes (0..4088, a multiple of 8) past a page boundary;\n"
    "                   default 0. memcpy speed can depend on (destination - source) mod 4096 (see the header)\n"
    "  --csv            CSV rows instead of tables; '#' lines are comments\n"
    "  --help           print this and exit\n";

struct Options {
  std::int64_t min_bytes = 8;
  std::int64_t max_bytes = std::int64_t{1} << 20;
  int rounds = 9;
  int warmup = 10;
  int batch_ms = 20;
  int max_iters = 100000;
  int buffer_offset = 0;
  bool one_origin = false;
  bool csv = false;
};

Options parse(int argc, char** argv, bool& help) {
  const mbench::Args args(argc, argv, {"--min", "--max", "--rounds", "--warmup", "--batch-ms", "--max-iters", "--origins",
                                             "--buffer-offset"},
                          {"--csv"});
  help = args.flag("--help");
  Options o;
  o.min_bytes = args.bytes("--min", o.min_bytes);
  o.max_bytes = args.bytes("--max", o.max_bytes);
  o.rounds = args.count("--rounds", o.rounds, 1);
  o.warmup = args.count("--warmup", o.warmup, 1);
  o.batch_ms = args.count("--batch-ms", o.batch_ms, 1);
  o.max_iters = args.count("--max-iters", o.max_iters, 1);
  if (const auto who = args.value("--origins")) {
    if (*who != "all" && *who != "one") throw UsageError("--origins '" + *who + "': expected all or one");
    o.one_origin = *who == "one";
  }
  o.buffer_offset = args.count("--buffer-offset", 0, 0);
  if (o.buffer_offset > 4088 || o.buffer_offset % 8 != 0)
    throw UsageError("--buffer-offset must be a multiple of 8 from 0 to 4088");
  o.csv = args.flag("--csv");
  if (o.min_bytes < 8) throw UsageError("--min must be at least 8 (one double)");
  if (o.min_bytes > o.max_bytes) throw UsageError("--min is larger than --max");
  return o;
}

enum Method : int { native_get, mirror_get, native_put, mirror_put, kMethods };
constexpr std::array<const char*, kMethods> kNames = {"MPI_Get+flush", "mirror_get", "MPI_Put+flush", "mirror_put"};

// Element i of the array: distinct and exact.
double value_of(std::int64_t i) { return static_cast<double>(i) + 0.25; }

struct Setup {
  int rank = 0, size = 0;
  shim_distributed array = nullptr;
  shim_mirror mirror = nullptr;
  MPI_Win window = MPI_WIN_NULL;
  int target = 0;             // the remote owner
  std::int64_t first = 0;     // its block's first element
  bool active = true;         // this rank runs batches (--origins)
  double* buffer = nullptr;   // max bytes; gets land here, puts read from it
};

// Runs `iterations` operations of `method` on n doubles; returns seconds.
double batch(const Setup& s, Method method, std::int64_t n, int iterations) {
  const int count = static_cast<int>(n);
  const double start = MPI_Wtime();
  switch (method) {
    case native_get:
      for (int i = 0; i < iterations; ++i) {
        MPI_Get(s.buffer, count, MPI_DOUBLE, s.target, 0, count, MPI_DOUBLE, s.window);
        MPI_Win_flush(s.target, s.window);
      }
      break;
    case mirror_get:
      for (int i = 0; i < iterations; ++i) shim_mirror_get(s.mirror, s.first, n, s.buffer);
      break;
    case native_put:
      for (int i = 0; i < iterations; ++i) {
        MPI_Put(s.buffer, count, MPI_DOUBLE, s.target, 0, count, MPI_DOUBLE, s.window);
        MPI_Win_flush(s.target, s.window);
      }
      break;
    case mirror_put:
      for (int i = 0; i < iterations; ++i) shim_mirror_put(s.mirror, s.first, n, s.buffer);
      break;
    case kMethods:
      break;
  }
  return MPI_Wtime() - start;
}

void fill_expected(const Setup& s, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) s.buffer[i] = value_of(s.first + i);
}

void verify(const Setup& s, std::int64_t n, const char* what) {
  for (std::int64_t i = 0; i < n; ++i) {
    if (s.buffer[i] == value_of(s.first + i)) continue;
    fail(std::string("WRONG RESULT after ") + what + ": rank " + std::to_string(s.rank) + ", element " +
         std::to_string(s.first + i) + " (owner rank " + std::to_string(s.target) + ") reads " +
         std::to_string(s.buffer[i]) + ", expected " + std::to_string(value_of(s.first + i)));
  }
}

struct Row {
  std::int64_t bytes = 0;
  std::array<int, kMethods> iterations{};
  std::array<double, kMethods> median_us{}, min_us{}, max_us{};
  double get_ratio = 0, put_ratio = 0;  // native / mirror, median of same-round ratios
};

Row measure(const Options& o, const Setup& s, std::int64_t bytes) {
  const std::int64_t n = bytes / 8;
  Row row;
  row.bytes = bytes;
  fill_expected(s, n);
  // Warm-up, which also tells how long one operation takes.
  std::vector<double> estimate(kMethods, 0.0);
  for (int m = 0; m < kMethods; ++m) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (s.active) estimate[static_cast<std::size_t>(m)] = batch(s, static_cast<Method>(m), n, o.warmup) / o.warmup;
    if (m == mirror_put) shim_mirror_sync(s.mirror);
  }
  estimate = mbench::max_over_ranks(estimate);
  for (int m = 0; m < kMethods; ++m) {
    const double per_op = std::max(estimate[static_cast<std::size_t>(m)], 1e-9);
    row.iterations[static_cast<std::size_t>(m)] =
        static_cast<int>(std::clamp(o.batch_ms * 1e-3 / per_op, 1.0, static_cast<double>(o.max_iters)));
  }

  const auto rounds = static_cast<std::size_t>(o.rounds);
  std::vector<double> seconds(kMethods * rounds, 0.0);
  for (std::size_t round = 0; round < rounds; ++round) {
    for (int k = 0; k < kMethods; ++k) {
      const auto m = static_cast<Method>((k + static_cast<int>(round)) % kMethods);
      const int iterations = row.iterations[static_cast<std::size_t>(m)];
      if (m == native_put || m == mirror_put) fill_expected(s, n);
      MPI_Barrier(MPI_COMM_WORLD);
      if (s.active) seconds[static_cast<std::size_t>(m) * rounds + round] = batch(s, m, n, iterations) / iterations;
      // Outside the timing: order the puts before anybody reads (the
      // mirror's rule), and check what the gets read.
      if (m == mirror_put) shim_mirror_sync(s.mirror);
      if (s.active && (m == native_get || m == mirror_get)) verify(s, n, kNames[static_cast<std::size_t>(m)]);
    }
  }
  seconds = mbench::max_over_ranks(seconds);
  for (int m = 0; m < kMethods; ++m) {
    std::vector<double> us(seconds.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(m) * rounds),
                           seconds.begin() + static_cast<std::ptrdiff_t>((static_cast<std::size_t>(m) + 1) * rounds));
    for (double& t : us) t *= 1e6;
    row.median_us[static_cast<std::size_t>(m)] = median(us);
    row.min_us[static_cast<std::size_t>(m)] = *std::min_element(us.begin(), us.end());
    row.max_us[static_cast<std::size_t>(m)] = *std::max_element(us.begin(), us.end());
  }
  std::vector<double> get_ratios(rounds), put_ratios(rounds);
  for (std::size_t r = 0; r < rounds; ++r) {
    get_ratios[r] = seconds[native_get * rounds + r] / seconds[mirror_get * rounds + r];
    put_ratios[r] = seconds[native_put * rounds + r] / seconds[mirror_put * rounds + r];
  }
  row.get_ratio = median(get_ratios);
  row.put_ratio = median(put_ratios);
  return row;
}

void print_csv_row(const Options& o, const Row& r) {
  for (int m = 0; m < kMethods; ++m) {
    const auto i = static_cast<std::size_t>(m);
    const bool get = m == native_get || m == mirror_get;
    std::printf("%" PRId64 ",%s,%s,%d,%d,%.4f,%.4f,%.4f,%.2f,%.3f\n", r.bytes, get ? "get" : "put", kNames[i],
                r.iterations[i], o.rounds, r.median_us[i], r.min_us[i], r.max_us[i],
                static_cast<double>(r.bytes) / r.median_us[i], get ? r.get_ratio : r.put_ratio);
  }
  std::fflush(stdout);
}

void print_tables(const Options& o, const std::vector<Row>& rows) {
  std::printf("\nLatency, us per operation (median over %d rounds of the max over ranks of the mean per batch); "
              "native/mirror = median of same-round ratios\n",
              o.rounds);
  std::printf("%9s %14s %12s %13s %14s %12s %13s\n", "size", "MPI_Get+flush", "mirror_get", "native/mirror",
              "MPI_Put+flush", "mirror_put", "native/mirror");
  for (const Row& r : rows) {
    std::printf("%9s %14s %12s %13.1f %14s %12s %13.1f\n", format_bytes(r.bytes).c_str(),
                mbench::format_us(r.median_us[native_get]).c_str(), mbench::format_us(r.median_us[mirror_get]).c_str(),
                r.get_ratio, mbench::format_us(r.median_us[native_put]).c_str(),
                mbench::format_us(r.median_us[mirror_put]).c_str(), r.put_ratio);
  }
  std::printf("\nBandwidth, MB/s (size / latency above, 1 MB = 1e6 bytes), and operations per batch\n");
  std::printf("%9s %14s %12s %14s %12s   %s\n", "size", "MPI_Get+flush", "mirror_get", "MPI_Put+flush", "mirror_put",
              "iterations (get, mirror get, put, mirror put)");
  for (const Row& r : rows) {
    const auto bytes = static_cast<double>(r.bytes);
    std::printf("%9s %14s %12s %14s %12s   %d, %d, %d, %d\n", format_bytes(r.bytes).c_str(),
                mbench::format_rate(bytes / r.median_us[native_get]).c_str(),
                mbench::format_rate(bytes / r.median_us[mirror_get]).c_str(),
                mbench::format_rate(bytes / r.median_us[native_put]).c_str(),
                mbench::format_rate(bytes / r.median_us[mirror_put]).c_str(), r.iterations[0], r.iterations[1],
                r.iterations[2], r.iterations[3]);
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  bench::set_program_name("mirror_access");
  MPI_Init(&argc, &argv);
  Options o;
  if (const auto status = mbench::parse_or_exit("mirror_access", kUsage, argc, argv, o, parse)) return *status;

  Setup s;
  MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &s.size);
  const mbench::Machine machine = mbench::describe_machine();
  if (machine.nodes < 2) {
    if (s.rank == 0)
      std::fprintf(stderr, "mirror_access: one mirror node only: no remote owner to compare with (run on two hosts, "
                           "or set SHIM_NODE_SIZE)\n");
    MPI_Finalize();
    return 2;
  }

  // Every rank owns max bytes of the array, so any transfer fits in the
  // target's block.
  const std::int64_t per_rank = o.max_bytes / 8;
  const std::int64_t count = per_rank * s.size;
  check(shim_distributed_create(count, MPI_DOUBLE, MPI_COMM_WORLD, &s.array), "shim_distributed_create");
  check(shim_mirror_create(count, MPI_DOUBLE, MPI_COMM_WORLD, &s.mirror), "shim_mirror_create");
  check(shim_distributed_window(s.array, &s.window), "shim_distributed_window");
  {
    MPI_Count first = 0, held = 0;
    check(shim_distributed_range(s.array, s.rank, &first, &held), "shim_distributed_range");
    double* mine = mbench::local_block(s.array);
    for (MPI_Count i = 0; i < held; ++i) mine[i] = value_of(first + i);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double copy_start = MPI_Wtime();
  check(shim_mirror_copy_from_distributed(s.mirror, s.array), "shim_mirror_copy_from_distributed");
  const double copy_seconds = mbench::max_over_ranks(MPI_Wtime() - copy_start);

  // The remote owner: the first rank of another mirror node, counting on
  // from this rank by its node's size (the same local rank on the next node
  // when nodes are consecutive ranks, so targets differ within a node).
  int node = 0, nodes = 0, local_rank = 0, local_size = 0;
  check(shim_mirror_node(s.mirror, &node, &nodes, &local_rank, &local_size), "shim_mirror_node");
  std::vector<int> node_of(static_cast<std::size_t>(s.size));
  MPI_Allgather(&node, 1, MPI_INT, node_of.data(), 1, MPI_INT, MPI_COMM_WORLD);
  s.target = -1;
  for (int d = 0; d < s.size && s.target < 0; ++d) {
    const int candidate = (s.rank + local_size + d) % s.size;
    if (node_of[static_cast<std::size_t>(candidate)] != node) s.target = candidate;
  }
  {
    MPI_Count first = 0, held = 0;
    check(shim_distributed_range(s.array, s.target, &first, &held), "shim_distributed_range");
    s.first = first;
  }
  // Whether the target shares this rank's host (virtual nodes on one host).
  MPI_Comm host = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
  int host_leader = s.rank;
  MPI_Allreduce(MPI_IN_PLACE, &host_leader, 1, MPI_INT, MPI_MIN, host);
  MPI_Comm_free(&host);
  std::vector<int> host_of(static_cast<std::size_t>(s.size));
  MPI_Allgather(&host_leader, 1, MPI_INT, host_of.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> targets(static_cast<std::size_t>(s.size));
  MPI_Allgather(&s.target, 1, MPI_INT, targets.data(), 1, MPI_INT, MPI_COMM_WORLD);
  s.active = !o.one_origin || s.rank == 0;

  const bool contiguous = mbench::copy_is_contiguous(s.mirror);
  unsigned char* const allocation = bench::page_aligned(static_cast<std::size_t>(o.max_bytes + 4096)).release();
  s.buffer = reinterpret_cast<double*>(allocation + o.buffer_offset);
  void* target_address = nullptr;
  check(shim_mirror_address(s.mirror, s.first, &target_address), "shim_mirror_address");
  const auto copy_offset = static_cast<int>(reinterpret_cast<std::uintptr_t>(target_address) % 4096);
  if (s.rank == 0) {
    mbench::print_line(o.csv, std::string("mirror_access (shim ") + shim_version() +
                                  "): get/put of doubles aimed at a remote owner's elements: MPI_Get/MPI_Put + "
                                  "MPI_Win_flush on the distributed array's window (passive target, MPI_Win_lock_all "
                                  "held for the run) vs shim_mirror_get/put on this node's copy; alternating in one run");
    mbench::print_machine(machine, o.csv);
    std::string map;
    int other_host = 0;
    for (int r = 0; r < s.size; ++r) {
      const bool same = host_of[static_cast<std::size_t>(r)] == host_of[static_cast<std::size_t>(targets[r])];
      other_host += same ? 0 : 1;
      map += " " + std::to_string(r) + "->" + std::to_string(targets[static_cast<std::size_t>(r)]) +
             (same ? "(same host)" : "(other host)");
    }
    mbench::print_line(o.csv, "remote owners (rank->owner):" + map + "; " + std::to_string(other_host) + " of " +
                                  std::to_string(s.size) + " cross hosts. origins: " +
                                  (o.one_origin ? "rank 0 only, the others wait in MPI_Barrier"
                                                : "every rank at once (each is also a target)"));
    mbench::print_line(o.csv, "array: " + std::to_string(count) + " doubles (" + format_bytes(count * 8) +
                                  "), " + format_bytes(per_rank * 8) + " per rank; node copy " +
                                  (contiguous ? "contiguous" : "in per-holder pieces") +
                                  "; copy_from_distributed took " + mbench::format_us(copy_seconds * 1e6) + " us");
    mbench::print_line(o.csv, "alignment (rank 0): user buffer at page offset " + std::to_string(o.buffer_offset) +
                                  ", the target elements in the node copy at page offset " +
                                  std::to_string(copy_offset) + ": (destination - source) mod 4096 is " +
                                  std::to_string((copy_offset - o.buffer_offset + 4096) % 4096) + " for mirror_put, " +
                                  std::to_string((o.buffer_offset - copy_offset + 4096) % 4096) +
                                  " for mirror_get (glibc's memcpy on some CPUs is many times slower at 8..16)");
    mbench::print_line(o.csv, "method: per size " + std::to_string(o.warmup) +
                                  " warm-up operations per method size its batches (~" + std::to_string(o.batch_ms) +
                                  " ms, same count on all ranks), then " + std::to_string(o.rounds) +
                                  " rounds of one batch per method, rotating order, MPI_Barrier before each batch. "
                                  "A mirrored put only writes this node's copy: other nodes see it after a merge "
                                  "(bench/mirror_merge). Operations repeat on the same elements, so both sides "
                                  "read and write cache-warm buffers");
    if (o.csv)
      std::printf("bytes,operation,method,iterations,rounds,latency_us,min_us,max_us,mb_per_s,native_over_mirror\n");
    std::fflush(stdout);
  }

  check(MPI_Win_lock_all(0, s.window), "MPI_Win_lock_all");
  std::vector<Row> rows;
  for (std::int64_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= 2) {
    rows.push_back(measure(o, s, bytes));
    if (s.rank == 0 && o.csv) print_csv_row(o, rows.back());
  }

  // The whole target block, both ways, after every put.
  shim_mirror_sync(s.mirror);
  MPI_Barrier(MPI_COMM_WORLD);
  const int n = static_cast<int>(per_rank);
  MPI_Get(s.buffer, n, MPI_DOUBLE, s.target, 0, n, MPI_DOUBLE, s.window);
  MPI_Win_flush(s.target, s.window);
  verify(s, per_rank, "the run (MPI_Get of the whole target block)");
  shim_mirror_get(s.mirror, s.first, per_rank, s.buffer);
  verify(s, per_rank, "the run (shim_mirror_get of the whole target block)");
  MPI_Win_unlock_all(s.window);
  MPI_Barrier(MPI_COMM_WORLD);  // verify() aborts the job on a wrong value

  if (s.rank == 0 && !o.csv) print_tables(o, rows);
  if (s.rank == 0)
    mbench::print_line(o.csv, "verified: the last get of every batch and, at the end, the whole target block (both "
                              "ways) held the array's values on every rank");
  std::free(allocation);
  check(shim_mirror_free(&s.mirror), "shim_mirror_free");
  check(shim_distributed_free(&s.array), "shim_distributed_free");
  MPI_Finalize();
  return 0;
}
