// Process-wide alltoall counters, by algorithm and block-size class, read by
// the control API and the SHIM_STATS report. Each thread counts into its own
// block (threads may run collectives on different communicators at once), so
// recording is plain loads and stores rather than locked read-modify-writes:
// on the native path those were most of shim's per-call cost.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/alltoall_algorithm.hpp"
#include "collectives/traffic.hpp"

namespace shim::stats {

enum Field : int {
  calls,             // calls made by this process
  collective_calls,  // calls where this process is rank 0: sums to collective operations
  payload_bytes,     // bytes this process contributed (comm size x block)
  inter_messages,    // as the algorithm's schedule sends them; not visible for native
  inter_bytes,
  intra_messages,
  intra_bytes,
  flat_inter_messages,  // what a flat exchange of the same call sends
  flat_inter_bytes,
  kFieldCount
};
using Counters = std::array<std::uint64_t, kFieldCount>;

// Class c holds block sizes in (2^(c-1), 2^c]; class 0 holds 1 byte.
inline constexpr int kSizeClasses = 64;
int size_class(std::int64_t block_bytes);
std::string size_class_label(int size_class);

struct AlltoallRecord {
  coll::AlltoallAlgorithm algorithm;
  std::int64_t block_bytes;
  bool rank_zero;
  std::int64_t comm_size;
  const coll::Traffic* traffic_blocks;  // nullptr for native
  coll::Traffic flat_blocks;
};
void record(const AlltoallRecord& record);

using Table = std::array<std::array<Counters, kSizeClasses>, coll::kAlltoallAlgorithms.size()>;
Table snapshot();
// Counts recorded while a reset runs may be lost.
void reset();
Counters total(const Table& table, coll::AlltoallAlgorithm algorithm);

// The SHIM_STATS report: one key=value line per algorithm and size class
// that saw calls. `scope` says whose counts `table` holds.
std::vector<std::string> report_lines(const Table& table, const std::string& scope);

}  // namespace shim::stats
