// fock_build: a Fock-build-like kernel on a distributed N x N matrix of
// doubles, with one window per accumulate path (the info key
// shim_accumulate of MPI_Win_allocate), builds alternating between the paths
// in one run. `--help` lists the flags.
//
// The matrix F is distributed in block rows (rank r holds rows
// [r N / P, (r + 1) N / P)), each rank's rows in its window. The basis
// [0, N) is cut into "shells" of --min-tile..--max-tile functions (random,
// fixed seed). A build runs --tasks shell pairs (A, B), A <= B, drawn from
// the same seed on every rank and dealt round-robin; a task computes the
// "integrals" of the tile F[A, B] (a few divisions per element, --work) and
// accumulates the tile into F[A, B] and its transpose into F[B, A] with
// MPI_Accumulate(MPI_SUM): a contiguous origin buffer, a target
// MPI_Type_vector (tile rows of the tile's width, stride N) at the tile's
// place in the owner's rows; a tile spanning two owners goes as one
// accumulate per owner. Tiles are 8 x 8 .. 32 x 32 doubles (512 B .. 8 KiB)
// by default.
//
// Each build: every rank zeroes its rows, MPI_Barrier, then times
// MPI_Win_lock_all, its tasks with MPI_Win_flush of every touched target
// every --flush-every tasks (origin buffers are reused after a flush), and
// MPI_Win_unlock_all. time per build = max over ranks; x/native = median of
// same-round ratios. After every build each rank compares its rows with a
// reference computed locally from all ranks' tasks: integrals are rounded to
// multiples of 2^-10, so every summation order gives the same bits and the
// check is exact equality; a difference aborts the job.
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <utility>
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
    "usage: fock_build [options]\n"
    "  --n N              matrix order; default 1024\n"
    "  --tasks T          shell pairs per build (all ranks together); default 4000\n"
    "  --min-tile K       smallest shell, in basis functions; default 8\n"
    "  --max-tile K       largest shell; default 32 (tiles of 8x8..32x32 doubles: 512 B..8 KiB)\n"
    "  --work W           divisions per integral (compute per element); default 16\n"
    "  --flush-every F    tasks between flushes of the touched targets; default 32\n"
    "  --builds R         timed builds per path, alternating; default 5 (plus one untimed build per path first)\n"
    "  --paths LIST       from native,caller,owner,auto (the shim_accumulate values); default native,owner\n"
    "  --seed S           the shells and the tasks; default 1\n"
    "  --csv              CSV rows instead of a table; '#' lines are comments\n"
    "  --help             print this and exit\n";

struct Options {
  int n = 1024;
  int tasks = 4000;
  int min_tile = 8;
  int max_tile = 32;
  int work = 16;
  int flush_every = 32;
  int builds = 5;
  std::vector<Path> paths;
  std::uint64_t seed = 1;
  bool csv = false;
};

Options parse(int argc, char** argv, bool& help) {
  const mbench::Args args(argc, argv,
                          {"--n", "--tasks", "--min-tile", "--max-tile", "--work", "--flush-every", "--builds",
                           "--paths", "--seed"},
                          {"--csv"});
  help = args.flag("--help");
  Options o;
  o.n = args.count("--n", o.n, 1);
  o.tasks = args.count("--tasks", o.tasks, 1);
  o.min_tile = args.count("--min-tile", o.min_tile, 1);
  o.max_tile = args.count("--max-tile", o.max_tile, 1);
  o.work = args.count("--work", o.work, 1);
  o.flush_every = args.count("--flush-every", o.flush_every, 1);
  o.builds = args.count("--builds", o.builds, 1);
  o.seed = static_cast<std::uint64_t>(args.count("--seed", 1, 0));
  o.paths = abench::parse_paths("--paths", args.value("--paths").value_or("native,owner"));
  o.csv = args.flag("--csv");
  if (o.min_tile > o.max_tile) throw UsageError("--min-tile is larger than --max-tile");
  if (o.max_tile > o.n) throw UsageError("--max-tile is larger than --n");
  if (static_cast<double>(o.n) * o.n > 2e9) throw UsageError("--n: at most 44721 (element offsets are ints)");
  // Every element is a sum of at most 2 x tasks integrals of at most `work`,
  // multiples of 2^-10: exact in a double below 2^53.
  if (2.0 * o.tasks * o.work * 1024 >= 9e15) throw UsageError("--tasks x --work too large for exact sums");
  return o;
}

struct Task {
  int a = 0, b = 0;  // shells, a <= b
};

