// acc_latency: OSU-style MPI_Accumulate latency and bandwidth (osu_acc_latency
// with flush synchronization, and an osu_put_bw-style window of accumulates)
// for the accumulate paths shim offers per window (info key shim_accumulate
// of MPI_Win_allocate: native MPI, caller-computes, owner-computes), all in
// one run, alternating round by round. `--help` lists the flags.
//
// Rank 0 is the origin and rank 1 the target; further ranks only take part
// in the barriers. Elements are MPI_DOUBLE, the operation MPI_SUM, the
// target displacement 0.
//
//   latency:   MPI_Win_lock(MPI_LOCK_SHARED, 1) once per batch, then per
//              iteration MPI_Accumulate + MPI_Win_flush(1), MPI_Win_unlock
//              after the batch (outside the timing).
//   bandwidth: per iteration --window accumulates, then one MPI_Win_flush(1);
//              MB/s = accumulated bytes / time (1 MB = 1e6 bytes).
//
// Per size, warm-up batches of every path size the batches (about
// --batch-ms each, at most --iters), then --rounds rounds run one latency
// and one bandwidth batch of every path, in an order rotating by round, with
// MPI_Barrier before each batch. Reported: median over rounds of the max over
// ranks (MPI_Reduce MAX; only the origin times), and the median of same-round
// ratios between paths. After every batch the target checks its window:
// element i must hold (accumulates) x (1 + i % 7), the element past the
// range 0.
//
// Two other modes replace the measurement above:
//   --busy-target S  the target computes in stretches of S seconds without
//                    calling MPI (one MPI_Test between stretches) while the
//                    origin runs latency batches; beside it the same batches
//                    with the target waiting inside MPI. Native MPICH needs
//                    the target's progress engine for accumulates; a path
//                    that does not shows busy ~ idle.
//   --server-idle S  every rank sleeps S seconds (nanosleep, no MPI call)
//                    before any window exists and again with the windows
//                    allocated and used; CPU time of every thread but the
//                    main one from /proc/self/task/*/stat (utime + stime)
//                    and schedstat, as percent of one core.
#include <dirent.h>
#include <mpi.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "acc_common.hpp"
#include "bench_common.hpp"
#include "mirror_common.hpp"

