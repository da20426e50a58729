// acc_latency: how long does an MPI_Accumulate take, and how many bytes per
// second do many of them move, on each accumulate path (native MPI,
// caller-computes, owner-computes: the window info key shim_accumulate)?
// OSU-style: latency is MPI_Accumulate + MPI_Win_flush (osu_acc_latency),
// bandwidth --window accumulates per MPI_Win_flush (osu_put_bw's window),
// from rank 0 to the last rank, doubles with MPI_SUM; paths alternate round by
// round. Further ranks only take part in the barriers.
#include <algorithm>
#include <cstdint>

#include "acc_common.hpp"

namespace {

constexpr std::string_view kUsage = R"(      (2 ranks or more: rank 0 the origin, the last rank the target)
  --min BYTES    smallest accumulate, >= 8 (doubles); default 8
  --max BYTES    largest accumulate; default 1M
  --sizes LIST   comma-separated sizes instead of --min/--max
  --iters N      at most N accumulates (latency) or windows (bandwidth) per batch; default 1000
  --batch-ms MS  target length of a batch, from the warm-up's speed; default 50
  --warmup N     untimed accumulates per path and size (bandwidth: one window); default 5
  --rounds R     rounds per size, each one latency and one bandwidth batch of every path; default 7
  --window W     accumulates per flush in the bandwidth batches; default 64
  --paths LIST   from native,caller,owner,auto; default native,caller,owner
  --memory M     allocate (MPI_Win_allocate) or create (MPI_Win_create over the benchmark's memory); default allocate
  --idle-asleep  ranks other than the origin wait for each batch's end asleep (MPI_Test every ms), not
                 in MPI_Wait, leaving an oversubscribed machine's cores to the origin and the server
                 threads; for the owner path only (MPI's passive target needs the target in MPI)
  --epoch-each   latency with an epoch per accumulate (MPI_Win_lock, MPI_Accumulate, MPI_Win_unlock, as
                 ARMCI-MPI calls it) instead of MPI_Accumulate + MPI_Win_flush in one epoch
)";

std::string ratio(const bench::Samples& s, int variant, int base, int field) {
  return base < 0 ? "" : bench::fixed(s.ratio(variant, base, field), 3);
}

void benchmark(const bench::Args& args) {
  const auto sizes = args.sizes(8, std::int64_t{1} << 20);
  const int iters = args.count("--iters", 1000, 1), warmup = args.count("--warmup", 5, 1);
  const int rounds = args.count("--rounds", 7, 1), window = args.count("--window", 64, 1);
  const double batch_seconds = args.count("--batch-ms", 50, 1) * 1e-3;
  const auto completion = args.flag("--epoch-each") ? bench::Completion::unlock : bench::Completion::flush;
  const auto bystanders = args.flag("--idle-asleep") ? bench::Bystanders::asleep : bench::Bystanders::in_mpi;
  const bench::PathWindows windows(args, sizes);
  bench::first_use(windows);
  const std::vector<std::string>& paths = windows.paths();
  auto index = [&](const char* path) {
    const auto found = std::find(paths.begin(), paths.end(), path);
    return found == paths.end() ? -1 : static_cast<int>(found - paths.begin());
  };
  const int native = index("native"), caller = index("caller");
  if (bystanders == bench::Bystanders::asleep && paths != std::vector<std::string>{"owner"})
    throw bench::UsageError("--idle-asleep times the owner path only (--paths owner)");

  const bench::Report report(args, std::string("MPI_Accumulate (MPI_DOUBLE, MPI_SUM) latency (") +
                                       (completion == bench::Completion::unlock ? "each in its own MPI_Win_lock epoch"
                                                                                : "+ MPI_Win_flush each") +
                                       ") and bandwidth (" + std::to_string(window) +
                                       " per MPI_Win_flush), rank 0 -> last rank, passive target, one window per path, "
                                       "paths alternating in one run");
  report.line("windows (" + windows.made_by() + ", " + bench::format_bytes(sizes.back()) +
              " per rank, info shim_accumulate -> the path shim took): " + windows.reported());
  report.line("method: per size " + std::to_string(warmup) + " warm-up accumulates per path size the batches (~" +
              args.text("--batch-ms", "50") + " ms, at most " + std::to_string(iters) + "), then " +
              std::to_string(rounds) +
              " rounds of one batch per path (rotating order); median over rounds of the max "
              "over ranks; x_vs_y = median of same-round ratios; the target checks its window after every batch; "
              "the other ranks wait for a batch's end " +
              (bystanders == bench::Bystanders::asleep ? "asleep (MPI_Test every ms)" : "in MPI_Wait"));
  report.columns(
      {"bytes", "path", "lat_iters", "latency_us", "lat_min_us", "lat_max_us", "lat_vs_native", "lat_vs_caller",
       "bw_windows", "window", "bandwidth_mbs", "bw_min_mbs", "bw_max_mbs", "bw_vs_native", "bw_vs_caller"},
      "Accumulate latency (us per accumulate + flush) and bandwidth (MB/s, 1 MB = 1e6 bytes)");

  for (const std::int64_t bytes : sizes) {
    const std::int64_t n = bytes / 8;
    const auto variants = static_cast<int>(paths.size());
    std::vector<int> lat_count, bw_count;
    for (int p = 0; p < variants; ++p) {
      const bench::Batch lat = bench::accumulate_batch(windows, p, n, warmup, 1, 0, 0, completion, bystanders);
      const bench::Batch bw =
          bench::accumulate_batch(windows, p, n, 1, window, 0, 0, bench::Completion::flush, bystanders);
      lat_count.push_back(bench::batch_size(bench::max_over_ranks(lat.seconds) / warmup, batch_seconds, iters));
      bw_count.push_back(bench::batch_size(bench::max_over_ranks(bw.seconds), batch_seconds, iters));
    }
    const bench::Samples s = bench::alternate(variants, rounds, 2, [&](int p, int) {
      const bench::Batch lat = bench::accumulate_batch(windows, p, n, lat_count[static_cast<std::size_t>(p)], 1, 0, 0,
                                                       completion, bystanders);
      const bench::Batch bw = bench::accumulate_batch(windows, p, n, bw_count[static_cast<std::size_t>(p)], window, 0,
                                                      0, bench::Completion::flush, bystanders);
      if (bench::rank() != bench::kOrigin) return std::vector<double>{0, 0};
      return std::vector<double>{lat.seconds / lat.flushes * 1e6, static_cast<double>(bw.flushes) * window *
                                                                      static_cast<double>(bytes) / bw.seconds * 1e-6};
    });
    for (int p = 0; p < variants; ++p) {
      const auto k = static_cast<std::size_t>(p);
      report.row({std::to_string(bytes), paths[k], std::to_string(lat_count[k]), bench::fixed(s.median(p, 0), 4),
                  bench::fixed(s.min(p, 0), 4), bench::fixed(s.max(p, 0), 4), ratio(s, p, native, 0),
                  ratio(s, p, caller, 0), std::to_string(bw_count[k]), std::to_string(window),
                  bench::fixed(s.median(p, 1), 3), bench::fixed(s.min(p, 1), 3), bench::fixed(s.max(p, 1), 3),
                  ratio(s, p, native, 1), ratio(s, p, caller, 1)});
    }
  }
  report.line(
      "verified: after every batch the target's window held (accumulates) x (1 + i % 7) in every element i "
      "of the range and 0 past it");
}

}  // namespace

int main(int argc, char** argv) { return bench::run("acc_latency", kUsage, argc, argv, benchmark); }