struct Problem {
  int ranks = 0, rank = 0;
  std::vector<int> shell_first;  // shells + 1 entries: shell s is [first[s], first[s + 1])
  std::vector<Task> tasks;       // all ranks' tasks; this rank runs t % ranks == rank
  std::vector<int> row_first;    // ranks + 1 entries
  int my_rows() const { return row_first[static_cast<std::size_t>(rank) + 1] - row_first[static_cast<std::size_t>(rank)]; }
  int shell_size(int s) const {
    return shell_first[static_cast<std::size_t>(s) + 1] - shell_first[static_cast<std::size_t>(s)];
  }
};

Problem make_problem(const Options& o, int rank, int ranks) {
  Problem p;
  p.rank = rank;
  p.ranks = ranks;
  mbench::Rng rng(o.seed);
  p.shell_first.push_back(0);
  while (p.shell_first.back() < o.n) {
    const int size = static_cast<int>(rng.between(o.min_tile, o.max_tile));
    p.shell_first.push_back(std::min(o.n, p.shell_first.back() + size));
  }
  const int shells = static_cast<int>(p.shell_first.size()) - 1;
  for (int t = 0; t < o.tasks; ++t) {
    int a = static_cast<int>(rng.between(0, shells - 1));
    int b = static_cast<int>(rng.between(0, shells - 1));
    if (a > b) std::swap(a, b);
    p.tasks.push_back({a, b});
  }
  for (int r = 0; r <= ranks; ++r)
    p.row_first.push_back(static_cast<int>(static_cast<std::int64_t>(o.n) * r / ranks));
  return p;
}

// The "integral" of basis functions i and j in task t: symmetric in i and j,
// a multiple of 2^-10 in [0, work].
double integral(int t, int i, int j, int work) {
  const int lo = std::min(i, j), hi = std::max(i, j);
  const double x = 0.05 + static_cast<double>((static_cast<std::int64_t>(lo) * 131 + hi * 71 + t * 17) % 1009) * 1e-3;
  double s = 0;
  for (int k = 1; k <= work; ++k) s += 1.0 / (1.0 + x * k);
  return std::round(s * 1024) / 1024;
}

// The contributions of every task to this rank's rows.
std::vector<double> reference(const Options& o, const Problem& p) {
  const int first = p.row_first[static_cast<std::size_t>(p.rank)];
  const int last = first + p.my_rows();
  std::vector<double> ref(static_cast<std::size_t>(p.my_rows()) * static_cast<std::size_t>(o.n), 0.0);
  auto add_tile = [&](int t, int rows_shell, int cols_shell) {
    const int r0 = p.shell_first[static_cast<std::size_t>(rows_shell)];
    const int r1 = r0 + p.shell_size(rows_shell);
    const int c0 = p.shell_first[static_cast<std::size_t>(cols_shell)];
    const int c1 = c0 + p.shell_size(cols_shell);
    for (int i = std::max(r0, first); i < std::min(r1, last); ++i)
      for (int j = c0; j < c1; ++j)
        ref[static_cast<std::size_t>(i - first) * static_cast<std::size_t>(o.n) + static_cast<std::size_t>(j)] +=
            integral(t, i, j, o.work);
  };
  for (int t = 0; t < static_cast<int>(p.tasks.size()); ++t) {
    const Task& task = p.tasks[static_cast<std::size_t>(t)];
    add_tile(t, task.a, task.b);
    if (task.a != task.b) add_tile(t, task.b, task.a);
  }
  return ref;
}

// Target types: `rows` rows of `width` doubles, stride N. Created on first
// use, freed at the end.
class TileTypes {
 public:
  explicit TileTypes(int n) : n_(n) {}
  ~TileTypes() { free_all(); }
  // Before MPI_Finalize.
  void free_all() {
    for (auto& entry : types_) MPI_Type_free(&entry.second);
    types_.clear();
  }
  TileTypes(const TileTypes&) = delete;
  TileTypes& operator=(const TileTypes&) = delete;
  MPI_Datatype get(int rows, int width) {
    const auto found = types_.find({rows, width});
    if (found != types_.end()) return found->second;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    check(MPI_Type_vector(rows, width, n_, MPI_DOUBLE, &type), "MPI_Type_vector");
    check(MPI_Type_commit(&type), "MPI_Type_commit");
    types_.emplace(std::make_pair(rows, width), type);
    return type;
  }
  std::size_t count() const { return types_.size(); }

 private:
  int n_;
  std::map<std::pair<int, int>, MPI_Datatype> types_;
};

struct Counts {
  std::int64_t accumulates = 0, self_accumulates = 0, bytes = 0;
  std::int64_t min_bytes = INT64_MAX, max_bytes = 0;
};

