// mirror_dft: is the communication pattern of a DFT code's XC-matrix step
// faster with mirrored than with distributed arrays (Palmer, Nieplocha,
// Aprà, "Shared Memory Mirroring for Reducing Communication Overhead on
// Commodity Networks", section 4)? A density matrix D and a Kohn-Sham
// matrix K, n x n doubles, start as distributed arrays. Each process runs
// its share of pseudo-random block tasks (task t on rank t mod P): get a
// block of D, 4 flops per element, accumulate the result into a block of K.
//   mirrored:    copy D into a mirrored window, shim_mirror_get of D blocks,
//                shim_mirror_acc into a mirrored K, merge K, copy K back to
//                a distributed array (the paper's steps).
//   distributed: MPI_Get of D's block rows + MPI_Win_flush per target,
//                MPI_Accumulate(MPI_SUM) of K's block rows +
//                MPI_Win_flush_local per target, under MPI_Win_lock_all;
//                MPI_Win_flush of every rank + MPI_Barrier at the end.
// Every round both K (and every node's mirrored copy) must equal a serial
// reference bit for bit: values are multiples of 2^-19 small enough that
// every sum is exact in any order.
#include <shim/shim.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "mirror_common.hpp"

namespace {

constexpr std::string_view kUsage = R"(
  --n N            order of D and K; default 1024
  --tasks T        block tasks in all; default 2000
  --min-block B    smallest block side; default 8
  --max-block B    largest block side (sides uniform in [min, max]); default 48
  --seed S         task generator seed; default 1
  --rounds R       rounds, each running both variants; default 5
)";

struct Task {
  std::int64_t rows, cols, d_row, d_col, k_row, k_col;  // block shape, where it reads D, where it adds into K
  double scale;
};

// D: multiples of 1/64 in [-0.5, 0.5).
double d_value(std::int64_t i, std::int64_t j) { return static_cast<double>((i * 29 + j * 31) % 64) / 64 - 0.5; }

// The per-element work, 4 flops: a multiple of 2^-19 of magnitude < 1.
double kernel(double d, double scale) {
  const double x = d * scale;
  return x * x * 0.5 + x;
}

enum Variant : int { mirrored, distributed, kVariants };
constexpr std::array<const char*, kVariants> kNames = {"mirrored", "distributed"};

class Dft {
 public:
  Dft(std::int64_t n, std::vector<Task> tasks) : n_(n), count_(n * n), tasks_(std::move(tasks)) {
    for (shim_distributed* d : {&d_, &k_mirrored_, &k_distributed_})
      bench::check(shim_distributed_create(count_, MPI_DOUBLE, MPI_COMM_WORLD, d), "shim_distributed_create");
    for (shim_mirror* m : {&d_m_, &k_m_})
      bench::check(shim_mirror_create(count_, MPI_DOUBLE, MPI_COMM_WORLD, m), "shim_mirror_create");
    MPI_Count first = 0, held = 0;
    bench::check(shim_distributed_range(d_, bench::rank(), &first, &held), "shim_distributed_range");
    block_ = {first, held};
    for (std::int64_t e = 0; e < held; ++e) bench::local_block(d_)[e] = d_value((first + e) / n_, (first + e) % n_);
    bench::check(MPI_Win_lock_all(0, bench::window_of(d_)), "MPI_Win_lock_all");
    bench::check(MPI_Win_lock_all(0, bench::window_of(k_distributed_)), "MPI_Win_lock_all");
    std::int64_t largest = 0;
    for (const Task& t : tasks_) largest = std::max(largest, t.rows * t.cols);
    d_block_.resize(static_cast<std::size_t>(largest));
    k_block_.resize(static_cast<std::size_t>(largest));
    MPI_Barrier(MPI_COMM_WORLD);
  }
  ~Dft() {
    MPI_Win_unlock_all(bench::window_of(k_distributed_));
    MPI_Win_unlock_all(bench::window_of(d_));
    for (shim_mirror* m : {&d_m_, &k_m_}) shim_mirror_free(m);
    for (shim_distributed* d : {&d_, &k_mirrored_, &k_distributed_}) shim_distributed_free(d);
  }
  Dft(const Dft&) = delete;
  Dft& operator=(const Dft&) = delete;

