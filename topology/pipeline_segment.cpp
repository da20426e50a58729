#include "topology/pipeline_segment.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>

namespace shim::topo {

std::optional<std::int64_t> profile_segment_bytes(const NetworkProfile& profile) {
  if (profile.sizes.size() < 2 || profile.cost.size() != profile.sizes.size()) return std::nullopt;
  const auto [smallest, largest] = std::minmax_element(profile.sizes.begin(), profile.sizes.end());
  const auto small = static_cast<std::size_t>(smallest - profile.sizes.begin());
  const auto large = static_cast<std::size_t>(largest - profile.sizes.begin());
  const double extra_bytes = static_cast<double>(*largest - *smallest);
  if (extra_bytes <= 0) return std::nullopt;
  // The slowest link between two subnets: a broadcast's pipeline runs at
  // its pace.
  double slowest = std::numeric_limits<double>::infinity();
  double fixed_cost = 0;
  const std::size_t hosts = profile.subnet_of_host.size();
  for (std::size_t a = 0; a < hosts; ++a) {
    for (std::size_t b = 0; b < hosts; ++b) {
      if (profile.subnet_of_host[a] == profile.subnet_of_host[b]) continue;
      const double small_cost = profile.cost[small].at(a).at(b);
      const double extra_time = profile.cost[large].at(a).at(b) - small_cost;
      if (extra_time <= 0) continue;
      const double bandwidth = extra_bytes / extra_time;
      if (bandwidth < slowest) {
        slowest = bandwidth;
        fixed_cost = small_cost;
      }
    }
  }
  if (!(slowest < std::numeric_limits<double>::infinity())) return std::nullopt;
  const double wanted = kSegmentCostMultiple * fixed_cost * slowest;
  std::int64_t segment = kMinSegmentBytes;
  while (segment < kMaxSegmentBytes && static_cast<double>(segment) < wanted) segment *= 2;
  return segment;
}

}  // namespace shim::topo
