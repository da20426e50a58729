// Process-wide counters read by the control API and the SHIM_STATS report:
// per collective, algorithm and size class; per operation and path of the
// accumulate family; per operation on mirrored windows. Each thread counts into its own
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
inline constexpr int kAlgorithmSlots = 6;  // the most algorithms any collective has
// "native", "sa", "eco", ...: the collective's algorithm enum, as an int.
std::string_view algorithm_name(Collective collective, int algorithm);

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
// Every counter above. Counts recorded while a reset runs may be lost.
void reset();
Counters total(const Table& table, Collective collective, int algorithm);

// One key=value line per collective, algorithm and size class that saw
// calls, the part of the SHIM_STATS report that scripts read (tools/demo).
// `scope` says whose counts `table` holds.
std::vector<std::string> report_lines(const Table& table, const std::string& scope);

// The accumulate family (request-based and large-count variants count as
// their plain operation), by the path each call took.
enum class AccumulateOp : std::uint8_t { accumulate, get_accumulate, fetch_and_op, compare_and_swap };
inline constexpr int kAccumulateOps = 4;
enum class AccumulatePath : std::uint8_t {
  same_node,  // owner-computes, applied by the caller in the node's shared memory
  server,     // owner-computes, shipped to the target node's server
  caller,     // caller-computes: lock, get, compute, put, unlock
  native,     // MPI's own (a window shim does not manage, or one it leaves native)
};
inline constexpr int kAccumulatePaths = 4;
// `bytes`: target bytes the call updates or fetches.
void record_accumulate(AccumulateOp op, AccumulatePath path, std::int64_t bytes);

// Mirrored windows: the local accesses, and the collective calls.
enum class MirrorOp : std::uint8_t { get, put, acc, zero, merge, merge_patch, merge_sparse, copy_in, copy_out };
inline constexpr int kMirrorOps = 9;
// `rank_zero`: the caller is rank 0 of the window's communicator (a
// collective call then counts one operation). `bytes`: of the range named.
void record_mirror(MirrorOp op, std::int64_t bytes, bool rank_zero);

enum RmaField : int { rma_calls, rma_ops, rma_bytes, kRmaFieldCount };
using RmaCounters = std::array<std::uint64_t, kRmaFieldCount>;
// Plain integers only: the report sums and maximises it over the job as
// one array of std::uint64_t.
struct RmaTable {
  std::array<std::array<RmaCounters, kAccumulatePaths>, kAccumulateOps> accumulate{};
  std::array<RmaCounters, kMirrorOps> mirror{};
};
RmaTable rma_snapshot();

}  // namespace shim::stats
