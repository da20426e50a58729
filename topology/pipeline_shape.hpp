// The shape of a pipelined broadcast on a measured network (SHIM_PROFILE):
// how long its segments are, and how many children a node feeds inside a
// subnet. No MPI.
#pragma once

#include <cstdint>
#include <optional>

#include "topology/network_profile.hpp"

namespace shim::topo {

// The segments ECO's broadcasts are cut into, by message size. nullopt when
// the profile cannot say: one subnet, or one message size measured.
// - Long messages: segments long enough that sending one over the slowest
//   link between subnets takes kSegmentCostMultiple times a message's fixed
//   cost there (so that cost is at most a fifth of the time), and no longer,
//   so the tree's levels overlap: a power of two within [kMinSegmentBytes,
//   kMaxSegmentBytes].
// - Shorter ones: a pipeline of few segments spends most of its time filling
//   up, so a message is cut into at least kSegmentsPerMessage segments, down
//   to the shortest whose transfer on that link still takes
//   kShortSegmentCostMultiple times the fixed cost (at least
//   kShortestSegmentBytes). Four: twice the two segments a link keeps in
//   flight (collectives/bcast_pipeline). Scale model, ECO-like platform,
//   16 KiB at 64 x 8, chained: 314.7 us in 4 segments, 357.0 in 8, 438.4 in 2.
inline constexpr double kSegmentCostMultiple = 4.0;
inline constexpr std::int64_t kMinSegmentBytes = 4 * 1024;
inline constexpr std::int64_t kMaxSegmentBytes = 64 * 1024;
inline constexpr std::int64_t kSegmentsPerMessage = 4;
inline constexpr double kShortSegmentCostMultiple = 2.0;
inline constexpr std::int64_t kShortestSegmentBytes = 1024;

// Where each subnet holds one node and the subnets form a chain (fan-out
// 1), every node passes each segment on to one other node: its share of a
// segment is one send, which keeps pace with the slowest link while the
// segment takes at least that send's cost on it. Segments go down to the
// bytes that link carries in one send cost (at least kShortestSegmentBytes)
// and a message is cut into at least kOneSendSegmentsPerMessage. Scale
// model, ECO-like platform, 4 x 1 (4 subnets of one node, 6.4 us per send,
// 1 Gb/s between subnets: 764 B -> 1 KiB), 16 KiB / 64 KiB / 256 KiB / 1 MiB
// in segments of 1 / 2 / 4 KiB (`bench/sim/simrun.py hetero 4x1 bcast
// shim-auto SIZES --set SHIM_BCAST_SEGMENT=S`): 206.8 / 650.6 / 2425.7 /
// 9526.1 us, 238.4 / 676.4 / 2428.3 / 9436.0, 275.3 / 723.6 / 2463.9 /
// 9425.3; 4 x 8 the same within 1%. Where a node feeds two other nodes
// (8 x 4: two nodes per subnet) 1 KiB segments took 1.1-1.8x 4 KiB's time.
inline constexpr std::int64_t kOneSendSegmentsPerMessage = 256;

struct SegmentRange {
  std::int64_t shortest = 0;  // powers of two
  std::int64_t longest = 0;
  std::int64_t one_send_shortest = 0;  // where every node sends each segment once (above)
  std::int64_t for_message(std::int64_t message_bytes) const;
  std::int64_t for_message_sent_once(std::int64_t message_bytes) const;
};

// `send_cost_s`: what a small message costs its sender (SHIM_SEND_COST_NS,
// or the profile's).
std::optional<SegmentRange> profile_segment_range(const NetworkProfile& profile, double send_cost_s);

// The pipeline runs at the pace of its slowest link between subnets. Inside
// a subnet the links are faster, so a node there can feed as many children
// as it can send a segment to in the time one segment takes on that slowest
// link, and the subnet's tree gets that much shallower. At least the
// profile's bcast_k (the probe's fan-out, which speaks for bandwidth), at
// most kMaxSubnetFanout; bcast_k when the profile cannot say (one subnet,
// one message size measured).
inline constexpr int kMaxSubnetFanout = 8;

int profile_subnet_fanout(const NetworkProfile& profile, std::int64_t segment_bytes);

}  // namespace shim::topo