  // Seconds of the phases: mirrored: copy D in, tasks, merge K, copy K out,
  // total; distributed: zero K, tasks, complete, 0, total.
  std::vector<double> run(int v) {
    MPI_Barrier(MPI_COMM_WORLD);
    return v == mirrored ? run_mirrored() : run_distributed();
  }
  // This rank's block of a variant's K.
  const double* k_block(int v) {
    if (v == distributed) MPI_Win_sync(bench::window_of(k_distributed_));
    return bench::local_block(v == mirrored ? k_mirrored_ : k_distributed_);
  }
  bench::Range block() const { return block_; }
  std::vector<double> k_copy() const {  // this node's copy of K
    std::vector<double> all(static_cast<std::size_t>(count_));
    bench::check(shim_mirror_get(k_m_, 0, count_, all.data()), "shim_mirror_get");
    return all;
  }

 private:
  std::vector<double> run_mirrored() {
    const double t0 = MPI_Wtime();
    bench::check(shim_mirror_copy_from_distributed(d_m_, d_), "shim_mirror_copy_from_distributed");
    const double t1 = MPI_Wtime();
    bench::check(shim_mirror_zero(k_m_), "shim_mirror_zero");
    for_my_tasks([&](const Task& task) {
      for (std::int64_t r = 0; r < task.rows; ++r)
        shim_mirror_get(d_m_, (task.d_row + r) * n_ + task.d_col, task.cols, d_block_.data() + r * task.cols);
      compute(task);
      for (std::int64_t r = 0; r < task.rows; ++r)
        shim_mirror_acc(k_m_, (task.k_row + r) * n_ + task.k_col, task.cols, k_block_.data() + r * task.cols, nullptr);
    });
    const double t2 = MPI_Wtime();
    bench::check(shim_mirror_merge(k_m_), "shim_mirror_merge");
    const double t3 = MPI_Wtime();
    bench::check(shim_mirror_copy_to_distributed(k_m_, k_mirrored_), "shim_mirror_copy_to_distributed");
    const double t4 = MPI_Wtime();
    return {t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0};
  }

  std::vector<double> run_distributed() {
    const double t0 = MPI_Wtime();
    const MPI_Win k_win = bench::window_of(k_distributed_);
    // Zero this rank's block of K before anybody accumulates into it.
    std::memset(bench::local_block(k_distributed_), 0, static_cast<std::size_t>(block_.count) * sizeof(double));
    MPI_Win_sync(k_win);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t1 = MPI_Wtime();
    bench::Targets d_targets(bench::ranks()), k_targets(bench::ranks());
    for_my_tasks([&](const Task& task) {
      for (std::int64_t r = 0; r < task.rows; ++r)
        bench::get_range(d_, (task.d_row + r) * n_ + task.d_col, task.cols, d_block_.data() + r * task.cols, d_targets);
      d_targets.flush(bench::window_of(d_));
      compute(task);
      for (std::int64_t r = 0; r < task.rows; ++r)
        bench::accumulate_range(k_distributed_, (task.k_row + r) * n_ + task.k_col, task.cols,
                                k_block_.data() + r * task.cols, k_targets);
      k_targets.flush(k_win, true);  // the buffer is reused by the next task
    });
    const double t2 = MPI_Wtime();
    for (int r = 0; r < bench::ranks(); ++r) MPI_Win_flush(r, k_win);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t3 = MPI_Wtime();
    return {t1 - t0, t2 - t1, t3 - t2, 0, t3 - t0};
  }

  template <typename Op>
  void for_my_tasks(Op op) {
    for (std::size_t t = static_cast<std::size_t>(bench::rank()); t < tasks_.size();
         t += static_cast<std::size_t>(bench::ranks()))
      op(tasks_[t]);
  }
  void compute(const Task& task) {
    for (std::int64_t e = 0; e < task.rows * task.cols; ++e)
      k_block_[static_cast<std::size_t>(e)] = kernel(d_block_[static_cast<std::size_t>(e)], task.scale);
  }

  std::int64_t n_, count_;
  std::vector<Task> tasks_;
  shim_distributed d_ = nullptr, k_mirrored_ = nullptr, k_distributed_ = nullptr;
  shim_mirror d_m_ = nullptr, k_m_ = nullptr;
  bench::Range block_;
  std::vector<double> d_block_, k_block_;
};

