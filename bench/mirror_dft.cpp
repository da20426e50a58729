// mirror_dft: the communication pattern of the XC-matrix step of the DFT
// code in seed 000 §4, with mirrored against distributed arrays. A density
// matrix D and a Kohn-Sham matrix K, n x n doubles, start as distributed
// arrays. Each process loops over its share of pseudo-random block tasks
// (fixed seed; task t goes to rank t mod P): get a block of D, compute
// 4 flops per element, accumulate the result into another block of K.
//   mirrored:    copy D into a mirrored window (step 1), get D blocks from
//                the node copy, shim_mirror_acc into a mirrored K, merge K,
//                copy K back to a distributed array (the paper's steps).
//   distributed: MPI_Get of D's block rows + MPI_Win_flush of each target,
//                then MPI_Accumulate(MPI_SUM) of K's block rows +
//                MPI_Win_flush_local of each target, in a passive epoch
//                (MPI_Win_lock_all held for the run); MPI_Win_flush of every
//                rank + MPI_Barrier at the end. (Per target: MPICH 4.0.2's
//                MPI_Win_flush_all let stale data through here; see
//                mirror_common.hpp.)
// `--help` lists the flags.
//
// Both run in one run, alternating (rotating) per round; time = median over
// rounds of the max over ranks. Every round both K results (and every node's
// mirrored copy of K) must equal, bit for bit, a serial reference that every
// rank computes: the values are multiples of 2^-19 small enough that every
// sum is exact in any order.
#include <mpi.h>
#include <shim/mirror.h>
#include <shim/shim.h>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
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
    "usage: mirror_dft [options]\n"
    "  --n N            order of D and K; default 1024\n"
    "  --tasks T        block tasks in all (task t runs on rank t mod P); default 2000\n"
    "  --min-block B    smallest block side; default 8\n"
    "  --max-block B    largest block side (sides are uniform in [min, max]); default 48\n"
    "  --seed S         task generator seed; default 1\n"
    "  --rounds R       rounds, each running both variants; default 5\n"
    "  --csv            CSV rows instead of the table; '#' lines are comments\n"
    "  --help           print this and exit\n";

struct Options {
  int n = 1024;
  int tasks = 2000;
  int min_block = 8;
  int max_block = 48;
  int seed = 1;
  int rounds = 5;
  bool csv = false;
};

Options parse(int argc, char** argv, bool& help) {
  const mbench::Args args(argc, argv, {"--n", "--tasks", "--min-block", "--max-block", "--seed", "--rounds"}, {"--csv"});
  help = args.flag("--help");
  Options o;
  o.n = args.count("--n", o.n, 1);
  o.tasks = args.count("--tasks", o.tasks, 1);
  o.min_block = args.count("--min-block", o.min_block, 1);
  o.max_block = args.count("--max-block", o.max_block, 1);
  o.seed = args.count("--seed", o.seed, 0);
  o.rounds = args.count("--rounds", o.rounds, 1);
  o.csv = args.flag("--csv");
  if (o.min_block > o.max_block) throw UsageError("--min-block is larger than --max-block");
  if (o.max_block > o.n) throw UsageError("--max-block is larger than --n");
  return o;
}

struct Task {
  std::int64_t rows, cols;  // block shape
  std::int64_t d_row, d_col;  // where it reads D
  std::int64_t k_row, k_col;  // where it accumulates into K
  double scale;
};

std::vector<Task> make_tasks(const Options& o) {
  mbench::Rng rng(static_cast<std::uint64_t>(o.seed));
  std::vector<Task> tasks;
  for (int t = 0; t < o.tasks; ++t) {
    Task task{};
    task.rows = rng.between(o.min_block, o.max_block);
    task.cols = rng.between(o.min_block, o.max_block);
    task.d_row = rng.between(0, o.n - task.rows);
    task.d_col = rng.between(0, o.n - task.cols);
    task.k_row = rng.between(0, o.n - task.rows);
    task.k_col = rng.between(0, o.n - task.cols);
    task.scale = static_cast<double>(rng.between(1, 8)) / 8;
    tasks.push_back(task);
  }
  return tasks;
}

// D: multiples of 1/64 in [-0.5, 0.5).
double d_value(std::int64_t i, std::int64_t j) { return static_cast<double>((i * 29 + j * 31) % 64) / 64 - 0.5; }

// The per-element work, 4 flops: a multiple of 2^-19 of magnitude < 1.
inline double kernel(double d, double scale) {
  const double x = d * scale;
  return x * x * 0.5 + x;
}

