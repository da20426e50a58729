#include "shim/stats.hpp"

#include <atomic>
#include <bit>
#include <memory>
#include <mutex>

#include "collectives/alltoall_policy.hpp"

namespace shim::stats {

namespace {

// Written by one thread only; atomic so other threads may read it.
using AtomicCounters = std::array<std::atomic<std::uint64_t>, kFieldCount>;
struct ThreadCounters {
  std::array<std::array<AtomicCounters, kSizeClasses>, coll::kAlltoallAlgorithms.size()> rows{};
};

// Blocks outlive their threads: a finished thread's calls still count.
std::mutex g_registry_mutex;
std::vector<std::unique_ptr<ThreadCounters>> g_registry;

ThreadCounters& this_thread_counters() {
  thread_local ThreadCounters* counters = [] {
    std::lock_guard lock(g_registry_mutex);
    g_registry.push_back(std::make_unique<ThreadCounters>());
    return g_registry.back().get();
  }();
  return *counters;
}

}  // namespace

int size_class(std::int64_t block_bytes) {
  if (block_bytes <= 1) return 0;
  return static_cast<int>(std::bit_width(static_cast<std::uint64_t>(block_bytes - 1)));
}

std::string size_class_label(int size_class) { return "<=" + coll::format_bytes(std::int64_t{1} << size_class); }

void record(const AlltoallRecord& r) {
  const auto block = static_cast<std::uint64_t>(r.block_bytes);
  Counters delta{};
  delta[calls] = 1;
  delta[collective_calls] = r.rank_zero ? 1 : 0;
  delta[payload_bytes] = static_cast<std::uint64_t>(r.comm_size) * block;
  if (r.traffic_blocks != nullptr) {
    delta[inter_messages] = static_cast<std::uint64_t>(r.traffic_blocks->inter_messages);
    delta[inter_bytes] = static_cast<std::uint64_t>(r.traffic_blocks->inter_blocks) * block;
    delta[intra_messages] = static_cast<std::uint64_t>(r.traffic_blocks->intra_messages);
    delta[intra_bytes] = static_cast<std::uint64_t>(r.traffic_blocks->intra_blocks) * block;
  }
  delta[flat_inter_messages] = static_cast<std::uint64_t>(r.flat_blocks.inter_messages);
  delta[flat_inter_bytes] = static_cast<std::uint64_t>(r.flat_blocks.inter_blocks) * block;

  AtomicCounters& row = this_thread_counters().rows[static_cast<int>(r.algorithm)][size_class(r.block_bytes)];
  for (int f = 0; f < kFieldCount; ++f) {
    if (delta[f] != 0) row[f].store(row[f].load(std::memory_order_relaxed) + delta[f], std::memory_order_relaxed);
  }
}

Table snapshot() {
  Table table{};
  std::lock_guard lock(g_registry_mutex);
  for (const auto& counters : g_registry) {
    for (std::size_t a = 0; a < table.size(); ++a) {
      for (int c = 0; c < kSizeClasses; ++c) {
        for (int f = 0; f < kFieldCount; ++f) table[a][c][f] += counters->rows[a][c][f].load(std::memory_order_relaxed);
      }
    }
  }
  return table;
}

void reset() {
  std::lock_guard lock(g_registry_mutex);
  for (const auto& counters : g_registry) {
    for (auto& algorithm : counters->rows) {
      for (auto& row : algorithm) {
        for (auto& field : row) field.store(0, std::memory_order_relaxed);
      }
    }
  }
}

Counters total(const Table& table, coll::AlltoallAlgorithm algorithm) {
  Counters sum{};
  for (const Counters& row : table[static_cast<int>(algorithm)]) {
    for (int f = 0; f < kFieldCount; ++f) sum[f] += row[f];
  }
  return sum;
}

std::vector<std::string> report_lines(const Table& table, const std::string& scope) {
  static constexpr std::array<const char*, kFieldCount> kKeys = {
      "calls",       "ops",        "payload_bytes", "inter_msgs",      "inter_bytes",
      "intra_msgs",  "intra_bytes", "flat_inter_msgs", "flat_inter_bytes"};
  std::vector<std::string> lines;
  lines.push_back("stats: MPI_Alltoall, " + scope +
                  ". ops = collective operations; msgs and bytes as each algorithm's schedule sends "
                  "them (n/a: native's own messages are not visible); flat_* = a direct exchange of the same calls");
  for (coll::AlltoallAlgorithm algorithm : coll::kAlltoallAlgorithms) {
    const bool native = algorithm == coll::AlltoallAlgorithm::native;
    for (int c = 0; c < kSizeClasses; ++c) {
      const Counters& row = table[static_cast<int>(algorithm)][c];
      if (row[calls] == 0) continue;
      std::string line = "stats: alltoall algo=" + std::string(name(algorithm)) + " block" + size_class_label(c);
      for (int f = 0; f < kFieldCount; ++f) {
        const bool hidden = native && f >= inter_messages && f <= intra_bytes;
        line += std::string(" ") + kKeys[f] + "=" + (hidden ? std::string("n/a") : std::to_string(row[f]));
      }
      lines.push_back(std::move(line));
    }
  }
  return lines;
}

}  // namespace shim::stats
