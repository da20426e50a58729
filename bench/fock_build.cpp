// fock_build: does a Fock-build-like kernel, many small accumulates of
// integral tiles into a distributed N x N matrix of doubles, run faster on
// another accumulate path (the window info key shim_accumulate)? Builds
// alternate between the paths in one run.
//
// F is distributed in block rows (rank r holds rows [r N / P, (r + 1) N /
// P)) in its window. The basis [0, N) is cut into "shells" of --min-tile..
// --max-tile functions (random, fixed seed). A build runs --tasks shell
// pairs (A, B), A <= B, drawn from the same seed on every rank and dealt
// round-robin; a task computes the "integrals" of the tile F[A, B] (--work
// divisions per element) and accumulates the tile into F[A, B] and its
// transpose into F[B, A] with MPI_Accumulate(MPI_SUM): a contiguous origin
// buffer, a target MPI_Type_vector (tile rows, stride N), one accumulate per
// owner the tile spans. Each build: MPI_Win_lock_all, the tasks with
// MPI_Win_flush of every touched target every --flush-every tasks (origin
// buffers are reused after a flush), MPI_Win_unlock_all. After every build
// each rank compares its rows with a reference computed locally: integrals
// are multiples of 2^-10, so every summation order gives the same bits.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>

#include "acc_common.hpp"
#include "mirror_common.hpp"

namespace {

constexpr std::string_view kUsage = R"(
  --n N            matrix order; default 1024
  --tasks T        shell pairs per build (all ranks together); default 4000
  --min-tile K     smallest shell, in basis functions; default 8
  --max-tile K     largest shell; default 32 (tiles of 8x8..32x32 doubles: 512 B..8 KiB)
  --work W         divisions per integral (compute per element); default 16
  --flush-every F  tasks between flushes of the touched targets; default 32
  --builds R       timed builds per path, alternating (after one untimed build per path); default 5
  --paths LIST     from native,caller,owner,auto; default native,owner
  --seed S         the shells and the tasks; default 1
)";

struct Options {
  int n, tasks, min_tile, max_tile, work, flush_every;
};

struct Problem {
  std::vector<int> shell_first;            // shells + 1 entries: shell s is [first[s], first[s + 1])
  std::vector<std::pair<int, int>> tasks;  // all ranks' (a, b); this rank runs t % ranks == rank
  std::vector<int> row_first;              // ranks + 1 entries
  int first_row() const { return row_first[static_cast<std::size_t>(bench::rank())]; }
  int my_rows() const { return row_first[static_cast<std::size_t>(bench::rank()) + 1] - first_row(); }
  int shell_size(int s) const {
    return shell_first[static_cast<std::size_t>(s) + 1] - shell_first[static_cast<std::size_t>(s)];
  }
};

// The "integral" of basis functions i and j in task t: symmetric in i and j,
// a multiple of 2^-10 in [0, work].
double integral(int t, int i, int j, int work) {
  const int lo = std::min(i, j), hi = std::max(i, j);
  const double x = 0.05 + static_cast<double>((static_cast<std::int64_t>(lo) * 131 + hi * 71 + t * 17) % 1009) * 1e-3;
  double s = 0;
  for (int k = 1; k <= work; ++k) s += 1.0 / (1.0 + x * k);
  return std::round(s * 1024) / 1024;
}

struct Counts {
  std::int64_t accumulates = 0, self_accumulates = 0, bytes = 0, min_bytes = INT64_MAX, max_bytes = 0;
};

class Builder {
 public:
  Builder(const Options& o, const Problem& p)
      : o_(o), p_(p), pool_(static_cast<std::size_t>(o.flush_every * 2 * o.max_tile * o.max_tile)) {}
  ~Builder() {
    for (auto& entry : types_) MPI_Type_free(&entry.second);
  }
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;

