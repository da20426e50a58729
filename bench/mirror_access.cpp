// mirror_access: how long do a get and a put of elements that a REMOTE owner
// (a rank of another mirror node) holds take on a mirrored window
// (shim_mirror_get/put: copies within the node's copy), against MPI_Get and
// MPI_Put + MPI_Win_flush on a distributed array of the same elements?
// Puts write the values already there, so every get can be checked.
#include <shim/shim.h>

#include <array>
#include <cstdint>
#include <cstdlib>

#include "mirror_common.hpp"

namespace {

constexpr std::string_view kUsage = R"(
  --min BYTES        smallest transfer, >= 8 (elements are doubles); default 8
  --max BYTES        largest transfer; default 1M
  --rounds R         rounds per size, each one batch of every method; default 9
  --warmup N         untimed operations per method and size, which also size the batches; default 10
  --batch-ms MS      target length of one batch; default 20
  --max-iters N      at most N operations per batch; default 100000
  --origins WHO      all: every rank accesses its remote owner at once; one: only rank 0 (OSU style); default all
  --buffer-offset B  the user buffer starts B bytes (0..4088, a multiple of 8) past a page; default 0
)";

enum Method : int { native_get, mirror_get, native_put, mirror_put, kMethods };
constexpr std::array<const char*, kMethods> kNames = {"MPI_Get+flush", "mirror_get", "MPI_Put+flush", "mirror_put"};

double value_of(std::int64_t i) { return static_cast<double>(i) + 0.25; }

struct Setup {
  shim_distributed array = nullptr;
  shim_mirror mirror = nullptr;
  MPI_Win window = MPI_WIN_NULL;
  int target = 0;          // the remote owner
  std::int64_t first = 0;  // its block's first element
  double* buffer = nullptr;
};

// n doubles, `iterations` times; returns seconds.
double batch(const Setup& s, Method method, std::int64_t n, int iterations) {
  const int count = static_cast<int>(n);
  const double start = MPI_Wtime();
  for (int i = 0; i < iterations; ++i) {
    if (method == native_get) MPI_Get(s.buffer, count, MPI_DOUBLE, s.target, 0, count, MPI_DOUBLE, s.window);
    if (method == native_put) MPI_Put(s.buffer, count, MPI_DOUBLE, s.target, 0, count, MPI_DOUBLE, s.window);
    if (method == native_get || method == native_put) MPI_Win_flush(s.target, s.window);
    if (method == mirror_get) shim_mirror_get(s.mirror, s.first, n, s.buffer);
    if (method == mirror_put) shim_mirror_put(s.mirror, s.first, n, s.buffer);
  }
  return MPI_Wtime() - start;
}

void verify(const Setup& s, std::int64_t n, const std::string& what) {
  for (std::int64_t i = 0; i < n; ++i)
    if (s.buffer[i] != value_of(s.first + i))
      bench::fail("WRONG RESULT after " + what + ": rank " + std::to_string(bench::rank()) + ", element " +
                  std::to_string(s.first + i) + " (owner rank " + std::to_string(s.target) + ")");
}

