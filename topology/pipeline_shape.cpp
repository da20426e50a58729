#include "topology/pipeline_shape.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>

namespace shim::topo {

namespace {

// The profile's costs as a line through its smallest and largest sizes
// measured: a fixed cost plus bytes over a bandwidth, per pair of hosts.
class CostLine {
 public:
  static std::optional<CostLine> of(const NetworkProfile& profile) {
    if (profile.sizes.size() < 2 || profile.cost.size() != profile.sizes.size()) return std::nullopt;
    const auto [smallest, largest] = std::minmax_element(profile.sizes.begin(), profile.sizes.end());
    if (*largest <= *smallest) return std::nullopt;
    return CostLine(profile, static_cast<std::size_t>(smallest - profile.sizes.begin()),
                    static_cast<std::size_t>(largest - profile.sizes.begin()));
  }

  double fixed(std::size_t a, std::size_t b) const { return profile_.cost[small_].at(a).at(b); }
  // Bytes per second; 0 when the larger size did not cost more.
  double bandwidth(std::size_t a, std::size_t b) const {
    const double extra_time = profile_.cost[large_].at(a).at(b) - fixed(a, b);
    return extra_time > 0 ? extra_bytes_ / extra_time : 0.0;
  }
  double at(std::size_t a, std::size_t b, std::int64_t bytes) const {
    const double rate = bandwidth(a, b);
    const double extra = static_cast<double>(bytes - profile_.sizes[small_]);
    return rate > 0 ? fixed(a, b) + extra / rate : fixed(a, b);
  }

 private:
  CostLine(const NetworkProfile& profile, std::size_t small, std::size_t large)
      : profile_(profile),
        small_(small),
        large_(large),
        extra_bytes_(static_cast<double>(profile.sizes[large] - profile.sizes[small])) {}

  const NetworkProfile& profile_;
  std::size_t small_;
  std::size_t large_;
  double extra_bytes_;
};

template <typename Visit>
void for_each_pair(const NetworkProfile& profile, Visit visit) {
  const std::size_t hosts = profile.subnet_of_host.size();
  for (std::size_t a = 0; a < hosts; ++a) {
    for (std::size_t b = 0; b < hosts; ++b) {
      if (a != b) visit(a, b, profile.subnet_of_host[a] == profile.subnet_of_host[b]);
    }
  }
}

// The slowest link between two subnets (a broadcast's pipeline runs at its
// pace): its bandwidth and fixed cost. nullopt when the profile cannot say.
struct SlowestLink {
  double bandwidth = 0;
  double fixed_cost = 0;
};
std::optional<SlowestLink> slowest_link(const NetworkProfile& profile) {
  const std::optional<CostLine> line = CostLine::of(profile);
  if (!line) return std::nullopt;
  SlowestLink slowest{std::numeric_limits<double>::infinity(), 0};
  for_each_pair(profile, [&](std::size_t a, std::size_t b, bool same_subnet) {
    const double bandwidth = line->bandwidth(a, b);
    if (same_subnet || bandwidth <= 0 || bandwidth >= slowest.bandwidth) return;
    slowest = {bandwidth, line->fixed(a, b)};
  });
  if (!(slowest.bandwidth < std::numeric_limits<double>::infinity())) return std::nullopt;
  return slowest;
}

// The least power of two >= `wanted` within [floor, ceiling].
std::int64_t power_of_two_at_least(double wanted, std::int64_t floor, std::int64_t ceiling) {
  std::int64_t bytes = floor;
  while (bytes < ceiling && static_cast<double>(bytes) < wanted) bytes *= 2;
  return bytes;
}

// The longest power-of-two segment within [shortest, longest] that the
// message still holds at least `per_message` times (`shortest` when it
// holds fewer).
std::int64_t segment_for(std::int64_t message_bytes, std::int64_t shortest, std::int64_t longest,
                         std::int64_t per_message) {
  std::int64_t segment = shortest;
  while (segment < longest && segment * per_message * 2 <= message_bytes) segment *= 2;
  return segment;
}

}  // namespace

std::optional<SegmentRange> profile_segment_range(const NetworkProfile& profile, double send_cost_s) {
  const std::optional<SlowestLink> link = slowest_link(profile);
  if (!link) return std::nullopt;
  // The bytes that take as long on the link as a message's fixed cost.
  const double fixed_bytes = link->fixed_cost * link->bandwidth;
  SegmentRange range;
  range.longest = power_of_two_at_least(kSegmentCostMultiple * fixed_bytes, kMinSegmentBytes, kMaxSegmentBytes);
  range.shortest = power_of_two_at_least(kShortSegmentCostMultiple * fixed_bytes, kShortestSegmentBytes, range.longest);
  range.one_send_shortest =
      power_of_two_at_least(std::max(send_cost_s, 0.0) * link->bandwidth, kShortestSegmentBytes, range.longest);
  return range;
}

std::int64_t SegmentRange::for_message(std::int64_t message_bytes) const {
  return segment_for(message_bytes, shortest, longest, kSegmentsPerMessage);
}

std::int64_t SegmentRange::for_message_sent_once(std::int64_t message_bytes) const {
  return segment_for(message_bytes, one_send_shortest, longest, kOneSendSegmentsPerMessage);
}

int profile_subnet_fanout(const NetworkProfile& profile, std::int64_t segment_bytes) {
  const std::optional<CostLine> line = CostLine::of(profile);
  if (!line) return profile.bcast_k;
  // The slowest pair of each kind: a segment's time between subnets, and
  // the longest a send inside a subnet can take.
  double between = 0;
  double within = 0;
  for_each_pair(profile, [&](std::size_t a, std::size_t b, bool same_subnet) {
    double& slowest = same_subnet ? within : between;
    slowest = std::max(slowest, line->at(a, b, segment_bytes));
  });
  if (between <= 0 || within <= 0) return profile.bcast_k;
  const double fits = std::min(between / within, static_cast<double>(kMaxSubnetFanout));
  return std::max(profile.bcast_k, static_cast<int>(fits));
}

}  // namespace shim::topo