namespace {

using abench::kPathNames;
using abench::Path;
using bench::check;
using bench::fail;
using bench::format_bytes;
using bench::median;
using bench::UsageError;

constexpr std::string_view kUsage =
    "usage: acc_latency [options]        (2 ranks: rank 0 the origin, rank 1 the target)\n"
    "  --min BYTES        smallest accumulate, a power of two >= 8 (MPI_DOUBLE elements); default 8\n"
    "  --max BYTES        largest accumulate; default 1M (K, M and G suffixes are accepted)\n"
    "  --sizes LIST       comma-separated sizes instead of --min/--max; --busy-target's default is 8,4K,64K,1M\n"
    "  --iters N          at most N accumulates (latency) or windows (bandwidth) per batch; default 1000\n"
    "  --batch-ms MS      target length of a batch, from the warm-up's speed; default 50\n"
    "  --warmup N         untimed accumulates per path and size before the rounds (latency; bandwidth: one\n"
    "                     window); default 5\n"
    "  --rounds R         rounds per size, each one batch of every path; default 7 (--busy-target: 5)\n"
    "  --window W         accumulates per flush in the bandwidth batches; default 64\n"
    "  --paths LIST       from native,caller,owner,auto (the shim_accumulate values); default native,caller,owner\n"
    "  --busy-target S    latency with the target computing S-second stretches without MPI, against the target\n"
    "                     waiting in MPI (no bandwidth); e.g. 0.01\n"
    "  --busy-cap S       longest busy batch at the origin (it stops early and reports the mean so far);\n"
    "                     default max(1, 20 x the stretch)\n"
    "  --server-idle S    CPU time of the process's threads other than the main one while every rank sleeps\n"
    "                     S seconds without MPI calls: before any window, then with the windows allocated and\n"
    "                     used; percent of one core. No latency measurement\n"
    "  --csv              CSV rows instead of tables; '#' lines are comments\n"
    "  --help             print this and exit\n";

struct Options {
  std::vector<std::int64_t> sizes;
  int iters = 1000;
  int batch_ms = 50;
  int warmup = 5;
  int rounds = 7;
  int window = 64;
  std::vector<Path> paths;
  double busy = 0;      // seconds per stretch; 0: not this mode
  double busy_cap = 0;
  double server_idle = 0;  // seconds; 0: not this mode
  bool csv = false;
};

std::vector<std::int64_t> parse_sizes(std::string_view text) {
  std::vector<std::int64_t> sizes;
  while (true) {
    const std::size_t comma = text.find(',');
    sizes.push_back(bench::parse_power_of_two_bytes("--sizes", text.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

Options parse(int argc, char** argv, bool& help) {
  const mbench::Args args(argc, argv,
                          {"--min", "--max", "--sizes", "--iters", "--batch-ms", "--warmup", "--rounds", "--window",
                           "--paths", "--busy-target", "--busy-cap", "--server-idle"},
                          {"--csv"});
  help = args.flag("--help");
  Options o;
  o.busy = args.real("--busy-target", 0, 1e-6, 60);
  o.server_idle = args.real("--server-idle", 0, 0.1, 3600);
  if (o.busy > 0 && o.server_idle > 0) throw UsageError("--busy-target and --server-idle are separate modes");
  if (args.value("--busy-cap") && o.busy == 0) throw UsageError("--busy-cap needs --busy-target");
  o.busy_cap = args.real("--busy-cap", std::max(1.0, 20 * o.busy), 1e-3, 3600);
  if (const auto sizes = args.value("--sizes")) {
    if (args.value("--min") || args.value("--max")) throw UsageError("--sizes replaces --min and --max");
    o.sizes = parse_sizes(*sizes);
  } else if (o.busy > 0 && !args.value("--min") && !args.value("--max")) {
    o.sizes = {8, 4096, 65536, 1 << 20};
  } else {
    const std::int64_t min = args.bytes("--min", 8);
    const std::int64_t max = args.bytes("--max", std::int64_t{1} << 20);
    if (min > max) throw UsageError("--min is larger than --max");
    for (std::int64_t s = min; s <= max; s *= 2) o.sizes.push_back(s);
  }
  if (o.sizes.front() < 8) throw UsageError("sizes must be at least 8 bytes (one double)");
  if (o.sizes.back() > (std::int64_t{1} << 30)) throw UsageError("sizes must be at most 1 GiB");
  o.iters = args.count("--iters", o.iters, 1);
  o.batch_ms = args.count("--batch-ms", o.batch_ms, 1);
  o.warmup = args.count("--warmup", o.warmup, 1);
  o.rounds = args.count("--rounds", o.busy > 0 ? 5 : o.rounds, 1);
  o.window = args.count("--window", o.window, 1);
  o.paths = abench::parse_paths("--paths", args.value("--paths").value_or("native,caller,owner"));
  o.csv = args.flag("--csv");
  return o;
}

constexpr int kOrigin = 0;
constexpr int kTarget = 1;

struct Setup {
  int rank = 0, size = 0;
  std::array<MPI_Win, abench::kPaths> windows{};
  std::array<double*, abench::kPaths> base{};
  std::int64_t window_elements = 0;
  bench::Buffer buffer;  // the origin's data: element i = value_of(i)
};

double value_of(std::int64_t i) { return static_cast<double>(1 + i % 7); }

// Target: zero [0, n] of its window (n is past the range: it must stay 0).
void zero(const Setup& s, Path p, std::int64_t n) {
  check(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, kTarget, 0, s.windows[p]), "MPI_Win_lock");
  std::memset(s.base[p], 0, static_cast<std::size_t>(std::min(n + 1, s.window_elements)) * sizeof(double));
  check(MPI_Win_unlock(kTarget, s.windows[p]), "MPI_Win_unlock");
}

void verify(const Setup& s, Path p, std::int64_t n, std::int64_t accumulates, const char* what) {
  check(MPI_Win_lock(MPI_LOCK_SHARED, kTarget, 0, s.windows[p]), "MPI_Win_lock");
  const double* w = s.base[p];
  for (std::int64_t i = 0; i < std::min(n + 1, s.window_elements); ++i) {
    const double want = i < n ? static_cast<double>(accumulates) * value_of(i) : 0.0;
    if (w[i] == want) continue;
    char detail[256];
    std::snprintf(detail, sizeof detail, "element %" PRId64 " is %.17g, expected %.17g (%" PRId64 " accumulates of %s)",
                  i, w[i], want, accumulates, format_bytes(n * 8).c_str());
    fail(std::string("WRONG RESULT in the target's window after a ") + what + " batch on the '" + kPathNames[p] +
         "' window: " + detail + "; aborting");
  }
  check(MPI_Win_unlock(kTarget, s.windows[p]), "MPI_Win_unlock");
}

volatile double g_sink = 0;

// Computes for `seconds` without any MPI call.
void compute_for(double seconds) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const double end = static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9 + seconds;
  double x = g_sink + 1.0;
  while (true) {
    for (int k = 0; k < 4096; ++k) x = x * 1.0000001 + 1e-9;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9 >= end) break;
  }
  g_sink = x;
}

enum class Kind { latency, bandwidth };

struct Batch {
  double seconds = 0;  // the origin's; 0 elsewhere
  int ops = 0;         // accumulates (latency) or windows (bandwidth) done
};

// Collective. The origin runs up to `count` operations (stopping once `cap`
// seconds have passed, if cap > 0); the target waits in MPI, or computes in
// `busy`-second stretches, then checks its window.
Batch run_batch(const Options& o, const Setup& s, Path p, Kind kind, std::int64_t n, int count, double cap,
                double busy) {
  const MPI_Win win = s.windows[p];
  const int elements = static_cast<int>(n);
  if (s.rank == kTarget) zero(s, p, n);
  MPI_Barrier(MPI_COMM_WORLD);
  Batch b;
  MPI_Request done = MPI_REQUEST_NULL;
  if (s.rank == kOrigin) {
    const auto* data = reinterpret_cast<const double*>(s.buffer.get());
    check(MPI_Win_lock(MPI_LOCK_SHARED, kTarget, 0, win), "MPI_Win_lock");
    const double start = MPI_Wtime();
    if (kind == Kind::latency) {
      while (b.ops < count) {
        check(MPI_Accumulate(data, elements, MPI_DOUBLE, kTarget, 0, elements, MPI_DOUBLE, MPI_SUM, win),
              "MPI_Accumulate");
        check(MPI_Win_flush(kTarget, win), "MPI_Win_flush");
        ++b.ops;
        if (cap > 0 && MPI_Wtime() - start > cap) break;
      }
    } else {
      while (b.ops < count) {
        for (int w = 0; w < o.window; ++w)
          check(MPI_Accumulate(data, elements, MPI_DOUBLE, kTarget, 0, elements, MPI_DOUBLE, MPI_SUM, win),
                "MPI_Accumulate");
        check(MPI_Win_flush(kTarget, win), "MPI_Win_flush");
        ++b.ops;
        if (cap > 0 && MPI_Wtime() - start > cap) break;
      }
    }
    b.seconds = MPI_Wtime() - start;
    check(MPI_Win_unlock(kTarget, win), "MPI_Win_unlock");
    MPI_Ibarrier(MPI_COMM_WORLD, &done);
    MPI_Wait(&done, MPI_STATUS_IGNORE);
  } else if (s.rank == kTarget && busy > 0) {
    MPI_Ibarrier(MPI_COMM_WORLD, &done);
    int finished = 0;
    while (!finished) {
      compute_for(busy);
      MPI_Test(&done, &finished, MPI_STATUS_IGNORE);
    }
  } else {
    // Waiting inside MPI drives its progress engine, as OSU's target does in
    // MPI_Barrier.
    MPI_Ibarrier(MPI_COMM_WORLD, &done);
    MPI_Wait(&done, MPI_STATUS_IGNORE);
  }
  int ops = b.ops;
  MPI_Bcast(&ops, 1, MPI_INT, kOrigin, MPI_COMM_WORLD);
  if (s.rank == kTarget)
    verify(s, p, n, static_cast<std::int64_t>(ops) * (kind == Kind::latency ? 1 : o.window),
           kind == Kind::latency ? "latency" : "bandwidth");
  b.ops = ops;
  return b;
}

int batch_count(const Options& o, double estimate_seconds) {
  const double per_op = std::max(estimate_seconds, 1e-9);
  return static_cast<int>(std::clamp(o.batch_ms * 1e-3 / per_op, 1.0, static_cast<double>(o.iters)));
}

// The max over ranks, on rank 0 (only the origin times: that is its value).
std::vector<double> reduce_max(const std::vector<double>& values) {
  std::vector<double> out(values.size());
  MPI_Reduce(values.data(), out.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  return out;
}

struct Stat {
  double median = 0, min = 0, max = 0;
};

Stat stat_of(const std::vector<double>& v) {
  return {median(v), *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())};
}

// ---- latency and bandwidth ---------------------------------------------------

struct PathRow {
  Path path{};
  int lat_iters = 0, bw_windows = 0;
  Stat lat_us, bw_mbs;
  double lat_vs_native = 0, lat_vs_caller = 0;  // this path's time / theirs
  double bw_vs_native = 0, bw_vs_caller = 0;    // this path's MB/s / theirs
};

struct SizeRow {
  std::int64_t bytes = 0;
  std::vector<PathRow> paths;
};

int index_of(const Options& o, Path p) {
  const auto found = std::find(o.paths.begin(), o.paths.end(), p);
  return found == o.paths.end() ? -1 : static_cast<int>(found - o.paths.begin());
}

SizeRow measure(const Options& o, const Setup& s, std::int64_t bytes) {
  const std::int64_t n = bytes / 8;
  const std::size_t paths = o.paths.size();
  const auto rounds = static_cast<std::size_t>(o.rounds);
  std::vector<int> lat_count(paths), bw_count(paths);
  for (std::size_t k = 0; k < paths; ++k) {
    const Batch lat = run_batch(o, s, o.paths[k], Kind::latency, n, o.warmup, 0, 0);
    const Batch bw = run_batch(o, s, o.paths[k], Kind::bandwidth, n, 1, 0, 0);
    lat_count[k] = batch_count(o, lat.seconds / lat.ops);
    bw_count[k] = batch_count(o, bw.seconds / bw.ops);
  }
  // [path][round], seconds per operation (latency) and MB/s (bandwidth).
  std::vector<double> lat(paths * rounds, 0.0), bw(paths * rounds, 0.0);
  for (std::size_t round = 0; round < rounds; ++round) {
    for (std::size_t k = 0; k < paths; ++k) {
      const std::size_t i = (k + round) % paths;
      const Batch l = run_batch(o, s, o.paths[i], Kind::latency, n, lat_count[i], 0, 0);
      const Batch w = run_batch(o, s, o.paths[i], Kind::bandwidth, n, bw_count[i], 0, 0);
      if (s.rank == kOrigin) {
        lat[i * rounds + round] = l.seconds / l.ops * 1e6;
        bw[i * rounds + round] =
            static_cast<double>(w.ops) * o.window * static_cast<double>(bytes) / w.seconds * 1e-6;
      }
    }
  }
  lat = reduce_max(lat);
  bw = reduce_max(bw);
  SizeRow row;
  row.bytes = bytes;
  if (s.rank != 0) return row;
  auto slice = [&](const std::vector<double>& v, std::size_t k) {
    return std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(k * rounds),
                               v.begin() + static_cast<std::ptrdiff_t>((k + 1) * rounds));
  };
  const int native = index_of(o, abench::native);
  const int caller = index_of(o, abench::caller);
  for (std::size_t k = 0; k < paths; ++k) {
    PathRow r;
    r.path = o.paths[k];
    r.lat_iters = lat_count[k];
    r.bw_windows = bw_count[k];
    r.lat_us = stat_of(slice(lat, k));
    r.bw_mbs = stat_of(slice(bw, k));
    if (native >= 0) {
      r.lat_vs_native = abench::paired_ratio(slice(lat, k), slice(lat, static_cast<std::size_t>(native)));
      r.bw_vs_native = abench::paired_ratio(slice(bw, k), slice(bw, static_cast<std::size_t>(native)));
    }
    if (caller >= 0) {
      r.lat_vs_caller = abench::paired_ratio(slice(lat, k), slice(lat, static_cast<std::size_t>(caller)));
      r.bw_vs_caller = abench::paired_ratio(slice(bw, k), slice(bw, static_cast<std::size_t>(caller)));
    }
    row.paths.push_back(r);
  }
  return row;
}

// Seconds as given: "0.005", "2", "0.25".
std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

std::string ratio_text(double ratio) {
  if (ratio <= 0) return "";
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", ratio);
  return text;
}

constexpr const char* kCsvColumns =
    "bytes,path,lat_iters,latency_us,lat_min_us,lat_max_us,lat_vs_native,lat_vs_caller,bw_windows,window,"
    "bandwidth_mbs,bw_min_mbs,bw_max_mbs,bw_vs_native,bw_vs_caller\n";

void print_csv(const Options& o, const SizeRow& row) {
  for (const PathRow& r : row.paths) {
    std::printf("%" PRId64 ",%s,%d,%.4f,%.4f,%.4f,%s,%s,%d,%d,%.3f,%.3f,%.3f,%s,%s\n", row.bytes, kPathNames[r.path],
                r.lat_iters, r.lat_us.median, r.lat_us.min, r.lat_us.max, ratio_text(r.lat_vs_native).c_str(),
                ratio_text(r.lat_vs_caller).c_str(), r.bw_windows, o.window, r.bw_mbs.median, r.bw_mbs.min,
                r.bw_mbs.max, ratio_text(r.bw_vs_native).c_str(), ratio_text(r.bw_vs_caller).c_str());
  }
  std::fflush(stdout);
}

// The ratio columns: every path against native, and owner against caller.
struct RatioColumn {
  int path_index;
  bool vs_caller;
  std::string title;
};

std::vector<RatioColumn> ratio_columns(const Options& o) {
  std::vector<RatioColumn> columns;
  for (std::size_t k = 0; k < o.paths.size(); ++k) {
    if (o.paths[k] != abench::native && index_of(o, abench::native) >= 0)
      columns.push_back({static_cast<int>(k), false, std::string(kPathNames[o.paths[k]]) + "/native"});
  }
  const int owner = index_of(o, abench::owner);
  if (owner >= 0 && index_of(o, abench::caller) >= 0) columns.push_back({owner, true, "owner/caller"});
  return columns;
}

void print_tables(const Options& o, const std::vector<SizeRow>& rows) {
  const auto columns = ratio_columns(o);
  std::printf("\nLatency, us per MPI_Accumulate + MPI_Win_flush (median over %d rounds of the max over ranks); "
              "x/y = median of same-round time ratios (< 1: x is faster)\n",
              o.rounds);
  std::printf("%9s", "size");
  for (const Path p : o.paths) std::printf(" %6s %9s", "iters", kPathNames[p]);
  for (const auto& c : columns) std::printf(" %13s", c.title.c_str());
  std::printf("\n");
  for (const SizeRow& row : rows) {
    std::printf("%9s", format_bytes(row.bytes).c_str());
    for (const PathRow& r : row.paths) std::printf(" %6d %9s", r.lat_iters, mbench::format_us(r.lat_us.median).c_str());
    for (const auto& c : columns) {
      const PathRow& r = row.paths[static_cast<std::size_t>(c.path_index)];
      std::printf(" %13.3f", c.vs_caller ? r.lat_vs_caller : r.lat_vs_native);
    }
    std::printf("\n");
  }
  std::printf("\nBandwidth, MB/s (1e6 bytes/s) with %d accumulates per flush (median over %d rounds); x/y = median "
              "of same-round bandwidth ratios (> 1: x moves more)\n",
              o.window, o.rounds);
  std::printf("%9s", "size");
  for (const Path p : o.paths) std::printf(" %7s %9s", "windows", kPathNames[p]);
  for (const auto& c : columns) std::printf(" %13s", c.title.c_str());
  std::printf("\n");
  for (const SizeRow& row : rows) {
    std::printf("%9s", format_bytes(row.bytes).c_str());
    for (const PathRow& r : row.paths)
      std::printf(" %7d %9s", r.bw_windows, mbench::format_rate(r.bw_mbs.median).c_str());
    for (const auto& c : columns) {
      const PathRow& r = row.paths[static_cast<std::size_t>(c.path_index)];
      std::printf(" %13.3f", c.vs_caller ? r.bw_vs_caller : r.bw_vs_native);
    }
    std::printf("\n");
  }
  std::fflush(stdout);
}

// ---- busy target ------------------------------------------------------------

struct BusyRow {
  std::int64_t bytes = 0;
  Path path{};
  int iters = 0;        // per idle batch; busy batches stop at this or at the cap
  Stat idle_us, busy_us;
  double busy_ops = 0;  // median accumulates per busy batch
  double busy_over_idle = 0;
};

std::vector<BusyRow> measure_busy(const Options& o, const Setup& s, std::int64_t bytes) {
  const std::int64_t n = bytes / 8;
  const std::size_t paths = o.paths.size();
  const auto rounds = static_cast<std::size_t>(o.rounds);
  std::vector<int> count(paths);
  for (std::size_t k = 0; k < paths; ++k) {
    const Batch warm = run_batch(o, s, o.paths[k], Kind::latency, n, o.warmup, 0, 0);
    count[k] = batch_count(o, warm.seconds / warm.ops);
  }
  std::vector<double> idle(paths * rounds, 0.0), busy(paths * rounds, 0.0), ops(paths * rounds, 0.0);
  for (std::size_t round = 0; round < rounds; ++round) {
    for (std::size_t k = 0; k < paths; ++k) {
      const std::size_t i = (k + round) % paths;
      // Alternate which of the two goes first.
      for (int j = 0; j < 2; ++j) {
        const bool is_busy = (j + static_cast<int>(round)) % 2 == 1;
        const Batch b = run_batch(o, s, o.paths[i], Kind::latency, n, count[i], is_busy ? o.busy_cap : 0,
                                  is_busy ? o.busy : 0);
        if (s.rank != kOrigin) continue;
        (is_busy ? busy : idle)[i * rounds + round] = b.seconds / b.ops * 1e6;
        if (is_busy) ops[i * rounds + round] = b.ops;
      }
    }
  }
  idle = reduce_max(idle);
  busy = reduce_max(busy);
  ops = reduce_max(ops);
  std::vector<BusyRow> rows;
  if (s.rank != 0) return rows;
  auto slice = [&](const std::vector<double>& v, std::size_t k) {
    return std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(k * rounds),
                               v.begin() + static_cast<std::ptrdiff_t>((k + 1) * rounds));
  };
  for (std::size_t k = 0; k < paths; ++k) {
    BusyRow r;
    r.bytes = bytes;
    r.path = o.paths[k];
    r.iters = count[k];
    r.idle_us = stat_of(slice(idle, k));
    r.busy_us = stat_of(slice(busy, k));
    r.busy_ops = median(slice(ops, k));
    r.busy_over_idle = abench::paired_ratio(slice(busy, k), slice(idle, k));
    rows.push_back(r);
  }
  return rows;
}

