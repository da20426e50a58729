// bcast_latency: how long does MPI_Bcast take with native MPI and with each
// of shim's algorithms, and how much does each send between nodes?
// OSU-style, all algorithms alternating in one run; --single runs one alone
// for a fixed number of calls, so that a tool outside (bench/bcast_links.py)
// can attribute interface byte counters to it.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "collective.hpp"

namespace {

constexpr std::string_view kUsage = R"(
  --min BYTES        smallest message; default 1
  --max BYTES        largest message; default 4M
  --iters N          calls per batch; default 1000, fewer for large messages: at most what moves about 0.5 s
                     of data over a 100 Mbit/s link (6.25 MB / message size), at least 1
  --fixed-iters N    exactly N calls per batch at every size (instead of --iters)
  --warmup N         untimed calls per algorithm and size (at most one batch's); default 10
  --rounds R         rounds per size, each one batch of every algorithm; default 7
  --root R           the broadcasting rank; default 0
  --algorithms LIST  from native,auto,eco,twolevel,scatter-allgather; default all (native is required)
  --single ALG       only ALG, no baseline and no ratios: to count its traffic from outside
)";

// Large broadcasts are bound by the slowest link they cross; the emulated
// cluster's router links run at 100 Mbit/s.
constexpr double kBatchLinkBytes = 0.5 * 100e6 / 8;

// Byte i of the message in batch `salt`: 8 bytes per hash keeps checking
// 4 MiB on every rank cheap.
unsigned char expected_byte(std::int64_t i, int root, std::uint32_t salt) {
  const std::uint64_t x = bench::mix(static_cast<std::uint64_t>(i >> 3) ^ (static_cast<std::uint64_t>(root) << 40) ^
                                     (static_cast<std::uint64_t>(salt) << 48));
  return static_cast<unsigned char>(x >> ((i & 7) * 8));
}

void benchmark(const bench::Args& args) {
  const int rank = bench::rank();
  const auto sizes = args.sizes(1, std::int64_t{4} << 20);
  if (args.given("--iters") && args.given("--fixed-iters")) throw bench::UsageError("give --iters or --fixed-iters");
  const int iters = args.count("--fixed-iters", args.count("--iters", 1000, 1), 1);
  const int rounds = args.count("--rounds", 7, 1);
  const int root = args.count("--root", 0, 0);
  const bool single = args.given("--single");
  const auto algorithms = bench::chosen_algorithms(args, bench::Operation::bcast);
  if (root >= bench::ranks())
    throw bench::UsageError("--root: there are only " + std::to_string(bench::ranks()) + " ranks");
  int enabled = 0;
  bench::check(shim_get_enabled(MPI_COMM_WORLD, &enabled), "shim_get_enabled");
  if (!enabled && (algorithms.size() > 1 || algorithms.front().name != "native"))
    throw bench::UsageError("shim is switched off (SHIM_ENABLE=0): every shim column would be native");

  const bench::Report report(
      args,
      "MPI_Bcast of MPI_BYTE messages from root " + std::to_string(root) + " on MPI_COMM_WORLD, " +
          (single ? "only " + algorithms.front().name : "native MPI (PMPI_Bcast) vs shim's algorithms, alternating"));
  const bench::Machine& machine = report.machine();
  if (machine.max_ranks_per_machine > machine.cores)
    report.line(
        "a broadcast over links far slower than that (the emulated 100 Mbit/s router links: 256 KiB and "
        "more) is link-bound, and its time does compare the algorithms");
  report.line("method: up to " + args.text("--warmup", "10") + " warm-up calls per algorithm and size, then " +
              std::to_string(rounds) +
              " rounds of one batch per algorithm (rotating order); latency = median over "
              "rounds of the max over ranks of the mean per call; shim_over_native = median of same-round ratios; "
              "every rank checks every batch's message");
  report.columns({"bytes", "algorithm", "ran", "iterations", "rounds", "latency_us", "min_us", "max_us",
                  "shim_over_native", "inter_msgs_per_call", "inter_bytes_per_call"},
                 "MPI_Bcast: latency (us per call) and inter-node traffic per call (n/a: MPICH's own, not visible)");

  const bench::Buffer buffer = bench::page_aligned(static_cast<std::size_t>(sizes.back()));
  bench::Collective c{bench::Operation::bcast, algorithms, {}, {}, {}};
  int count = 1;
  c.call = [&](int id) {
    auto* call = id == SHIM_BCAST_NATIVE ? &PMPI_Bcast : &MPI_Bcast;
    call(buffer.get(), count, MPI_BYTE, root, MPI_COMM_WORLD);
  };
  // shim builds its hierarchy and each algorithm's tree on first use; this
  // keeps those one-time costs out of the batches even with --warmup 0.
  for (const bench::Algorithm& a : algorithms) {
    bench::select(bench::Operation::bcast, a.id);
    c.call(a.id);
  }
  // Everyone but the root starts from zeros, so a rank the broadcast missed
  // fails the check.
  c.prepare = [&](std::uint32_t salt) {
    for (std::int64_t i = 0; i < count; ++i) buffer[i] = rank == root ? expected_byte(i, root, salt) : 0;
  };
  c.verify = [&](std::uint32_t salt, const std::string& what) {
    for (std::int64_t i = 0; i < count; ++i)
      if (buffer[i] != expected_byte(i, root, salt))
        bench::fail("WRONG RESULT with " + what + ", message " + bench::format_bytes(count) + ": rank " +
                    std::to_string(rank) + ", byte " + std::to_string(i));
  };

  std::uint32_t salt = 0;
  for (const std::int64_t bytes : sizes) {
    count = static_cast<int>(bytes);
    const int iterations =
        args.given("--fixed-iters")
            ? iters
            : static_cast<int>(std::clamp<std::int64_t>(static_cast<std::int64_t>(kBatchLinkBytes / bytes), 1, iters));
    const bench::Measured m =
        bench::measure(c, iterations, std::min(args.count("--warmup", 10, 0), iterations), rounds, salt);
    for (int v = 0; v < static_cast<int>(algorithms.size()); ++v) {
      const shim_counters total = m.total(v);
      const bool counted = m.counted(v) && total.collective_calls > 0;
      const double per = counted ? 1.0 / static_cast<double>(total.collective_calls) : 0;
      report.row({std::to_string(bytes), algorithms[static_cast<std::size_t>(v)].name, m.ran(v),
                  std::to_string(iterations), std::to_string(rounds), bench::fixed(m.seconds.median(v) * 1e6, 3),
                  bench::fixed(m.seconds.min(v) * 1e6, 3), bench::fixed(m.seconds.max(v) * 1e6, 3),
                  single ? "" : bench::fixed(m.seconds.ratio(v, 0), 4),
                  counted ? bench::format_number(static_cast<double>(total.inter_node_messages) * per) : "n/a",
                  counted ? bench::format_number(static_cast<double>(total.inter_node_bytes) * per) : "n/a"});
    }
  }
}

}  // namespace

int main(int argc, char** argv) { return bench::run("bcast_latency", kUsage, argc, argv, benchmark); }
