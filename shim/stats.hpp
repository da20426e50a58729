// Process-wide counters per collective, algorithm and size class, read by the
// control API and the SHIM_STATS report. Each thread counts into its own
// block (threads may run collectives on different communicators at once), so
// recording is plain loads and stores rather than locked read-modify-writes:
// on the native path those were most of shim's per-call cost.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shim::stats {

enum class Collective : std::uint8_t { alltoall, bcast };
inline constexpr int kCollectives = 2;
inline constexpr int kAlgorithmSlots = 4;  // the most algorithms any collective has

enum Field : int {
  calls,             // calls made by this process
  collective_calls,  // calls where this process is rank 0: sums to collective operations
  payload_bytes,     // alltoall: bytes this process contributed; bcast: the message
  inter_messages,    // sent by this process, as the algorithm sends them; not visible for native
  inter_bytes,
  intra_messages,
  intra_bytes,
  flat_inter_messages,  // alltoall: what a flat exchange of the same call sends
  flat_inter_bytes,
  kFieldCount
};
using Counters = std::array<std::uint64_t, kFieldCount>;

// Class c holds sizes in (2^(c-1), 2^c]; class 0 holds 1 byte.
inline constexpr int kSizeClasses = 64;
int size_class(std::int64_t bytes);
std::string size_class_label(int size_class);

struct Record {
  Collective collective;
  int algorithm;            // the collective's algorithm enum, as an int
  std::int64_t size_bytes;  // alltoall: bytes per block; bcast: bytes of the message
  bool rank_zero;
  std::int64_t payload_bytes;
  bool traffic_visible;  // false for native MPI, whose messages shim cannot see
  std::int64_t inter_messages = 0, inter_bytes = 0, intra_messages = 0, intra_bytes = 0;
  std::int64_t flat_inter_messages = 0, flat_inter_bytes = 0;
};
void record(const Record& record);

using Table = std::array<std::array<std::array<Counters, kSizeClasses>, kAlgorithmSlots>, kCollectives>;
Table snapshot();
// Counts recorded while a reset runs may be lost.
void reset();
Counters total(const Table& table, Collective collective, int algorithm);

// The SHIM_STATS report: one key=value line per collective, algorithm and
// size class that saw calls. `scope` says whose counts `table` holds.
std::vector<std::string> report_lines(const Table& table, const std::string& scope);

}  // namespace shim::stats