struct Build {
  double seconds = 0;          // lock_all .. unlock_all
  double compute_seconds = 0;  // the integrals alone
  Counts counts;
};

// Accumulates the h x w tile at (r0, c0), contiguous in `data`, one
// MPI_Accumulate per owner of its rows.
void accumulate_tile(const Options& o, const Problem& p, MPI_Win win, TileTypes& types, mbench::Targets& targets,
                     const double* data, int r0, int h, int c0, int w, Counts& counts) {
  int row = r0;
  while (row < r0 + h) {
    const auto owner_it = std::upper_bound(p.row_first.begin(), p.row_first.end(), row) - 1;
    const int owner = static_cast<int>(owner_it - p.row_first.begin());
    const int end = std::min(r0 + h, *(owner_it + 1));
    const int rows = end - row;
    const MPI_Aint displacement = static_cast<MPI_Aint>(row - *owner_it) * o.n + c0;
    check(MPI_Accumulate(data + static_cast<std::ptrdiff_t>(row - r0) * w, rows * w, MPI_DOUBLE, owner, displacement,
                         1, types.get(rows, w), MPI_SUM, win),
          "MPI_Accumulate");
    targets.add(owner);
    const std::int64_t bytes = static_cast<std::int64_t>(rows) * w * 8;
    ++counts.accumulates;
    counts.self_accumulates += owner == p.rank ? 1 : 0;
    counts.bytes += bytes;
    counts.min_bytes = std::min(counts.min_bytes, bytes);
    counts.max_bytes = std::max(counts.max_bytes, bytes);
    row = end;
  }
}

Build run_build(const Options& o, const Problem& p, MPI_Win win, double* mine, TileTypes& types,
                std::vector<double>& pool) {
  // Zero this rank's rows; nobody starts before everybody has.
  check(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, p.rank, 0, win), "MPI_Win_lock");
  std::memset(mine, 0, static_cast<std::size_t>(p.my_rows()) * static_cast<std::size_t>(o.n) * sizeof(double));
  check(MPI_Win_unlock(p.rank, win), "MPI_Win_unlock");
  MPI_Barrier(MPI_COMM_WORLD);

  Build b;
  mbench::Targets targets(p.ranks);
  const std::size_t tile_max = static_cast<std::size_t>(o.max_tile) * static_cast<std::size_t>(o.max_tile);
  const double start = MPI_Wtime();
  check(MPI_Win_lock_all(0, win), "MPI_Win_lock_all");
  int since_flush = 0;
  for (int t = p.rank; t < static_cast<int>(p.tasks.size()); t += p.ranks) {
    const Task& task = p.tasks[static_cast<std::size_t>(t)];
    const int r0 = p.shell_first[static_cast<std::size_t>(task.a)], h = p.shell_size(task.a);
    const int c0 = p.shell_first[static_cast<std::size_t>(task.b)], w = p.shell_size(task.b);
    // Two tiles per task in the pool; reused after the flush.
    double* tile = pool.data() + static_cast<std::size_t>(since_flush) * 2 * tile_max;
    double* transposed = tile + tile_max;
    const double compute_start = MPI_Wtime();
    for (int i = 0; i < h; ++i)
      for (int j = 0; j < w; ++j) {
        const double v = integral(t, r0 + i, c0 + j, o.work);
        tile[i * w + j] = v;
        transposed[j * h + i] = v;
      }
    b.compute_seconds += MPI_Wtime() - compute_start;
    accumulate_tile(o, p, win, types, targets, tile, r0, h, c0, w, b.counts);
    if (task.a != task.b) accumulate_tile(o, p, win, types, targets, transposed, c0, w, r0, h, b.counts);
    if (++since_flush == o.flush_every) {
      targets.flush(win);
      since_flush = 0;
    }
  }
  targets.flush(win);
  check(MPI_Win_unlock_all(win), "MPI_Win_unlock_all");
  b.seconds = MPI_Wtime() - start;
  MPI_Barrier(MPI_COMM_WORLD);
  return b;
}