void compute(const Task& task, const double* d, double* k) {
  const std::int64_t n = task.rows * task.cols;
  for (std::int64_t e = 0; e < n; ++e) k[e] = kernel(d[e], task.scale);
}

enum Variant : int { mirrored, distributed, kVariants };
constexpr std::array<const char*, kVariants> kNames = {"mirrored", "distributed"};
// Phases per variant (times: max over ranks, then median over rounds).
constexpr int kPhases = 5;
constexpr std::array<std::array<const char*, kPhases>, kVariants> kPhaseNames = {{
    {"copy D in", "tasks", "merge K", "copy K out", "total"},
    {"zero K", "tasks", "complete", "-", "total"},
}};

class Dft {
 public:
  Dft(const Options& o, std::vector<Task> tasks) : n_(o.n), count_(std::int64_t{o.n} * o.n), tasks_(std::move(tasks)) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    for (shim_distributed* d : {&d_, &k_mirrored_, &k_distributed_})
      check(shim_distributed_create(count_, MPI_DOUBLE, MPI_COMM_WORLD, d), "shim_distributed_create");
    for (shim_mirror* m : {&d_m_, &k_m_})
      check(shim_mirror_create(count_, MPI_DOUBLE, MPI_COMM_WORLD, m), "shim_mirror_create");
    MPI_Count first = 0, held = 0;
    check(shim_distributed_range(d_, rank_, &first, &held), "shim_distributed_range");
    block_ = {first, held};
    double* mine = mbench::local_block(d_);
    for (std::int64_t e = 0; e < held; ++e) mine[e] = d_value((first + e) / n_, (first + e) % n_);
    check(shim_distributed_window(d_, &d_win_), "shim_distributed_window");
    check(shim_distributed_window(k_distributed_, &k_win_), "shim_distributed_window");
    check(MPI_Win_lock_all(0, d_win_), "MPI_Win_lock_all");
    check(MPI_Win_lock_all(0, k_win_), "MPI_Win_lock_all");
    std::int64_t largest = 0;
    for (const Task& t : tasks_) largest = std::max(largest, t.rows * t.cols);
    d_block_.resize(static_cast<std::size_t>(largest));
    k_block_.resize(static_cast<std::size_t>(largest));
    MPI_Barrier(MPI_COMM_WORLD);
  }
  ~Dft() {
    MPI_Win_unlock_all(k_win_);
    MPI_Win_unlock_all(d_win_);
    for (shim_mirror* m : {&d_m_, &k_m_}) shim_mirror_free(m);
    for (shim_distributed* d : {&d_, &k_mirrored_, &k_distributed_}) shim_distributed_free(d);
  }
  Dft(const Dft&) = delete;
  Dft& operator=(const Dft&) = delete;

  std::array<double, kPhases> run(Variant v) {
    MPI_Barrier(MPI_COMM_WORLD);
    return v == mirrored ? run_mirrored() : run_distributed();
  }

  // This rank's block of each variant's K (the distributed arrays).
  const double* k_block(Variant v) {
    if (v == distributed) MPI_Win_sync(k_win_);
    return mbench::local_block(v == mirrored ? k_mirrored_ : k_distributed_);
  }
  struct Range {
    std::int64_t first, count;
  };
  Range block() const { return block_; }
  // This node's copy of K (merged).
  std::vector<double> k_copy() const {
    std::vector<double> all(static_cast<std::size_t>(count_));
    check(shim_mirror_get(k_m_, 0, count_, all.data()), "shim_mirror_get");
    return all;
  }
  std::int64_t my_tasks() const { return (static_cast<std::int64_t>(tasks_.size()) - rank_ + size_ - 1) / size_; }

 private:
  std::array<double, kPhases> run_mirrored() {
    const double t0 = MPI_Wtime();
    check(shim_mirror_copy_from_distributed(d_m_, d_), "shim_mirror_copy_from_distributed");
    const double t1 = MPI_Wtime();
    check(shim_mirror_zero(k_m_), "shim_mirror_zero");
    for (std::size_t t = static_cast<std::size_t>(rank_); t < tasks_.size(); t += static_cast<std::size_t>(size_)) {
      const Task& task = tasks_[t];
      for (std::int64_t r = 0; r < task.rows; ++r)
        shim_mirror_get(d_m_, (task.d_row + r) * n_ + task.d_col, task.cols, d_block_.data() + r * task.cols);
      compute(task, d_block_.data(), k_block_.data());
      for (std::int64_t r = 0; r < task.rows; ++r)
        shim_mirror_acc(k_m_, (task.k_row + r) * n_ + task.k_col, task.cols, k_block_.data() + r * task.cols, nullptr);
    }
    const double t2 = MPI_Wtime();
    check(shim_mirror_merge(k_m_), "shim_mirror_merge");
    const double t3 = MPI_Wtime();
    check(shim_mirror_copy_to_distributed(k_m_, k_mirrored_), "shim_mirror_copy_to_distributed");
    const double t4 = MPI_Wtime();
    return {t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0};
  }

  std::array<double, kPhases> run_distributed() {
    const double t0 = MPI_Wtime();
    // Zero this rank's block of K before anybody accumulates into it.
    if (block_.count > 0)
      std::memset(mbench::local_block(k_distributed_), 0, static_cast<std::size_t>(block_.count) * sizeof(double));
    MPI_Win_sync(k_win_);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t1 = MPI_Wtime();
    mbench::Targets d_targets(size_), k_targets(size_);
    for (std::size_t t = static_cast<std::size_t>(rank_); t < tasks_.size(); t += static_cast<std::size_t>(size_)) {
      const Task& task = tasks_[t];
      for (std::int64_t r = 0; r < task.rows; ++r)
        mbench::get_range(d_, d_win_, (task.d_row + r) * n_ + task.d_col, task.cols, d_block_.data() + r * task.cols,
                          d_targets);
      d_targets.flush(d_win_);
      compute(task, d_block_.data(), k_block_.data());
      for (std::int64_t r = 0; r < task.rows; ++r)
        mbench::accumulate_range(k_distributed_, k_win_, (task.k_row + r) * n_ + task.k_col, task.cols,
                                 k_block_.data() + r * task.cols, k_targets);
      // The buffer is reused by the next task.
      k_targets.flush(k_win_, true);
    }
    const double t2 = MPI_Wtime();
    for (int r = 0; r < size_; ++r) MPI_Win_flush(r, k_win_);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t3 = MPI_Wtime();
    return {t1 - t0, t2 - t1, t3 - t2, 0, t3 - t0};
  }

  std::int64_t n_, count_;
  std::vector<Task> tasks_;
  int rank_ = 0, size_ = 1;
  shim_distributed d_ = nullptr, k_mirrored_ = nullptr, k_distributed_ = nullptr;
  shim_mirror d_m_ = nullptr, k_m_ = nullptr;
  MPI_Win d_win_ = MPI_WIN_NULL, k_win_ = MPI_WIN_NULL;
  Range block_{0, 0};
  std::vector<double> d_block_, k_block_;
};

