// put_order: what does shim add to MPI_Put and MPI_Get, which it now
// interposes to order them with its accumulates (rma/access_order.hpp)?
// Rank 0 puts or gets 8 bytes at the last rank, in one MPI_Win_lock epoch,
// on two windows (info shim_accumulate: native, which shim leaves to MPI,
// and owner), each called two ways in the same run:
//   PMPI_*  MPI alone, no interposer;
//   MPI_*   through shim (on the native window its lookup of the window; on
//           the owner window also the ordering's bookkeeping).
// And what ordering costs where it acts: a put, then an accumulate to the
// same element, --window pairs per flush, through shim on both windows (on
// the owner window each accumulate first flushes the put before it).
#include <cstdint>

#include "acc_common.hpp"

namespace {

constexpr std::string_view kUsage = R"(      (2 ranks or more: rank 0 the origin, the last rank the target)
  --iters N      at most N operations per batch; default 100000
  --batch-ms MS  target length of a batch, from the warm-up's speed; default 50
  --rounds R     rounds, each one batch of every caller; default 9
  --window W     operations per MPI_Win_flush in the rate batches; default 64
)";

enum Caller { kNativePmpi, kNativeMpi, kOwnerPmpi, kOwnerMpi, kCallers };
const char* const kCallerNames[kCallers] = {"native window, PMPI_*", "native window, MPI_*", "owner window, PMPI_*",
                                            "owner window, MPI_*"};
enum Measure { kPutLatency, kPutRate, kGetLatency, kPairRate, kMeasures };

bool through_pmpi(int caller) { return caller == kNativePmpi || caller == kOwnerPmpi; }

struct Setup {
  const bench::PathWindows& windows;
  int window;
};

MPI_Win window_of(const Setup& s, int caller) { return s.windows.window(caller < kOwnerPmpi ? 0 : 1); }

// Rank 0's seconds for `count` operations of `measure` (latency: each
// flushed; rate: `window` per flush), the other ranks waiting in MPI.
double batch(const Setup& s, int caller, Measure measure, int count) {
  const MPI_Win win = window_of(s, caller);
  const int target = bench::target_rank();
  double value = 1, seconds = 0;
  if (bench::rank() == bench::kOrigin) {
    auto put = [&] {
      bench::check(through_pmpi(caller) ? PMPI_Put(&value, 1, MPI_DOUBLE, target, 0, 1, MPI_DOUBLE, win)
                                        : MPI_Put(&value, 1, MPI_DOUBLE, target, 0, 1, MPI_DOUBLE, win),
                   "MPI_Put");
    };
    auto get = [&] {
      bench::check(through_pmpi(caller) ? PMPI_Get(&value, 1, MPI_DOUBLE, target, 1, 1, MPI_DOUBLE, win)
                                        : MPI_Get(&value, 1, MPI_DOUBLE, target, 1, 1, MPI_DOUBLE, win),
                   "MPI_Get");
    };
    auto flush = [&] { bench::check(MPI_Win_flush(target, win), "MPI_Win_flush"); };
    bench::check(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win), "MPI_Win_lock");
    const double start = MPI_Wtime();
    for (int i = 0; i < count; ++i) {
      if (measure == kPutLatency) {
        put();
        flush();
      } else if (measure == kGetLatency) {
        get();
        flush();
      } else {
        for (int k = 0; k < s.window; ++k) {
          put();
          if (measure == kPairRate)
            bench::check(MPI_Accumulate(&value, 1, MPI_DOUBLE, target, 0, 1, MPI_DOUBLE, MPI_SUM, win),
                         "MPI_Accumulate");
        }
        flush();
      }
    }
    seconds = MPI_Wtime() - start;
    bench::check(MPI_Win_unlock(target, win), "MPI_Win_unlock");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return seconds;
}

// Microseconds per operation (rates: per put, or per put + accumulate pair).
double per_operation(const Setup& s, Measure measure, int count, double seconds) {
  const bool windowed = measure == kPutRate || measure == kPairRate;
  return seconds / count / (windowed ? s.window : 1) * 1e6;
}

void benchmark(const bench::Args& args) {
  const int iters = args.count("--iters", 100000, 1), rounds = args.count("--rounds", 9, 1);
  if (bench::ranks() < 2) throw bench::UsageError("2 ranks or more");
  const bench::PathWindows windows({"native", "owner"}, 1 << 12);
  const Setup setup{windows, args.count("--window", 64, 1)};
  const double batch_seconds = args.count("--batch-ms", 50, 1) * 1e-3;
  bench::first_use(setup.windows);
  // The pair rate is timed through shim only (PMPI_Put beside shim's
  // accumulates on the owner window is the unordered case).
  auto applies = [](int caller, int measure) { return measure != kPairRate || !through_pmpi(caller); };

  const bench::Report report(args,
                             "MPI_Put and MPI_Get of 8 bytes, rank 0 -> last rank, passive target, windows and "
                             "calls alternating in one run");
  report.line("windows (MPI_Win_allocate, info shim_accumulate -> the path shim took): " + setup.windows.reported());
  report.line(
      "calls: PMPI_* = MPI alone, no interposer; MPI_* = through shim (on the owner window ordered with "
      "its accumulates)");
  report.line("method: a warm-up batch sizes each (~" + args.text("--batch-ms", "50") + " ms, at most " +
              std::to_string(iters) + "), then " + std::to_string(rounds) +
              " rounds of one batch per window and call (rotating order); median over rounds of the max over ranks");
  report.columns(
      {"window and call", "put_latency_us", "put_us_in_window", "get_latency_us", "put_acc_pair_us", "window"},
      "Microseconds per operation: latency = one op + MPI_Win_flush; in window = --window ops per "
      "MPI_Win_flush; pair = MPI_Put then MPI_Accumulate(MPI_SUM) to the same element");

  std::vector<int> counts(static_cast<std::size_t>(kCallers) * kMeasures, 1);
  for (int c = 0; c < kCallers; ++c)
    for (int m = 0; m < kMeasures; ++m)
      if (applies(c, m)) {
        const auto measure = static_cast<Measure>(m);
        const double warm = bench::max_over_ranks(batch(setup, c, measure, 10)) / 10;
        counts[static_cast<std::size_t>(c * kMeasures + m)] =
            bench::batch_size(warm, batch_seconds, measure == kPutRate || measure == kPairRate ? iters / 64 : iters);
      }
  const bench::Samples s = bench::alternate(kCallers, rounds, kMeasures, [&](int c, int) {
    std::vector<double> out(kMeasures, 0);
    for (int m = 0; m < kMeasures; ++m) {
      if (!applies(c, m)) continue;
      const auto measure = static_cast<Measure>(m);
      const int count = counts[static_cast<std::size_t>(c * kMeasures + m)];
      out[static_cast<std::size_t>(m)] = per_operation(setup, measure, count, batch(setup, c, measure, count));
    }
    return out;
  });
  for (int c = 0; c < kCallers; ++c) {
    report.row({kCallerNames[c], bench::fixed(s.median(c, kPutLatency), 3), bench::fixed(s.median(c, kPutRate), 4),
                bench::fixed(s.median(c, kGetLatency), 3),
                applies(c, kPairRate) ? bench::fixed(s.median(c, kPairRate), 3) : "", std::to_string(setup.window)});
  }
}

}  // namespace

int main(int argc, char** argv) { return bench::run("put_order", kUsage, argc, argv, benchmark); }