  // Seconds of lock_all .. unlock_all, and of the integrals alone.
  std::vector<double> build(MPI_Win win, double* mine) {
    // Zero this rank's rows; nobody starts before everybody has.
    bench::check(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, bench::rank(), 0, win), "MPI_Win_lock");
    std::memset(mine, 0, static_cast<std::size_t>(p_.my_rows()) * static_cast<std::size_t>(o_.n) * sizeof(double));
    bench::check(MPI_Win_unlock(bench::rank(), win), "MPI_Win_unlock");
    MPI_Barrier(MPI_COMM_WORLD);
    counts = {};
    bench::Targets targets(bench::ranks());
    const std::size_t tile_max = static_cast<std::size_t>(o_.max_tile * o_.max_tile);
    double compute = 0;
    const double start = MPI_Wtime();
    bench::check(MPI_Win_lock_all(0, win), "MPI_Win_lock_all");
    int since_flush = 0;
    for (int t = bench::rank(); t < static_cast<int>(p_.tasks.size()); t += bench::ranks()) {
      const auto [a, b] = p_.tasks[static_cast<std::size_t>(t)];
      const int r0 = p_.shell_first[static_cast<std::size_t>(a)], h = p_.shell_size(a);
      const int c0 = p_.shell_first[static_cast<std::size_t>(b)], w = p_.shell_size(b);
      double* tile = pool_.data() + static_cast<std::size_t>(since_flush) * 2 * tile_max;
      double* transposed = tile + tile_max;
      const double compute_start = MPI_Wtime();
      for (int i = 0; i < h; ++i)
        for (int j = 0; j < w; ++j) tile[i * w + j] = transposed[j * h + i] = integral(t, r0 + i, c0 + j, o_.work);
      compute += MPI_Wtime() - compute_start;
      accumulate_tile(win, targets, tile, r0, h, c0, w);
      if (a != b) accumulate_tile(win, targets, transposed, c0, w, r0, h);
      if (++since_flush == o_.flush_every) {
        targets.flush(win);
        since_flush = 0;
      }
    }
    targets.flush(win);
    bench::check(MPI_Win_unlock_all(win), "MPI_Win_unlock_all");
    const double seconds = MPI_Wtime() - start;
    MPI_Barrier(MPI_COMM_WORLD);
    return {seconds, compute};
  }
  std::size_t type_count() const { return types_.size(); }
  Counts counts;

 private:
  // The h x w tile at (r0, c0), contiguous in `data`: one MPI_Accumulate
  // per owner of its rows, a vector type at the target.
  void accumulate_tile(MPI_Win win, bench::Targets& targets, const double* data, int r0, int h, int c0, int w) {
    for (int row = r0; row < r0 + h;) {
      const auto owner_it = std::upper_bound(p_.row_first.begin(), p_.row_first.end(), row) - 1;
      const int owner = static_cast<int>(owner_it - p_.row_first.begin());
      const int rows = std::min(r0 + h, *(owner_it + 1)) - row;
      auto type = types_.find({rows, w});
      if (type == types_.end()) {
        type = types_.emplace(std::make_pair(rows, w), MPI_DATATYPE_NULL).first;
        bench::check(MPI_Type_vector(rows, w, o_.n, MPI_DOUBLE, &type->second), "MPI_Type_vector");
        bench::check(MPI_Type_commit(&type->second), "MPI_Type_commit");
      }
      bench::check(MPI_Accumulate(data + static_cast<std::ptrdiff_t>(row - r0) * w, rows * w, MPI_DOUBLE, owner,
                                  static_cast<MPI_Aint>(row - *owner_it) * o_.n + c0, 1, type->second, MPI_SUM, win),
                   "MPI_Accumulate");
      targets.add(owner);
      const std::int64_t bytes = std::int64_t{rows} * w * 8;
      ++counts.accumulates;
      counts.self_accumulates += owner == bench::rank() ? 1 : 0;
      counts.bytes += bytes;
      counts.min_bytes = std::min(counts.min_bytes, bytes);
      counts.max_bytes = std::max(counts.max_bytes, bytes);
      row += rows;
    }
  }

  const Options& o_;
  const Problem& p_;
  std::vector<double> pool_;  // two tiles per task between flushes
  std::map<std::pair<int, int>, MPI_Datatype> types_;
};

