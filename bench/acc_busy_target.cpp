// acc_busy_target: how long does an MPI_Accumulate + MPI_Win_flush take
// while the target computes without calling MPI, on each accumulate path,
// against the same target waiting inside MPI? Native MPICH applies
// accumulates in the target's progress engine; a path that does not need
// it shows busy ~ idle. Rank 0 is the origin, the last rank the target.
#include <algorithm>
#include <cstdint>

#include "acc_common.hpp"

namespace {

constexpr std::string_view kUsage = R"(      (2 ranks or more: rank 0 the origin, the last rank the target)
  --sizes LIST   comma-separated accumulate sizes, >= 8; default 8,4K,64K,1M
  --stretch S    seconds the busy target computes between two MPI_Test calls; default 0.01
  --cap S        longest busy batch (the origin stops early and reports the mean so far); default max(1, 20 x S)
  --iters N      at most N accumulates per batch; default 1000
  --batch-ms MS  target length of an idle batch, from the warm-up's speed; default 50
  --warmup N     untimed accumulates per path and size; default 5
  --rounds R     rounds per size, each one idle and one busy batch of every path; default 5
  --paths LIST   from native,caller,owner,auto; default native,caller,owner
  --memory M     allocate (MPI_Win_allocate) or create (MPI_Win_create over the benchmark's memory); default allocate
)";

void benchmark(const bench::Args& args) {
  const auto sizes = args.given("--sizes") ? args.sizes(8, 8) : std::vector<std::int64_t>{8, 4096, 65536, 1 << 20};
  const double stretch = args.real("--stretch", 0.01, 1e-6, 60);
  const double cap = args.real("--cap", std::max(1.0, 20 * stretch), 1e-3, 3600);
  const int iters = args.count("--iters", 1000, 1), warmup = args.count("--warmup", 5, 1);
  const int rounds = args.count("--rounds", 5, 1);
  const bench::PathWindows windows(args, sizes);
  bench::first_use(windows);
  const std::vector<std::string>& paths = windows.paths();

  const bench::Report report(args,
                             "origin latency of MPI_Accumulate (MPI_DOUBLE, MPI_SUM) + MPI_Win_flush while the "
                             "target computes " +
                                 args.text("--stretch", "0.01") +
                                 " s stretches without MPI calls (busy; one "
                                 "MPI_Test between stretches; batches stop after " +
                                 bench::format_number(cap) + " s) against the target waiting in MPI_Wait (idle)");
  report.line("windows (" + windows.made_by() + ", " + bench::format_bytes(sizes.back()) +
              " per rank, info shim_accumulate -> the path shim took): " + windows.reported());
  report.line("method: per size " + std::to_string(warmup) + " warm-up accumulates per path size the batches, then " +
              std::to_string(rounds) +
              " rounds of an idle and a busy batch per path (rotating order); median over "
              "rounds; busy_over_idle = median of same-round ratios; the target checks its window after every batch");
  report.columns({"bytes", "path", "idle_iters", "idle_us", "idle_min_us", "idle_max_us", "busy_ops", "busy_us",
                  "busy_min_us", "busy_max_us", "busy_over_idle"},
                 "Accumulate + flush, us, target idle in MPI vs busy computing");

  for (const std::int64_t bytes : sizes) {
    const std::int64_t n = bytes / 8;
    std::vector<int> count;
    for (int p = 0; p < static_cast<int>(paths.size()); ++p) {
      const bench::Batch warm = bench::accumulate_batch(windows, p, n, warmup, 1);
      count.push_back(bench::batch_size(bench::max_over_ranks(warm.seconds) / warmup,
                                        args.count("--batch-ms", 50, 1) * 1e-3, iters));
    }
    // Variant 2p: path p idle, 2p + 1: busy.
    const bench::Samples s = bench::alternate(2 * static_cast<int>(paths.size()), rounds, 2, [&](int v, int) {
      const bool busy = v % 2 == 1;
      const bench::Batch b = bench::accumulate_batch(windows, v / 2, n, count[static_cast<std::size_t>(v / 2)], 1,
                                                     busy ? cap : 0, busy ? stretch : 0);
      return std::vector<double>{bench::rank() == bench::kOrigin ? b.seconds / b.flushes * 1e6 : 0.0,
                                 static_cast<double>(b.flushes)};
    });
    for (int p = 0; p < static_cast<int>(paths.size()); ++p)
      report.row({std::to_string(bytes), paths[static_cast<std::size_t>(p)],
                  std::to_string(count[static_cast<std::size_t>(p)]), bench::fixed(s.median(2 * p), 4),
                  bench::fixed(s.min(2 * p), 4), bench::fixed(s.max(2 * p), 4), bench::fixed(s.median(2 * p + 1, 1), 1),
                  bench::fixed(s.median(2 * p + 1), 4), bench::fixed(s.min(2 * p + 1), 4),
                  bench::fixed(s.max(2 * p + 1), 4), bench::fixed(s.ratio(2 * p + 1, 2 * p), 3)});
  }
}

}  // namespace

int main(int argc, char** argv) { return bench::run("acc_busy_target", kUsage, argc, argv, benchmark); }