// This rank's rows against the reference; aborts the job on a difference.
void verify(const Options& o, const Problem& p, MPI_Win win, const double* mine, const std::vector<double>& ref,
            Path path, const char* which) {
  check(MPI_Win_lock(MPI_LOCK_SHARED, p.rank, 0, win), "MPI_Win_lock");
  std::int64_t wrong = 0, first_wrong = -1;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (mine[i] == ref[i]) continue;
    if (wrong++ == 0) first_wrong = static_cast<std::int64_t>(i);
  }
  check(MPI_Win_unlock(p.rank, win), "MPI_Win_unlock");
  if (wrong == 0) return;
  const auto i = static_cast<std::size_t>(first_wrong);
  char text[512];
  std::snprintf(text, sizeof text,
                "WRONG RESULT after %s build on the '%s' window: rank %d holds %" PRId64 " wrong elements of %zu; "
                "first F[%" PRId64 "][%" PRId64 "] = %.17g, expected %.17g",
                which, kPathNames[path], p.rank, wrong, ref.size(),
                static_cast<std::int64_t>(p.row_first[static_cast<std::size_t>(p.rank)]) + first_wrong / o.n,
                first_wrong % o.n, mine[i], ref[i]);
  fail(text);
}

std::string ratio_text(double ratio, const char* none) {
  if (ratio <= 0) return none;
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", ratio);
  return text;
}

struct Row {
  Path path{};
  double median_ms = 0, min_ms = 0, max_ms = 0, compute_ms = 0, vs_native = 0;
};

}  // namespace