void benchmark(const bench::Args& args) {
  const Options o{args.count("--n", 1024, 1),      args.count("--tasks", 4000, 1), args.count("--min-tile", 8, 1),
                  args.count("--max-tile", 32, 1), args.count("--work", 16, 1),    args.count("--flush-every", 32, 1)};
  const int builds = args.count("--builds", 5, 1), seed = args.count("--seed", 1, 0);
  const auto paths = args.choose("--paths", bench::kAccumulatePaths, "native,owner");
  if (o.min_tile > o.max_tile) throw bench::UsageError("--min-tile is larger than --max-tile");
  if (o.max_tile > o.n) throw bench::UsageError("--max-tile is larger than --n");
  if (static_cast<double>(o.n) * o.n > 2e9) throw bench::UsageError("--n: at most 44721 (element offsets are ints)");
  // Every element sums at most 2 x tasks integrals of at most `work`,
  // multiples of 2^-10: exact in a double below 2^53.
  if (2.0 * o.tasks * o.work * 1024 >= 9e15) throw bench::UsageError("--tasks x --work too large for exact sums");
  if (bench::ranks() > o.n) throw bench::UsageError("more ranks than matrix rows");

  Problem p;
  bench::Rng rng(static_cast<std::uint64_t>(seed));
  for (p.shell_first.push_back(0); p.shell_first.back() < o.n;)
    p.shell_first.push_back(
        std::min(o.n, p.shell_first.back() + static_cast<int>(rng.between(o.min_tile, o.max_tile))));
  const int shells = static_cast<int>(p.shell_first.size()) - 1;
  for (int t = 0; t < o.tasks; ++t) {
    const auto a = static_cast<int>(rng.between(0, shells - 1)), b = static_cast<int>(rng.between(0, shells - 1));
    p.tasks.emplace_back(std::min(a, b), std::max(a, b));
  }
  for (int r = 0; r <= bench::ranks(); ++r)
    p.row_first.push_back(static_cast<int>(std::int64_t{o.n} * r / bench::ranks()));
  // Every task's contributions to this rank's rows.
  std::vector<double> reference(static_cast<std::size_t>(p.my_rows()) * static_cast<std::size_t>(o.n), 0.0);
  auto add_tile = [&](int t, int rows_shell, int cols_shell) {
    const int r0 = p.shell_first[static_cast<std::size_t>(rows_shell)],
              c0 = p.shell_first[static_cast<std::size_t>(cols_shell)];
    for (int i = std::max(r0, p.first_row()); i < std::min(r0 + p.shell_size(rows_shell), p.first_row() + p.my_rows());
         ++i)
      for (int j = c0; j < c0 + p.shell_size(cols_shell); ++j)
        reference[static_cast<std::size_t>(i - p.first_row()) * static_cast<std::size_t>(o.n) +
                  static_cast<std::size_t>(j)] += integral(t, i, j, o.work);
  };
  for (int t = 0; t < o.tasks; ++t) {
    const auto [a, b] = p.tasks[static_cast<std::size_t>(t)];
    add_tile(t, a, b);
    if (a != b) add_tile(t, b, a);
  }

  const bench::Report report(
      args,
      "Fock-build-like accumulates of integral tiles into a distributed N x N matrix "
      "(MPI_Win_allocate, block rows), MPI_Win_lock_all epoch per build, paths alternating in one run");
  const bench::PathWindows windows(paths, std::int64_t{p.my_rows()} * o.n * 8);
  report.line("windows (info shim_accumulate -> the path shim took): " + windows.reported());
  Builder builder(o, p);
  auto build_and_check = [&](int path, const std::string& which) {
    const std::vector<double> t = builder.build(windows.window(path), windows.base(path));
    bench::check(MPI_Win_lock(MPI_LOCK_SHARED, bench::rank(), 0, windows.window(path)), "MPI_Win_lock");
    const auto wrong = std::mismatch(reference.begin(), reference.end(), windows.base(path));
    bench::check(MPI_Win_unlock(bench::rank(), windows.window(path)), "MPI_Win_unlock");
    if (wrong.first != reference.end())
      bench::fail("WRONG RESULT after " + which + " build on the '" + paths[static_cast<std::size_t>(path)] +
                  "' window: rank " + std::to_string(bench::rank()) + ", element " +
                  std::to_string(wrong.first - reference.begin()) + " of its rows");
    return t;
  };
  for (int path = 0; path < static_cast<int>(paths.size()); ++path) build_and_check(path, "the warm-up");
  const bench::Samples s = bench::alternate(static_cast<int>(paths.size()), builds, 2, [&](int path, int round) {
    return build_and_check(path, "timed build " + std::to_string(round + 1));
  });

  const Counts& c = builder.counts;
  std::vector<std::int64_t> sums = {c.accumulates, c.self_accumulates, c.bytes};
  MPI_Allreduce(MPI_IN_PLACE, sums.data(), 3, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  std::vector<std::int64_t> most = {-c.min_bytes, c.max_bytes, c.accumulates,
                                    static_cast<std::int64_t>(builder.type_count())};
  MPI_Allreduce(MPI_IN_PLACE, most.data(), 4, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  report.line("problem: N " + std::to_string(o.n) + " (" + bench::format_bytes(std::int64_t{o.n} * o.n * 8) + "); " +
              std::to_string(shells) + " shells of " + std::to_string(o.min_tile) + ".." + std::to_string(o.max_tile) +
              " functions (seed " + std::to_string(seed) + "); " + std::to_string(o.tasks) + " tasks, " +
              std::to_string(o.work) + " divisions per integral; flush every " + std::to_string(o.flush_every) +
              " tasks");
  report.line("per build: " + std::to_string(sums[0]) + " MPI_Accumulate calls (" + std::to_string(sums[1]) +
              " into the caller's own rows; at most " + std::to_string(most[2]) + " from one rank), " +
              bench::fixed(static_cast<double>(sums[2]) / (1 << 20), 2) + " MiB in all, " + std::to_string(-most[0]) +
              ".." + std::to_string(most[1]) + " bytes each; " + std::to_string(most[3]) +
              " target vector types per rank at most");
  report.line("method: one untimed build per path, then " + std::to_string(builds) +
              " rounds of one build per path "
              "(rotating order); time = MPI_Win_lock_all .. MPI_Win_unlock_all, max over ranks, median over rounds; "
              "compute = the integrals alone; vs_native = median of same-round ratios");
  report.columns(
      {"path", "builds", "time_ms", "min_ms", "max_ms", "compute_ms", "vs_native", "accumulates", "bytes", "verified"},
      "ms per build");
  const auto native = std::find(paths.begin(), paths.end(), "native");
  for (int k = 0; k < static_cast<int>(paths.size()); ++k)
    report.row({paths[static_cast<std::size_t>(k)], std::to_string(builds), bench::fixed(s.median(k) * 1e3, 3),
                bench::fixed(s.min(k) * 1e3, 3), bench::fixed(s.max(k) * 1e3, 3), bench::fixed(s.median(k, 1) * 1e3, 3),
                native == paths.end() ? "" : bench::fixed(s.ratio(k, static_cast<int>(native - paths.begin())), 3),
                std::to_string(sums[0]), std::to_string(sums[2]), "exact"});
  report.line("verified: after every build (" + std::to_string(builds + 1) +
              " per path) every rank's rows equalled the locally computed reference exactly");
}

}  // namespace

int main(int argc, char** argv) { return bench::run("fock_build", kUsage, argc, argv, benchmark); }
