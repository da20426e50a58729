// alltoall_latency: how long does MPI_Alltoall take with native MPI and with
// each of shim's algorithms, and how many messages and bytes does each send
// between nodes? OSU-style, all algorithms alternating in one run.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>

#include "collective.hpp"

namespace {

constexpr std::string_view kUsage = R"(
  --min BYTES        smallest block (bytes each process sends to each process); default 1
  --max BYTES        largest block; default 1M
  --iters N|small    calls per batch up to 8 KiB blocks, fewer above (at least min(N, 20)); default 1000.
                     small: 4 calls, 1 warm-up and 3 rounds unless given, for counts from oversubscribed runs
  --warmup N         untimed calls per algorithm and size; default 10
  --rounds R         rounds per size, each one batch of every algorithm; default 7
  --algorithms LIST  from native,auto,sa,rd,leader,linear; default all (native is required)
  --nodes N          nodes for the per-node figures; default from SHIM_NODE_SIZE, else the hosts
)";

constexpr std::int64_t kFullBatchMaxBytes = 8192;

// The byte rank `from` sends to rank `to` at offset i of its block in batch
// `salt`: a block left over from an earlier batch, or misplaced, fails.
unsigned char expected_byte(int from, int to, std::int64_t i, std::uint32_t salt) {
  return static_cast<unsigned char>(bench::mix((static_cast<std::uint64_t>(from) << 40) ^
                                               (static_cast<std::uint64_t>(to) << 20) ^ static_cast<std::uint64_t>(i) ^
                                               (static_cast<std::uint64_t>(salt) << 48)));
}