std::vector<double> serial_reference(const Options& o, const std::vector<Task>& tasks) {
  const std::int64_t n = o.n;
  std::vector<double> k(static_cast<std::size_t>(n * n), 0.0);
  for (const Task& task : tasks)
    for (std::int64_t r = 0; r < task.rows; ++r)
      for (std::int64_t c = 0; c < task.cols; ++c)
        k[static_cast<std::size_t>((task.k_row + r) * n + task.k_col + c)] +=
            kernel(d_value(task.d_row + r, task.d_col + c), task.scale);
  return k;
}

}  // namespace

int main(int argc, char** argv) {
  bench::set_program_name("mirror_dft");
  MPI_Init(&argc, &argv);
  Options o;
  if (const auto status = mbench::parse_or_exit("mirror_dft", kUsage, argc, argv, o, parse)) return *status;
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const mbench::Machine machine = mbench::describe_machine();
  const std::vector<Task> tasks = make_tasks(o);
  std::int64_t elements = 0, rows = 0;
  for (const Task& t : tasks) {
    elements += t.rows * t.cols;
    rows += t.rows;
  }
  if (rank == 0) {
    mbench::print_line(o.csv, std::string("mirror_dft (shim ") + shim_version() +
                                  "): seed 000's DFT pattern: get a block of D, 4 flops per element, accumulate into "
                                  "K; mirrored (copy D in, shim_mirror_get/acc, merge K, copy K out) vs distributed "
                                  "(MPI_Get + flush, MPI_Accumulate + flush_local, per target, passive target); alternating");
    mbench::print_machine(machine, o.csv);
    char text[512];
    std::snprintf(text, sizeof text,
                  "problem: D and K %d x %d doubles (%s each); %d tasks (seed %d, blocks %d..%d square-ish), %" PRId64
                  " elements and %" PRId64 " block rows in all (one MPI_Get and one MPI_Accumulate per block row and "
                  "owner), task t on rank t mod %d",
                  o.n, o.n, format_bytes(std::int64_t{o.n} * o.n * 8).c_str(), o.tasks, o.seed, o.min_block,
                  o.max_block, elements, rows, size);
    mbench::print_line(o.csv, text);
    std::fflush(stdout);
  }

  {  // dft is freed before MPI_Finalize
    Dft dft(o, tasks);
    const std::vector<double> reference = serial_reference(o, tasks);
    const auto rounds = static_cast<std::size_t>(o.rounds);
    std::vector<double> seconds(kVariants * kPhases * rounds);
    for (std::size_t round = 0; round < rounds; ++round) {
      for (int k = 0; k < kVariants; ++k) {
        const auto v = static_cast<Variant>((k + static_cast<int>(round)) % kVariants);
        const std::array<double, kPhases> t = dft.run(v);
        for (int p = 0; p < kPhases; ++p)
          seconds[(static_cast<std::size_t>(v) * rounds + round) * kPhases + static_cast<std::size_t>(p)] =
              t[static_cast<std::size_t>(p)];
      }
      // Both K against the serial reference, every round, and every node's
      // mirrored copy (each process checks its node's: each has one).
      const auto block = dft.block();
      for (int v = 0; v < kVariants; ++v) {
        const double* got = dft.k_block(static_cast<Variant>(v));
        for (std::int64_t e = 0; e < block.count; ++e)
          if (got[e] != reference[static_cast<std::size_t>(block.first + e)])
            fail(std::string("WRONG RESULT in round ") + std::to_string(round + 1) + ": " +
                 kNames[static_cast<std::size_t>(v)] + " K on rank " + std::to_string(rank) + ", element " +
                 std::to_string(block.first + e) + " (row " + std::to_string((block.first + e) / o.n) + ", column " +
                 std::to_string((block.first + e) % o.n) + ") is " + std::to_string(got[e]) +
                 ", the serial reference " + std::to_string(reference[static_cast<std::size_t>(block.first + e)]));
      }
      if (dft.k_copy() != reference)
        fail("WRONG RESULT in round " + std::to_string(round + 1) + ": rank " + std::to_string(rank) +
             "'s node copy of K differs from the serial reference");
    }
    seconds = mbench::max_over_ranks(seconds);
    if (rank == 0) {
      mbench::print_line(o.csv, "verified: in every round, mirrored and distributed K (each rank's block) and every "
                                "node's mirrored copy of K equal a serial reference bit for bit");
      std::array<std::array<double, kPhases>, kVariants> med{};
      for (int v = 0; v < kVariants; ++v)
        for (int p = 0; p < kPhases; ++p) {
          std::vector<double> values;
          for (std::size_t r = 0; r < rounds; ++r)
            values.push_back(seconds[(static_cast<std::size_t>(v) * rounds + r) * kPhases + static_cast<std::size_t>(p)] * 1e3);
          med[static_cast<std::size_t>(v)][static_cast<std::size_t>(p)] = median(values);
        }
      if (o.csv) {
        std::printf("variant,rounds,phase1_ms,tasks_ms,phase3_ms,phase4_ms,total_ms\n");
        for (int v = 0; v < kVariants; ++v) {
          const auto& m = med[static_cast<std::size_t>(v)];
          std::printf("%s,%d,%.3f,%.3f,%.3f,%.3f,%.3f\n", kNames[static_cast<std::size_t>(v)], o.rounds, m[0], m[1],
                      m[2], m[3], m[4]);
        }
      } else {
        std::printf("\nTime, ms (median over %d rounds of the max over ranks, each phase and the total on its own)\n",
                    o.rounds);
        for (int v = 0; v < kVariants; ++v) {
          const auto& m = med[static_cast<std::size_t>(v)];
          const auto& names = kPhaseNames[static_cast<std::size_t>(v)];
          std::printf("%-12s", kNames[static_cast<std::size_t>(v)]);
          for (int p = 0; p < kPhases; ++p) {
            if (std::string(names[static_cast<std::size_t>(p)]) == "-") continue;
            std::printf("  %s %9.2f", names[static_cast<std::size_t>(p)], m[static_cast<std::size_t>(p)]);
          }
          std::printf("\n");
        }
        std::printf("distributed/mirrored total: %.2f\n", med[distributed][4] / med[mirrored][4]);
      }
      std::fflush(stdout);
    }
  }
  MPI_Finalize();
  return 0;
}