void benchmark(const bench::Args& args) {
  const int n = args.count("--n", 1024, 1), task_count = args.count("--tasks", 2000, 1);
  const int min_block = args.count("--min-block", 8, 1), max_block = args.count("--max-block", 48, 1);
  const int seed = args.count("--seed", 1, 0), rounds = args.count("--rounds", 5, 1);
  if (min_block > max_block) throw bench::UsageError("--min-block is larger than --max-block");
  if (max_block > n) throw bench::UsageError("--max-block is larger than --n");
  bench::Rng rng(static_cast<std::uint64_t>(seed));
  std::vector<Task> tasks;
  std::int64_t elements = 0, block_rows = 0;
  for (int t = 0; t < task_count; ++t) {
    Task task{};
    task.rows = rng.between(min_block, max_block);
    task.cols = rng.between(min_block, max_block);
    task.d_row = rng.between(0, n - task.rows);
    task.d_col = rng.between(0, n - task.cols);
    task.k_row = rng.between(0, n - task.rows);
    task.k_col = rng.between(0, n - task.cols);
    task.scale = static_cast<double>(rng.between(1, 8)) / 8;
    tasks.push_back(task);
    elements += task.rows * task.cols;
    block_rows += task.rows;
  }
  std::vector<double> reference(static_cast<std::size_t>(n) * static_cast<std::size_t>(n), 0.0);
  for (const Task& task : tasks)
    for (std::int64_t r = 0; r < task.rows; ++r)
      for (std::int64_t c = 0; c < task.cols; ++c)
        reference[static_cast<std::size_t>((task.k_row + r) * n + task.k_col + c)] +=
            kernel(d_value(task.d_row + r, task.d_col + c), task.scale);

  const bench::Report report(
      args,
      "a DFT code's XC step (Palmer, Nieplocha, Aprà): get a block of D, 4 flops per element, accumulate "
      "into K; mirrored (copy D in, shim_mirror_get/acc, merge K, copy K out) vs distributed (MPI_Get + "
      "flush, MPI_Accumulate + flush_local, per target); alternating");
  bench::describe_mirror_nodes(report);
  report.line("problem: D and K " + std::to_string(n) + " x " + std::to_string(n) + " doubles (" +
              bench::format_bytes(std::int64_t{n} * n * 8) + " each); " + std::to_string(task_count) + " tasks (seed " +
              std::to_string(seed) + ", blocks " + std::to_string(min_block) + ".." + std::to_string(max_block) +
              "), " + std::to_string(elements) + " elements and " + std::to_string(block_rows) +
              " block rows in all (one MPI_Get and one MPI_Accumulate per block row and owner)");

  Dft dft(n, tasks);
  const bench::Samples seconds = bench::alternate(kVariants, rounds, 5, [&](int v, int round) {
    const std::vector<double> t = dft.run(v);
    const double* got = dft.k_block(v);
    for (std::int64_t e = 0; e < dft.block().count; ++e)
      if (got[e] != reference[static_cast<std::size_t>(dft.block().first + e)])
        bench::fail("WRONG RESULT in round " + std::to_string(round + 1) + ": " + kNames[static_cast<std::size_t>(v)] +
                    " K on rank " + std::to_string(bench::rank()) + ", element " +
                    std::to_string(dft.block().first + e));
    if (v == mirrored && dft.k_copy() != reference)
      bench::fail("WRONG RESULT in round " + std::to_string(round + 1) + ": rank " + std::to_string(bench::rank()) +
                  "'s node copy of K differs from the serial reference");
    return t;
  });
  report.line(
      "verified: in every round, mirrored and distributed K (each rank's block) and every node's mirrored "
      "copy of K equal a serial reference bit for bit");
  report.columns({"variant", "rounds", "phase1_ms", "tasks_ms", "phase3_ms", "phase4_ms", "total_ms"},
                 "Time, ms (median over rounds of the max over ranks, each phase and the total on its own); phases: "
                 "mirrored: copy D in, tasks, merge K, copy K out; distributed: zero K, tasks, complete");
  for (int v = 0; v < kVariants; ++v) {
    std::vector<std::string> cells = {kNames[static_cast<std::size_t>(v)], std::to_string(rounds)};
    for (int phase = 0; phase < 5; ++phase) cells.push_back(bench::fixed(seconds.median(v, phase) * 1e3, 3));
    report.row(cells);
  }
}

}  // namespace

int main(int argc, char** argv) { return bench::run("mirror_dft", kUsage, argc, argv, benchmark); }