int main(int argc, char** argv) {
  bench::set_program_name("fock_build");
  MPI_Init(&argc, &argv);
  Options o;
  if (const auto status = mbench::parse_or_exit("fock_build", kUsage, argc, argv, o, parse)) return *status;
  int rank = 0, ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (ranks > o.n) {
    if (rank == 0) std::fprintf(stderr, "fock_build: more ranks (%d) than matrix rows (%d)\n", ranks, o.n);
    MPI_Finalize();
    return 2;
  }
  const abench::Machine machine = abench::describe_machine();
  const Problem p = make_problem(o, rank, ranks);
  const std::vector<double> ref = reference(o, p);

  std::array<MPI_Win, abench::kPaths> windows{};
  std::array<double*, abench::kPaths> base{};
  windows.fill(MPI_WIN_NULL);
  const MPI_Aint bytes = static_cast<MPI_Aint>(p.my_rows()) * o.n * static_cast<MPI_Aint>(sizeof(double));
  for (const Path path : o.paths) {
    void* mem = nullptr;
    windows[path] = abench::allocate_window(path, bytes, sizeof(double), MPI_COMM_WORLD, &mem);
    base[path] = static_cast<double*>(mem);
  }
  TileTypes types(o.n);
  std::vector<double> pool(static_cast<std::size_t>(o.flush_every) * 2 * static_cast<std::size_t>(o.max_tile) *
                           static_cast<std::size_t>(o.max_tile));

  // One untimed build per path: first-use costs, and a first check.
  Counts counts;
  for (const Path path : o.paths) {
    const Build b = run_build(o, p, windows[path], base[path], types, pool);
    verify(o, p, windows[path], base[path], ref, path, "the warm-up");
    counts = b.counts;
  }

  const std::size_t paths = o.paths.size();
  const auto rounds = static_cast<std::size_t>(o.builds);
  std::vector<double> seconds(paths * rounds), compute(paths * rounds);
  for (std::size_t round = 0; round < rounds; ++round) {
    for (std::size_t k = 0; k < paths; ++k) {
      const std::size_t i = (k + round) % paths;
      const Path path = o.paths[i];
      const Build b = run_build(o, p, windows[path], base[path], types, pool);
      verify(o, p, windows[path], base[path], ref, path, ("timed build " + std::to_string(round + 1)).c_str());
      seconds[i * rounds + round] = b.seconds;
      compute[i * rounds + round] = b.compute_seconds;
    }
  }
  seconds = mbench::max_over_ranks(seconds);
  compute = mbench::max_over_ranks(compute);

  // Accumulate statistics over all ranks.
  std::array<std::int64_t, 3> sums = {counts.accumulates, counts.self_accumulates, counts.bytes};
  MPI_Allreduce(MPI_IN_PLACE, sums.data(), 3, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  std::int64_t min_bytes = counts.min_bytes, max_bytes = counts.max_bytes, max_accumulates = counts.accumulates;
  MPI_Allreduce(MPI_IN_PLACE, &min_bytes, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &max_bytes, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &max_accumulates, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  std::size_t type_count = types.count();
  MPI_Allreduce(MPI_IN_PLACE, &type_count, 1, MPI_UNSIGNED_LONG, MPI_MAX, MPI_COMM_WORLD);

  if (rank == 0) {
    const int shells = static_cast<int>(p.shell_first.size()) - 1;
    mbench::print_line(o.csv, "fock_build: Fock-build-like accumulates of integral tiles into a distributed N x N "
                              "matrix (MPI_Win_allocate, block rows), MPI_Win_lock_all epoch per build, paths "
                              "alternating in one run");
    abench::print_machine(machine, o.csv);
    std::string reported;
    for (const Path path : o.paths)
      reported += std::string(reported.empty() ? "" : ", ") + kPathNames[path] + " -> " +
                  abench::reported_path(windows[path]);
    mbench::print_line(o.csv, "windows (info shim_accumulate -> what MPI_Win_get_info reports): " + reported);
    char text[1024];
    std::snprintf(text, sizeof text,
                  "problem: N %d (%s), %d..%d rows per rank; %d shells of %d..%d functions (seed %llu); %d tasks "
                  "(shell pairs, round-robin over ranks), %d divisions per integral; flush every %d tasks",
                  o.n, format_bytes(static_cast<std::int64_t>(o.n) * o.n * 8).c_str(), p.row_first[1] - p.row_first[0],
                  p.row_first[static_cast<std::size_t>(ranks)] - p.row_first[static_cast<std::size_t>(ranks) - 1],
                  shells, o.min_tile, o.max_tile, static_cast<unsigned long long>(o.seed), o.tasks, o.work,
                  o.flush_every);
    mbench::print_line(o.csv, text);
    std::snprintf(text, sizeof text,
                  "per build: %" PRId64 " MPI_Accumulate calls (%" PRId64 " into the caller's own rows; at most %" PRId64
                  " from one rank), %.2f MiB in all, %" PRId64 "..%" PRId64 " bytes each; %zu target vector types per rank at most",
                  sums[0], sums[1], max_accumulates, static_cast<double>(sums[2]) / (1 << 20), min_bytes, max_bytes,
                  type_count);
    mbench::print_line(o.csv, text);
    mbench::print_line(o.csv, "method: one untimed build per path, then " + std::to_string(o.builds) +
                                  " rounds of one build per path (rotating order); time = MPI_Win_lock_all .. "
                                  "MPI_Win_unlock_all, max over ranks, median over rounds; compute = the integrals "
                                  "alone (max over ranks); x/native = median of same-round ratios");

    const int native = [&] {
      const auto found = std::find(o.paths.begin(), o.paths.end(), abench::native);
      return found == o.paths.end() ? -1 : static_cast<int>(found - o.paths.begin());
    }();
    std::vector<Row> rows;
    for (std::size_t k = 0; k < paths; ++k) {
      auto slice = [&](const std::vector<double>& v, std::size_t j) {
        std::vector<double> out(v.begin() + static_cast<std::ptrdiff_t>(j * rounds),
                                v.begin() + static_cast<std::ptrdiff_t>((j + 1) * rounds));
        for (double& x : out) x *= 1e3;
        return out;
      };
      const auto ms = slice(seconds, k);
      Row r;
      r.path = o.paths[k];
      r.median_ms = median(ms);
      r.min_ms = *std::min_element(ms.begin(), ms.end());
      r.max_ms = *std::max_element(ms.begin(), ms.end());
      r.compute_ms = median(slice(compute, k));
      if (native >= 0) r.vs_native = abench::paired_ratio(ms, slice(seconds, static_cast<std::size_t>(native)));
      rows.push_back(r);
    }
    if (o.csv) {
      std::printf("path,builds,time_ms,min_ms,max_ms,compute_ms,vs_native,accumulates,bytes,verified\n");
      for (const Row& r : rows) {
        std::printf("%s,%d,%.3f,%.3f,%.3f,%.3f,%s,%" PRId64 ",%" PRId64 ",exact\n", kPathNames[r.path], o.builds,
                    r.median_ms, r.min_ms, r.max_ms, r.compute_ms,
                    ratio_text(r.vs_native, "").c_str(), sums[0], sums[2]);
      }
    } else {
      std::printf("\nms per build (max over ranks; median, min and max over %d builds)\n", o.builds);
      std::printf("%8s %10s %10s %10s %12s %10s\n", "path", "median", "min", "max", "compute", "x/native");
      for (const Row& r : rows) {
        std::printf("%8s %10.2f %10.2f %10.2f %12.2f %10s\n", kPathNames[r.path], r.median_ms, r.min_ms, r.max_ms,
                    r.compute_ms, ratio_text(r.vs_native, "-").c_str());
      }
    }
    mbench::print_line(o.csv, "verified: after every build (" + std::to_string(o.builds + 1) +
                                  " per path) every rank's rows equalled the locally computed reference exactly");
    std::fflush(stdout);
  }
  types.free_all();
  for (MPI_Win& w : windows)
    if (w != MPI_WIN_NULL) MPI_Win_free(&w);
  MPI_Finalize();
  return 0;
}