constexpr const char* kBusyCsvColumns =
    "bytes,path,idle_iters,idle_us,idle_min_us,idle_max_us,busy_ops,busy_us,busy_min_us,busy_max_us,busy_over_idle\n";

void print_busy_csv(const std::vector<BusyRow>& rows) {
  for (const BusyRow& r : rows) {
    std::printf("%" PRId64 ",%s,%d,%.4f,%.4f,%.4f,%.1f,%.4f,%.4f,%.4f,%.3f\n", r.bytes, kPathNames[r.path], r.iters,
                r.idle_us.median, r.idle_us.min, r.idle_us.max, r.busy_ops, r.busy_us.median, r.busy_us.min,
                r.busy_us.max, r.busy_over_idle);
  }
  std::fflush(stdout);
}

void print_busy_table(const Options& o, const std::vector<BusyRow>& rows) {
  std::printf("\nOrigin latency, us per MPI_Accumulate + MPI_Win_flush, target waiting in MPI (idle) vs computing "
              "%s s stretches without MPI (busy); median over %d rounds; busy/idle = median of same-round ratios\n",
              seconds_text(o.busy).c_str(), o.rounds);
  std::printf("%9s %7s %7s %10s %9s %10s %10s\n", "size", "path", "iters", "idle", "busy ops", "busy", "busy/idle");
  for (const BusyRow& r : rows) {
    std::printf("%9s %7s %7d %10s %9s %10s %10.2f\n", format_bytes(r.bytes).c_str(), kPathNames[r.path], r.iters,
                mbench::format_us(r.idle_us.median).c_str(), bench::format_number(r.busy_ops).c_str(),
                mbench::format_us(r.busy_us.median).c_str(), r.busy_over_idle);
  }
  std::fflush(stdout);
}

