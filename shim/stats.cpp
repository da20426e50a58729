#include "shim/stats.hpp"

#include <atomic>
#include <bit>
#include <memory>
#include <mutex>

#include "collectives/alltoall_algorithm.hpp"
#include "collectives/alltoall_policy.hpp"
#include "collectives/bcast_algorithm.hpp"
#include "common/format.hpp"

namespace shim::stats {

namespace {

static_assert(coll::kAlltoallAlgorithms.size() <= kAlgorithmSlots && coll::kBcastAlgorithms.size() <= kAlgorithmSlots);
static_assert(static_cast<int>(coll::AlltoallAlgorithm::native) == 0 &&
              static_cast<int>(coll::BcastAlgorithm::native) == 0);

// Written by one thread only; atomic so other threads may read it.
using AtomicCounters = std::array<std::atomic<std::uint64_t>, kFieldCount>;
using AtomicRmaCounters = std::array<std::atomic<std::uint64_t>, kRmaFieldCount>;
struct ThreadCounters {
  std::array<std::array<std::array<AtomicCounters, kSizeClasses>, kAlgorithmSlots>, kCollectives> rows{};
  std::array<std::array<AtomicRmaCounters, kAccumulatePaths>, kAccumulateOps> accumulate{};
  std::array<AtomicRmaCounters, kMirrorOps> mirror{};
};

// Only the owning thread writes, so a load and a store suffice.
void add(std::atomic<std::uint64_t>& counter, std::uint64_t delta) {
  if (delta != 0) counter.store(counter.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
}

void add_rma(AtomicRmaCounters& row, bool counts_op, std::int64_t bytes) {
  add(row[rma_calls], 1);
  if (!counts_op) return;
  add(row[rma_ops], 1);
  add(row[rma_bytes], static_cast<std::uint64_t>(bytes));
}

RmaCounters read_rma(const AtomicRmaCounters& row) {
  RmaCounters values{};
  for (int f = 0; f < kRmaFieldCount; ++f) values[f] = row[f].load(std::memory_order_relaxed);
  return values;
}

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

std::string_view collective_name(int collective) {
  return static_cast<Collective>(collective) == Collective::alltoall ? "alltoall" : "bcast";
}

}  // namespace

std::string_view algorithm_name(Collective collective, int algorithm) {
  if (collective == Collective::alltoall) return name(static_cast<coll::AlltoallAlgorithm>(algorithm));
  return name(static_cast<coll::BcastAlgorithm>(algorithm));
}

int size_class(std::int64_t bytes) {
  if (bytes <= 1) return 0;
  return static_cast<int>(std::bit_width(static_cast<std::uint64_t>(bytes - 1)));
}

std::string size_class_label(int size_class) { return "<=" + format_bytes(std::int64_t{1} << size_class); }

void record(const Record& r) {
  Counters delta{};
  delta[calls] = 1;
  delta[collective_calls] = r.rank_zero ? 1 : 0;
  delta[payload_bytes] = static_cast<std::uint64_t>(r.payload_bytes);
  if (r.traffic_visible) {
    delta[inter_messages] = static_cast<std::uint64_t>(r.inter_messages);
    delta[inter_bytes] = static_cast<std::uint64_t>(r.inter_bytes);
    delta[intra_messages] = static_cast<std::uint64_t>(r.intra_messages);
    delta[intra_bytes] = static_cast<std::uint64_t>(r.intra_bytes);
  }
  delta[flat_inter_messages] = static_cast<std::uint64_t>(r.flat_inter_messages);
  delta[flat_inter_bytes] = static_cast<std::uint64_t>(r.flat_inter_bytes);

  AtomicCounters& row =
      this_thread_counters().rows[static_cast<int>(r.collective)][r.algorithm][size_class(r.size_bytes)];
  for (int f = 0; f < kFieldCount; ++f) add(row[f], delta[f]);
}

void record_accumulate(AccumulateOp op, AccumulatePath path, std::int64_t bytes) {
  add_rma(this_thread_counters().accumulate[static_cast<int>(op)][static_cast<int>(path)], true, bytes);
}

void record_mirror(MirrorOp op, std::int64_t bytes, bool rank_zero) {
  const bool local = op == MirrorOp::get || op == MirrorOp::put || op == MirrorOp::acc;
  add_rma(this_thread_counters().mirror[static_cast<int>(op)], local || rank_zero, bytes);
}

RmaTable rma_snapshot() {
  RmaTable table{};
  std::lock_guard lock(g_registry_mutex);
  for (const auto& counters : g_registry) {
    for (int o = 0; o < kAccumulateOps; ++o) {
      for (int p = 0; p < kAccumulatePaths; ++p) {
        const RmaCounters row = read_rma(counters->accumulate[o][p]);
        for (int f = 0; f < kRmaFieldCount; ++f) table.accumulate[o][p][f] += row[f];
      }
    }
    for (int m = 0; m < kMirrorOps; ++m) {
      const RmaCounters row = read_rma(counters->mirror[m]);
      for (int f = 0; f < kRmaFieldCount; ++f) table.mirror[m][f] += row[f];
    }
  }
  return table;
}

Table snapshot() {
  Table table{};
  std::lock_guard lock(g_registry_mutex);
  for (const auto& counters : g_registry) {
    for (int c = 0; c < kCollectives; ++c) {
      for (int a = 0; a < kAlgorithmSlots; ++a) {
        for (int s = 0; s < kSizeClasses; ++s) {
          for (int f = 0; f < kFieldCount; ++f) {
            table[c][a][s][f] += counters->rows[c][a][s][f].load(std::memory_order_relaxed);
          }
        }
      }
    }
  }
  return table;
}

void reset() {
  std::lock_guard lock(g_registry_mutex);
  for (const auto& counters : g_registry) {
    for (auto& collective : counters->rows) {
      for (auto& algorithm : collective) {
        for (auto& row : algorithm) {
          for (auto& field : row) field.store(0, std::memory_order_relaxed);
        }
      }
    }
    for (auto& op : counters->accumulate) {
      for (auto& row : op) {
        for (auto& field : row) field.store(0, std::memory_order_relaxed);
      }
    }
    for (auto& row : counters->mirror) {
      for (auto& field : row) field.store(0, std::memory_order_relaxed);
    }
  }
}

Counters total(const Table& table, Collective collective, int algorithm) {
  Counters sum{};
  for (const Counters& row : table[static_cast<int>(collective)][algorithm]) {
    for (int f = 0; f < kFieldCount; ++f) sum[f] += row[f];
  }
  return sum;
}

std::vector<std::string> report_lines(const Table& table, const std::string& scope) {
  static constexpr std::array<const char*, kFieldCount> kKeys = {
      "calls",      "ops",         "payload_bytes",   "inter_msgs",      "inter_bytes",
      "intra_msgs", "intra_bytes", "flat_inter_msgs", "flat_inter_bytes"};
  std::vector<std::string> lines;
  lines.push_back("stats: " + scope +
                  ". ops = collective operations; msgs and bytes as each algorithm sends them (n/a: native's own "
                  "messages are not visible); flat_* = a direct exchange of the same alltoall calls");
  for (int c = 0; c < kCollectives; ++c) {
    for (int a = 0; a < kAlgorithmSlots; ++a) {
      const bool native = a == 0;  // native is algorithm 0 of every collective
      for (int s = 0; s < kSizeClasses; ++s) {
        const Counters& row = table[c][a][s];
        if (row[calls] == 0) continue;
        std::string line = "stats: " + std::string(collective_name(c)) +
                           " algo=" + std::string(algorithm_name(static_cast<Collective>(c), a)) +
                           (c == 0 ? " block" : " size") + size_class_label(s);
        for (int f = 0; f < kFieldCount; ++f) {
          const bool hidden = native && f >= inter_messages && f <= intra_bytes;
          line += std::string(" ") + kKeys[f] + "=" + (hidden ? std::string("n/a") : std::to_string(row[f]));
        }
        lines.push_back(std::move(line));
      }
    }
  }
  return lines;
}

}  // namespace shim::stats
