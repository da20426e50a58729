// How long a pipelined broadcast's segments should be on a measured network
// (SHIM_PROFILE). No MPI.
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

}  // namespace shim::topo