// ---- server idle ------------------------------------------------------------

struct ThreadTime {
  std::string name;
  std::int64_t ticks = 0;  // utime + stime, in clock ticks
  std::int64_t ns = -1;    // schedstat's time on a CPU; -1: unavailable
};

std::map<int, ThreadTime> read_threads() {
  std::map<int, ThreadTime> threads;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return threads;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const int tid = std::atoi(entry->d_name);
    const std::string root = std::string("/proc/self/task/") + entry->d_name;
    std::ifstream stat(root + "/stat");
    std::string line;
    if (!std::getline(stat, line)) continue;  // the thread ended meanwhile
    const std::size_t open = line.find('('), close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    ThreadTime t;
    t.name = line.substr(open + 1, close - open - 1);
    for (char& c : t.name)
      if (c == ',' || c == ' ' || c == ';') c = '_';
    // Fields after the name start at field 3 (state); utime is field 14,
    // stime 15.
    std::istringstream fields(line.substr(close + 2));
    std::string field;
    for (int f = 3; f <= 15 && fields >> field; ++f) {
      if (f == 14 || f == 15) t.ticks += std::atoll(field.c_str());
    }
    std::ifstream schedstat(root + "/schedstat");
    long long ns = 0;
    if (schedstat >> ns) t.ns = ns;
    threads[tid] = t;
  }
  closedir(dir);
  return threads;
}