// --nodes, else SHIM_NODE_SIZE as shim reads it (rank 0's), else the hosts.
std::pair<int, std::string> node_count(const bench::Args& args, const bench::Machine& machine) {
  if (args.given("--nodes")) return {args.count("--nodes", 1, 1), "--nodes"};
  const char* setting = std::getenv("SHIM_NODE_SIZE");
  int node_size = setting == nullptr ? 0 : std::atoi(setting);
  MPI_Bcast(&node_size, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (node_size > 0)
    return {(bench::ranks() + node_size - 1) / node_size,
            "ranks in blocks of SHIM_NODE_SIZE=" + std::to_string(node_size)};
  return {machine.hosts, "hosts found by MPI_COMM_TYPE_SHARED"};
}

void benchmark(const bench::Args& args) {
  const int rank = bench::rank(), size = bench::ranks();
  const bool small = args.text("--iters", "") == "small";
  const int iters = small ? 4 : args.count("--iters", 1000, 1);
  const int warmup = args.count("--warmup", small ? 1 : 10, 0);
  const int rounds = args.count("--rounds", small ? 3 : 7, 1);
  const auto sizes = args.sizes(1, std::int64_t{1} << 20);
  const auto algorithms = bench::chosen_algorithms(args, bench::Operation::alltoall);
  if (args.count("--nodes", 1, 1) > size) throw bench::UsageError("--nodes: more nodes than ranks");
  if (sizes.back() * size > std::numeric_limits<int>::max())
    throw bench::UsageError("--max: the buffers (ranks x block) would exceed 2 GiB");
  int enabled = 0;
  bench::check(shim_get_enabled(MPI_COMM_WORLD, &enabled), "shim_get_enabled");
  if (!enabled) throw bench::UsageError("shim is switched off (SHIM_ENABLE=0): every column would be native");

  const bench::Report report(args,
                             "MPI_Alltoall of MPI_BYTE blocks on MPI_COMM_WORLD, native MPI (PMPI_Alltoall) vs shim's "
                             "algorithms, alternating in one run");
  const bench::Machine& machine = report.machine();
  const auto [nodes, nodes_source] = node_count(args, machine);
  report.line("nodes " + std::to_string(nodes) + " (" + nodes_source + ") for the per-node traffic");
  report.line("method: " + std::to_string(warmup) + " warm-up calls per algorithm and size, then " +
              std::to_string(rounds) +
              " rounds of one batch per algorithm (rotating order); latency = median over "
              "rounds of the max over ranks of the mean per call; shim_over_native = median of same-round ratios; "
              "traffic from shim's counters per call per node; every batch's result is checked");
  report.columns({"bytes", "algorithm", "ran", "iterations", "rounds", "latency_us", "min_us", "max_us",
                  "shim_over_native", "inter_msgs_per_node", "inter_bytes_per_node", "intra_msgs_per_node",
                  "intra_bytes_per_node", "flat_inter_msgs_per_node", "flat_inter_bytes_per_node", "traffic"},
                 "MPI_Alltoall: latency (us per call) and traffic per call per node");

  const auto buffer_bytes = static_cast<std::size_t>(sizes.back()) * static_cast<std::size_t>(size);
  const bench::Buffer sendbuf = bench::page_aligned(buffer_bytes), recvbuf = bench::page_aligned(buffer_bytes);
  // shim builds its node hierarchy on a communicator's first call; this
  // keeps that one-time cost out of the batches even with --warmup 0.
  MPI_Alltoall(sendbuf.get(), 1, MPI_BYTE, recvbuf.get(), 1, MPI_BYTE, MPI_COMM_WORLD);

  std::uint32_t salt = 0;
  for (const std::int64_t bytes : sizes) {
    const int count = static_cast<int>(bytes);
    bench::Collective c{bench::Operation::alltoall, algorithms, {}, {}, {}};
    c.prepare = [&](std::uint32_t s) {
      for (int to = 0; to < size; ++to)
        for (std::int64_t i = 0; i < bytes; ++i) sendbuf[to * bytes + i] = expected_byte(rank, to, i, s);
      std::memset(recvbuf.get(), 0, static_cast<std::size_t>(bytes) * static_cast<std::size_t>(size));
    };
    c.call = [&](int id) {
      auto* call = id == SHIM_ALLTOALL_NATIVE ? &PMPI_Alltoall : &MPI_Alltoall;
      call(sendbuf.get(), count, MPI_BYTE, recvbuf.get(), count, MPI_BYTE, MPI_COMM_WORLD);
    };
    c.verify = [&](std::uint32_t s, const std::string& what) {
      for (int from = 0; from < size; ++from)
        for (std::int64_t i = 0; i < bytes; ++i)
          if (recvbuf[from * bytes + i] != expected_byte(from, rank, i, s))
            bench::fail("WRONG RESULT with " + what + ", block " + bench::format_bytes(bytes) + ": rank " +
                        std::to_string(rank) + ", byte " + std::to_string(i) + " of the block from rank " +
                        std::to_string(from));
    };
    const int iterations =
        bytes <= kFullBatchMaxBytes
            ? iters
            : static_cast<int>(std::max<std::int64_t>(std::min(iters, 20), iters * kFullBatchMaxBytes / bytes));
    const bench::Measured m = bench::measure(c, iterations, std::min(warmup, iterations), rounds, salt);

    // Per call per node. A flat exchange's figures are the same whoever ran
    // the call; rows shim did not count (the PMPI baseline, native) show them.
    auto per_node = [&](const shim_counters& c, std::uint64_t value) {
      const double calls = static_cast<double>(c.collective_calls) * nodes;
      return bench::format_number(calls == 0 ? 0.0 : static_cast<double>(value) / calls);
    };
    shim_counters flat{};
    for (int v = 0; v < static_cast<int>(algorithms.size()); ++v)
      if (m.total(v).collective_calls > 0) flat = m.total(v);
    for (int v = 0; v < static_cast<int>(algorithms.size()); ++v) {
      const shim_counters mine = m.total(v);
      const bool counted = m.counted(v);
      report.row(
          {std::to_string(bytes), algorithms[static_cast<std::size_t>(v)].name, m.ran(v), std::to_string(iterations),
           std::to_string(rounds), bench::fixed(m.seconds.median(v) * 1e6, 3), bench::fixed(m.seconds.min(v) * 1e6, 3),
           bench::fixed(m.seconds.max(v) * 1e6, 3), bench::fixed(m.seconds.ratio(v, 0), 4),
           counted ? per_node(mine, mine.inter_node_messages) : per_node(flat, flat.flat_inter_node_messages),
           counted ? per_node(mine, mine.inter_node_bytes) : per_node(flat, flat.flat_inter_node_bytes),
           counted ? per_node(mine, mine.intra_node_messages) : "",
           counted ? per_node(mine, mine.intra_node_bytes) : "", per_node(flat, flat.flat_inter_node_messages),
           per_node(flat, flat.flat_inter_node_bytes), counted ? "counted" : "flat (native: not visible to shim)"});
    }
  }
}

}  // namespace

int main(int argc, char** argv) { return bench::run("alltoall_latency", kUsage, argc, argv, benchmark); }