// The first rank of another mirror node, counting on from this rank by its
// node's size (the same local rank on the next node when nodes are
// consecutive ranks, so targets differ within a node).
int remote_owner(const bench::MirrorNode& node) {
  std::vector<int> node_of(static_cast<std::size_t>(bench::ranks()));
  MPI_Allgather(&node.node, 1, MPI_INT, node_of.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (int d = 0; d < bench::ranks(); ++d) {
    const int candidate = (bench::rank() + node.local_size + d) % bench::ranks();
    if (node_of[static_cast<std::size_t>(candidate)] != node.node) return candidate;
  }
  return -1;
}

void benchmark(const bench::Args& args) {
  const auto sizes = args.sizes(8, std::int64_t{1} << 20);
  const int rounds = args.count("--rounds", 9, 1), warmup = args.count("--warmup", 10, 1);
  const double batch_seconds = args.count("--batch-ms", 20, 1) * 1e-3;
  const int max_iters = args.count("--max-iters", 100000, 1);
  const std::string origins = args.choose("--origins", {"all", "one"}, "all").front();
  const int offset = args.count("--buffer-offset", 0, 0);
  if (offset > 4088 || offset % 8 != 0) throw bench::UsageError("--buffer-offset: a multiple of 8 from 0 to 4088");
  if (sizes.front() < 8) throw bench::UsageError("--min must be at least 8 (one double)");
  const bench::Report report(
      args,
      "get/put of doubles a remote owner holds: MPI_Get/MPI_Put + MPI_Win_flush on a distributed "
      "array's window (MPI_Win_lock_all held) vs shim_mirror_get/put on this node's copy; alternating");
  const bench::MirrorNode node = bench::describe_mirror_nodes(report);
  if (node.nodes < 2) throw bench::UsageError("one mirror node only: run on two hosts, or set SHIM_NODE_SIZE");

  // Every rank owns --max bytes of the array: any transfer fits a block.
  Setup s;
  const std::int64_t per_rank = sizes.back() / 8, count = per_rank * bench::ranks();
  bench::check(shim_distributed_create(count, MPI_DOUBLE, MPI_COMM_WORLD, &s.array), "shim_distributed_create");
  bench::check(shim_mirror_create(count, MPI_DOUBLE, MPI_COMM_WORLD, &s.mirror), "shim_mirror_create");
  s.window = bench::window_of(s.array);
  MPI_Count first = 0, held = 0;
  bench::check(shim_distributed_range(s.array, bench::rank(), &first, &held), "shim_distributed_range");
  for (MPI_Count i = 0; i < held; ++i) bench::local_block(s.array)[i] = value_of(first + i);
  MPI_Barrier(MPI_COMM_WORLD);
  const double copy_start = MPI_Wtime();
  bench::check(shim_mirror_copy_from_distributed(s.mirror, s.array), "shim_mirror_copy_from_distributed");
  const double copy_seconds = bench::max_over_ranks(MPI_Wtime() - copy_start);
  s.target = remote_owner(node);
  bench::check(shim_distributed_range(s.array, s.target, &first, &held), "shim_distributed_range");
  s.first = first;
  const bool active = origins == "all" || bench::rank() == 0;
  unsigned char* const allocation = bench::page_aligned(static_cast<std::size_t>(sizes.back() + 4096)).release();
  s.buffer = reinterpret_cast<double*>(allocation + offset);
  const auto copy_offset =
      static_cast<int>(reinterpret_cast<std::uintptr_t>(bench::mirror_address(s.mirror, s.first)) % 4096);

  std::vector<int> targets(static_cast<std::size_t>(bench::ranks()));
  MPI_Gather(&s.target, 1, MPI_INT, targets.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string map;
  for (std::size_t r = 0; r < targets.size(); ++r) map += " " + std::to_string(r) + "->" + std::to_string(targets[r]);
  report.line("remote owners (rank->owner):" + map + "; origins: " +
              (origins == "one" ? "rank 0 only, the others wait in MPI_Barrier" : "every rank at once"));
  report.line("array: " + bench::format_bytes(count * 8) + ", " + bench::format_bytes(per_rank * 8) +
              " per rank; node copy " + (bench::copy_is_contiguous(s.mirror) ? "contiguous" : "in per-holder pieces") +
              "; copy_from_distributed took " + bench::us(copy_seconds * 1e6) + " us");
  report.line("alignment (rank 0): user buffer at page offset " + std::to_string(offset) +
              ", the target elements in the node copy at " + std::to_string(copy_offset) +
              " (glibc's memcpy on some CPUs is many times slower when destination - source is 8..16 mod 4096)");
  report.line("method: per size " + std::to_string(warmup) + " warm-up operations per method size its batches (~" +
              args.text("--batch-ms", "20") + " ms), then " + std::to_string(rounds) +
              " rounds of one batch per "
              "method (rotating order, MPI_Barrier before each); median over rounds of the max over ranks; a "
              "mirrored put reaches other nodes only with a merge (bench/mirror_merge)");
  report.columns({"bytes", "operation", "method", "iterations", "rounds", "latency_us", "min_us", "max_us", "mb_per_s",
                  "native_over_mirror"},
                 "Get and put of a remote owner's elements, us per operation");

  bench::check(MPI_Win_lock_all(0, s.window), "MPI_Win_lock_all");
  for (const std::int64_t bytes : sizes) {
    const std::int64_t n = bytes / 8;
    for (std::int64_t i = 0; i < n; ++i) s.buffer[i] = value_of(s.first + i);
    std::vector<double> estimate(kMethods, 0.0);
    for (int m = 0; m < kMethods; ++m) {
      MPI_Barrier(MPI_COMM_WORLD);
      if (active) estimate[static_cast<std::size_t>(m)] = batch(s, static_cast<Method>(m), n, warmup) / warmup;
      if (m == mirror_put) shim_mirror_sync(s.mirror);
    }
    estimate = bench::max_over_ranks(estimate);
    std::array<int, kMethods> iterations{};
    for (int m = 0; m < kMethods; ++m)
      iterations[static_cast<std::size_t>(m)] =
          bench::batch_size(estimate[static_cast<std::size_t>(m)], batch_seconds, max_iters);
    const bench::Samples seconds = bench::alternate(kMethods, rounds, 1, [&](int m, int) {
      const int k = iterations[static_cast<std::size_t>(m)];
      MPI_Barrier(MPI_COMM_WORLD);
      const double t = active ? batch(s, static_cast<Method>(m), n, k) / k : 0.0;
      // Outside the timing: order the puts before anybody reads (the
      // mirror's rule), and check what the gets read.
      if (m == mirror_put) shim_mirror_sync(s.mirror);
      if (active && (m == native_get || m == mirror_get)) verify(s, n, kNames[static_cast<std::size_t>(m)]);
      return std::vector<double>{t};
    });
    for (int m = 0; m < kMethods; ++m) {
      const bool get = m == native_get || m == mirror_get;
      const double latency = seconds.median(m) * 1e6;
      report.row(
          {std::to_string(bytes), get ? "get" : "put", kNames[static_cast<std::size_t>(m)],
           std::to_string(iterations[static_cast<std::size_t>(m)]), std::to_string(rounds), bench::fixed(latency, 4),
           bench::fixed(seconds.min(m) * 1e6, 4), bench::fixed(seconds.max(m) * 1e6, 4),
           bench::fixed(static_cast<double>(bytes) / latency, 2),
           bench::fixed(get ? seconds.ratio(native_get, mirror_get) : seconds.ratio(native_put, mirror_put), 3)});
    }
  }
  // The whole target block, both ways, after every put.
  shim_mirror_sync(s.mirror);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Get(s.buffer, static_cast<int>(per_rank), MPI_DOUBLE, s.target, 0, static_cast<int>(per_rank), MPI_DOUBLE,
          s.window);
  MPI_Win_flush(s.target, s.window);
  verify(s, per_rank, "the run (MPI_Get of the whole target block)");
  shim_mirror_get(s.mirror, s.first, per_rank, s.buffer);
  verify(s, per_rank, "the run (shim_mirror_get of the whole target block)");
  MPI_Win_unlock_all(s.window);
  MPI_Barrier(MPI_COMM_WORLD);
  report.line("verified: the last get of every batch and, at the end, the whole target block (both ways)");
  std::free(allocation);
  bench::check(shim_mirror_free(&s.mirror), "shim_mirror_free");
  bench::check(shim_distributed_free(&s.array), "shim_distributed_free");
}

}  // namespace

int main(int argc, char** argv) { return bench::run("mirror_access", kUsage, argc, argv, benchmark); }
