// The shape of a pipelined broadcast on a measured network (SHIM_PROFILE):
// how long its segments are, and how many children a node feeds inside a
// subnet. No MPI.
#pragma once

#include <cstdint>
#include <optional>

#include "topology/network_profile.hpp"

namespace shim::topo {

// Segments are long enough that sending one over the slowest link between
// subnets takes kSegmentCostMultiple times a message's fixed cost there
// (so that cost is at most a fifth of the time), and no longer, so the
// tree's levels overlap: a power of two within [kMinSegmentBytes,
// kMaxSegmentBytes]. nullopt when the profile cannot say: one subnet, or
// one message size measured.
inline constexpr double kSegmentCostMultiple = 4.0;
inline constexpr std::int64_t kMinSegmentBytes = 4 * 1024;
inline constexpr std::int64_t kMaxSegmentBytes = 64 * 1024;

std::optional<std::int64_t> profile_segment_bytes(const NetworkProfile& profile);

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