struct IdleSample {
  double seconds = 0;
  double main_pct = 0, others_pct = 0, others_exact_pct = -1;
  std::string threads;  // "name[tid]=pct ..." of the other threads
};

// Collective: every rank sleeps `seconds` between two readings.
IdleSample sample_idle(double seconds) {
  MPI_Barrier(MPI_COMM_WORLD);
  const auto before = read_threads();
  timespec start{}, end{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  timespec sleep{static_cast<time_t>(seconds), static_cast<long>((seconds - std::floor(seconds)) * 1e9)};
  while (nanosleep(&sleep, &sleep) != 0) {
  }
  clock_gettime(CLOCK_MONOTONIC, &end);
  const auto after = read_threads();
  MPI_Barrier(MPI_COMM_WORLD);

  IdleSample sample;
  sample.seconds = static_cast<double>(end.tv_sec - start.tv_sec) + static_cast<double>(end.tv_nsec - start.tv_nsec) * 1e-9;
  const double tick = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  const int main_tid = static_cast<int>(getpid());
  bool exact = true;
  double exact_sum = 0;
  for (const auto& [tid, t] : after) {
    const auto old = before.find(tid);
    const std::int64_t ticks = t.ticks - (old == before.end() ? 0 : old->second.ticks);
    const double pct = static_cast<double>(ticks) * tick / sample.seconds * 100;
    double exact_pct = -1;
    if (t.ns >= 0 && (old == before.end() || old->second.ns >= 0)) {
      exact_pct = static_cast<double>(t.ns - (old == before.end() ? 0 : old->second.ns)) * 1e-9 / sample.seconds * 100;
    } else {
      exact = false;
    }
    if (tid == main_tid) {
      sample.main_pct = exact_pct >= 0 ? exact_pct : pct;
      continue;
    }
    sample.others_pct += pct;
    exact_sum += std::max(exact_pct, 0.0);
    char text[160];
    std::snprintf(text, sizeof text, "%s%s[%d]=%.2f%%", sample.threads.empty() ? "" : " ", t.name.c_str(), tid,
                  exact_pct >= 0 ? exact_pct : pct);
    sample.threads += text;
  }
  if (exact) sample.others_exact_pct = exact_sum;
  if (sample.threads.empty()) sample.threads = "(none)";
  return sample;
}

// Rank 0 prints every rank's sample of one phase.
void report_idle(const Options& o, const char* phase, const IdleSample& mine, std::vector<double>& others_max) {
  constexpr std::size_t kText = 1024;
  std::array<char, kText> text{};
  char exact[32] = "";
  if (mine.others_exact_pct >= 0) std::snprintf(exact, sizeof exact, "%.3f", mine.others_exact_pct);
  char line[kText];
  std::snprintf(line, sizeof line, "%s,%d,%s,%.3f,%.3f,%.3f,%s,%s", phase, 0, bench::host_name().c_str(), mine.seconds,
                mine.main_pct, mine.others_pct, exact, mine.threads.c_str());
  std::string row = line;
  row.copy(text.data(), kText - 1);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<char> all(rank == 0 ? kText * static_cast<std::size_t>(size) : 1);
  MPI_Gather(text.data(), kText, MPI_CHAR, all.data(), kText, MPI_CHAR, 0, MPI_COMM_WORLD);
  const double exact_or_ticks = mine.others_exact_pct >= 0 ? mine.others_exact_pct : mine.others_pct;
  double max_pct = 0;
  MPI_Reduce(&exact_or_ticks, &max_pct, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank != 0) return;
  others_max.push_back(max_pct);
  for (int r = 0; r < size; ++r) {
    std::string entry(&all[static_cast<std::size_t>(r) * kText]);
    // The rank field was written as 0 by everybody: put the real one in.
    const std::size_t first = entry.find(',');
    const std::size_t second = entry.find(',', first + 1);
    entry = entry.substr(0, first + 1) + std::to_string(r) + entry.substr(second);
    if (o.csv) {
      std::printf("%s\n", entry.c_str());
    } else {
      std::vector<std::string> f;
      std::size_t at = 0;
      for (int k = 0; k < 7; ++k) {
        const std::size_t comma = entry.find(',', at);
        f.push_back(entry.substr(at, comma - at));
        at = comma + 1;
      }
      f.push_back(entry.substr(at));
      std::printf("%-10s rank %2s %-12s %7s s  main thread %6s%%  other threads %6s%% (stat ticks) %8s%% "
                  "(schedstat)  %s\n",
                  f[0].c_str(), f[1].c_str(), f[2].c_str(), f[3].c_str(), f[4].c_str(), f[5].c_str(),
                  f[6].empty() ? "-" : f[6].c_str(), f[7].c_str());
    }
  }
  std::fflush(stdout);
}

// Some accumulates of every path in both directions' worth of sizes, so any
// server thread has started, served and gone idle again.
void traffic(const Options& o, const Setup& s) {
  for (const Path p : o.paths) {
    run_batch(o, s, p, Kind::latency, 1, 10, 0, 0);
    run_batch(o, s, p, Kind::bandwidth, std::min<std::int64_t>(8192, s.window_elements), 2, 0, 0);
  }
}

void print_header(const Options& o, const abench::Machine& machine, const Setup& s, const char* what) {
  mbench::print_line(o.csv, std::string("acc_latency: ") + what);
  abench::print_machine(machine, o.csv);
  std::string reported;
  for (const Path p : o.paths)
    reported += std::string(reported.empty() ? "" : ", ") + kPathNames[p] + " -> " + abench::reported_path(s.windows[p]);
  if (s.windows[o.paths.front()] != MPI_WIN_NULL)
    mbench::print_line(o.csv, "windows (MPI_Win_allocate, " + format_bytes(s.window_elements * 8) +
                                  " per rank, info shim_accumulate -> what MPI_Win_get_info reports): " + reported);
}

}  // namespace

int main(int argc, char** argv) {
  bench::set_program_name("acc_latency");
  MPI_Init(&argc, &argv);
  Options o;
  if (const auto status = mbench::parse_or_exit("acc_latency", kUsage, argc, argv, o, parse)) return *status;
  Setup s;
  MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &s.size);
  if (s.size < 2) {
    if (s.rank == 0) std::fprintf(stderr, "acc_latency: needs 2 ranks (rank 0 the origin, rank 1 the target)\n");
    MPI_Finalize();
    return 2;
  }
  s.windows.fill(MPI_WIN_NULL);
  const abench::Machine machine = abench::describe_machine();
  const std::int64_t max_bytes = o.server_idle > 0 ? 65536 : o.sizes.back();
  s.window_elements = max_bytes / 8;
  s.buffer = bench::page_aligned(static_cast<std::size_t>(max_bytes));
  for (std::int64_t i = 0; i < s.window_elements; ++i)
    reinterpret_cast<double*>(s.buffer.get())[i] = value_of(i);

  auto allocate = [&] {
    for (const Path p : o.paths) {
      void* base = nullptr;
      s.windows[p] = abench::allocate_window(p, static_cast<MPI_Aint>(max_bytes), sizeof(double), MPI_COMM_WORLD, &base);
      s.base[p] = static_cast<double*>(base);
    }
  };

  if (o.server_idle > 0) {
    // Before any window: the MPI library's own threads.
    const IdleSample before = sample_idle(o.server_idle);
    allocate();
    traffic(o, s);
    const IdleSample with = sample_idle(o.server_idle);
    if (s.rank == 0) {
      char what[512];
      std::snprintf(what, sizeof what,
                    "CPU time of threads other than the main one while every rank sleeps %s s in nanosleep (no MPI "
                    "call): phase no-windows before any window exists (threads started at MPI_Init, such as a shim "
                    "server, run in both phases: compare with SHIM_SERVER=0 for MPI's own); phase windows with the "
                    "%s windows allocated and a few accumulates done on each",
                    seconds_text(o.server_idle).c_str(), abench::join_paths(o.paths).c_str());
      print_header(o, machine, s, what);
      mbench::print_line(o.csv, "method: utime + stime from /proc/self/task/*/stat (ticks of 1/" +
                                    std::to_string(sysconf(_SC_CLK_TCK)) +
                                    " s) and the first field of schedstat (ns on a CPU) before and after the sleep; "
                                    "percent of one core = CPU time / wall time; main thread shown apart");
      if (o.csv) std::printf("phase,rank,host,seconds,main_thread_pct,other_threads_pct,other_threads_exact_pct,threads\n");
    }
    std::vector<double> others_max;
    report_idle(o, "no-windows", before, others_max);
    report_idle(o, "windows", with, others_max);
    if (s.rank == 0) {
      char text[256];
      std::snprintf(text, sizeof text,
                    "summary: threads other than main, max over ranks: %.2f%% of one core without windows, %.2f%% "
                    "with them (%+.2f points)",
                    others_max[0], others_max[1], others_max[1] - others_max[0]);
      mbench::print_line(o.csv, text);
    }
  } else {
    allocate();
    if (s.rank == 0) {
      std::string what =
          o.busy > 0 ? "origin latency of MPI_Accumulate (MPI_DOUBLE, MPI_SUM) + MPI_Win_flush while the target "
                       "computes " + seconds_text(o.busy) + " s stretches without MPI calls (busy; one "
                       "MPI_Test between stretches; batches stop after " + seconds_text(o.busy_cap) +
                       " s) against the target waiting in MPI_Wait (idle)"
                     : "MPI_Accumulate (MPI_DOUBLE, MPI_SUM) latency (+ MPI_Win_flush each) and bandwidth (" +
                       std::to_string(o.window) + " per MPI_Win_flush), rank 0 -> rank 1, passive target, one "
                       "window per path, paths alternating in one run";
      print_header(o, machine, s, what.c_str());
      mbench::print_line(o.csv, "method: per size " + std::to_string(o.warmup) +
                                    " warm-up accumulates per path size the batches (~" + std::to_string(o.batch_ms) +
                                    " ms, at most " + std::to_string(o.iters) + "), then " + std::to_string(o.rounds) +
                                    " rounds of one batch per path (rotating order, MPI_Barrier before each); median "
                                    "over rounds of the max over ranks; the target checks its window after every "
                                    "batch");
      if (o.csv) std::fputs(o.busy > 0 ? kBusyCsvColumns : kCsvColumns, stdout);
      std::fflush(stdout);
    }
    if (o.busy > 0) {
      std::vector<BusyRow> all;
      for (const std::int64_t bytes : o.sizes) {
        const auto rows = measure_busy(o, s, bytes);
        if (s.rank == 0 && o.csv) print_busy_csv(rows);
        all.insert(all.end(), rows.begin(), rows.end());
      }
      if (s.rank == 0 && !o.csv) print_busy_table(o, all);
    } else {
      std::vector<SizeRow> rows;
      for (const std::int64_t bytes : o.sizes) {
        rows.push_back(measure(o, s, bytes));
        if (s.rank == 0 && o.csv) print_csv(o, rows.back());
      }
      if (s.rank == 0 && !o.csv) print_tables(o, rows);
    }
    if (s.rank == 0)
      mbench::print_line(o.csv, "verified: after every batch the target's window held (accumulates) x (1 + i % 7) "
                                "in every element i of the range and 0 past it");
  }
  for (MPI_Win& w : s.windows)
    if (w != MPI_WIN_NULL) MPI_Win_free(&w);
  MPI_Finalize();
  return 0;
}
