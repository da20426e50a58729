#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>

#include "topology/pipeline_shape.hpp"

using shim::topo::NetworkProfile;
using shim::topo::profile_segment_range;

namespace {

// Hosts 0, 1 in subnet 0 and 2, 3 in subnet 1: fast inside a subnet,
// `fixed` seconds plus bytes / `bandwidth` between them.
NetworkProfile two_subnets(double fixed, double bandwidth) {
  NetworkProfile p;
  p.hosts = {"a", "b", "c", "d"};
  p.sizes = {8, 65536};
  p.subnet_of_host = {0, 0, 1, 1};
  for (const std::int64_t size : p.sizes) {
    shim::topo::CostMatrix cost(4, std::vector<double>(4, 0.0));
    for (int a = 0; a < 4; ++a) {
      for (int b = 0; b < 4; ++b) {
        if (a == b) continue;
        const bool across = p.subnet_of_host[a] != p.subnet_of_host[b];
        cost[a][b] = across ? fixed + static_cast<double>(size) / bandwidth : 1e-6 + static_cast<double>(size) / 1e10;
      }
    }
    p.cost.push_back(cost);
  }
  p.partition_size = 65536;
  return p;
}

// The long messages' segment.
std::optional<std::int64_t> profile_segment_bytes(const NetworkProfile& p) {
  const auto range = profile_segment_range(p, 0);
  return range ? std::optional(range->longest) : std::nullopt;
}

}  // namespace

TEST_CASE("ECO's segment: four fixed costs' worth of bytes on the slowest link between subnets", "[segment]") {
  // 1 Gbit/s, 6.7 us: 4 x 6.7 us x 125 MB/s = 3.4 KB -> the 4 KiB floor.
  CHECK(profile_segment_bytes(two_subnets(6.7e-6, 125e6)) == 4096);
  // 100 Mbit/s routers, 136 us (tests/vcluster/three_subnets.spec): 6.8 KB -> 8 KiB.
  CHECK(profile_segment_bytes(two_subnets(136e-6, 12.5e6)) == 8192);
  // 10 GB/s, 20 us: 800 KB -> capped at 64 KiB.
  CHECK(profile_segment_bytes(two_subnets(20e-6, 10e9)) == 65536);
}

TEST_CASE("ECO's segment: nothing to go by without two subnets or two sizes", "[segment]") {
  NetworkProfile one_subnet = two_subnets(6.7e-6, 125e6);
  one_subnet.subnet_of_host = {0, 0, 0, 0};
  CHECK_FALSE(profile_segment_bytes(one_subnet).has_value());
  NetworkProfile one_size = two_subnets(6.7e-6, 125e6);
  one_size.sizes.resize(1);
  one_size.cost.resize(1);
  CHECK_FALSE(profile_segment_bytes(one_size).has_value());
}

TEST_CASE("ECO's segment follows the slowest pair, not the average", "[segment]") {
  NetworkProfile p = two_subnets(6.7e-6, 1e9);
  // One pair across subnets is 10x slower (still 6.7 us fixed): 4 x 6.7 us x 100 MB/s = 2.7 KB.
  p.cost[1][0][3] = p.cost[0][0][3] + 65528.0 / 100e6;
  CHECK(profile_segment_bytes(p) == 4096);
  p.cost[1][0][3] = p.cost[0][0][3] + 65528.0 / 10e6;  // 10 MB/s: 268 B... floor
  CHECK(profile_segment_bytes(p) == 4096);
  NetworkProfile fast = two_subnets(50e-6, 1e9);  // 200 KB wanted: capped
  CHECK(profile_segment_bytes(fast) == 65536);
  fast.cost[1][2][1] = fast.cost[0][2][1] + 65528.0 / 50e6;  // one 50 MB/s pair: 10 KB -> 16 KiB
  CHECK(profile_segment_bytes(fast) == 16384);
}

TEST_CASE("ECO's fan-out inside subnets: as many sends as fit in one segment's time between subnets", "[segment]") {
  using shim::topo::profile_subnet_fanout;
  // Inside a subnet 1 us + bytes / 10 GB/s: 1.4 us for 4 KiB.
  // Between subnets 6.7 us + 4 KiB / 125 MB/s = 39.5 us: 28 sends fit, capped at 8.
  NetworkProfile slow_uplinks = two_subnets(6.7e-6, 125e6);
  slow_uplinks.bcast_k = 1;
  CHECK(profile_subnet_fanout(slow_uplinks, 4096) == shim::topo::kMaxSubnetFanout);
  // Make the slowest pair inside a subnet 12 us + 4 KiB / 10 GB/s = 12.4 us: 3 fit.
  slow_uplinks.cost[0][0][1] = 12e-6;
  slow_uplinks.cost[1][0][1] = 12e-6 + 65528.0 / 1e10;
  CHECK(profile_subnet_fanout(slow_uplinks, 4096) == 3);
  // Links as fast between subnets as inside: the probe's fan-out stands.
  NetworkProfile even = two_subnets(1e-6, 1e10);
  even.bcast_k = 2;
  CHECK(profile_subnet_fanout(even, 4096) == 2);
  even.bcast_k = 1;
  CHECK(profile_subnet_fanout(even, 4096) == 1);
}

TEST_CASE("ECO's fan-out inside subnets: the probe's without two subnets or two sizes", "[segment]") {
  using shim::topo::profile_subnet_fanout;
  NetworkProfile one_subnet = two_subnets(6.7e-6, 125e6);
  one_subnet.subnet_of_host = {0, 0, 0, 0};
  one_subnet.bcast_k = 1;
  CHECK(profile_subnet_fanout(one_subnet, 4096) == 1);
  NetworkProfile one_size = two_subnets(6.7e-6, 125e6);
  one_size.sizes.resize(1);
  one_size.cost.resize(1);
  one_size.bcast_k = 3;
  CHECK(profile_subnet_fanout(one_size, 4096) == 3);
}

TEST_CASE("ECO's segments for shorter messages: at least 4 of them, down to twice the fixed cost", "[segment]") {
  // 1 Gbit/s, 6.7 us: 6.7 us x 125 MB/s = 838 B; x 2 -> 2 KiB, x 4 -> 4 KiB.
  const auto uplinks = profile_segment_range(two_subnets(6.7e-6, 125e6), 0);
  REQUIRE(uplinks.has_value());
  CHECK(uplinks->shortest == 2048);
  CHECK(uplinks->longest == 4096);
  CHECK(uplinks->for_message(1) == 2048);
  CHECK(uplinks->for_message(8192) == 2048);
  CHECK(uplinks->for_message(16383) == 2048);
  CHECK(uplinks->for_message(16384) == 4096);
  CHECK(uplinks->for_message(std::int64_t{1} << 40) == 4096);
  // 100 Mbit/s routers, 136 us: 3.4 KB -> 4 KiB shortest, 8 KiB longest.
  const auto routers = profile_segment_range(two_subnets(136e-6, 12.5e6), 0);
  REQUIRE(routers.has_value());
  CHECK(routers->shortest == 4096);
  CHECK(routers->longest == 8192);
  CHECK(routers->for_message(16384) == 4096);
  CHECK(routers->for_message(32768) == 8192);
  // Fast links, tiny fixed cost: the 1 KiB floor.
  const auto fast = profile_segment_range(two_subnets(1e-7, 1e9), 0);
  REQUIRE(fast.has_value());
  CHECK(fast->shortest == 1024);
  CHECK(fast->longest == 4096);
  CHECK(fast->for_message(4096) == 1024);
  CHECK(fast->for_message(8192) == 2048);
  CHECK(!profile_segment_range(NetworkProfile{}, 0).has_value());
}

TEST_CASE("ECO's segments where every node sends each segment once: down to one send cost's bytes", "[segment]") {
  // 1 Gbit/s between subnets; 6.39 us per send x 125 MB/s = 799 B -> 1 KiB,
  // and at least 256 segments per message up to the longest (4 KiB).
  const auto uplinks = profile_segment_range(two_subnets(6.7e-6, 125e6), 6.39e-6);
  REQUIRE(uplinks.has_value());
  CHECK(uplinks->one_send_shortest == 1024);
  CHECK(uplinks->shortest == 2048);  // unchanged by the send cost
  CHECK(uplinks->for_message_sent_once(1) == 1024);
  CHECK(uplinks->for_message_sent_once(16384) == 1024);
  CHECK(uplinks->for_message(16384) == 4096);
  CHECK(uplinks->for_message_sent_once(262144) == 1024);
  CHECK(uplinks->for_message_sent_once(524287) == 1024);
  CHECK(uplinks->for_message_sent_once(524288) == 2048);
  CHECK(uplinks->for_message_sent_once(1 << 20) == 4096);
  CHECK(uplinks->for_message_sent_once(std::int64_t{1} << 40) == 4096);
  // A send that costs more than a segment's transfer: longer segments.
  const auto costly = profile_segment_range(two_subnets(6.7e-6, 125e6), 20e-6);
  REQUIRE(costly.has_value());
  CHECK(costly->one_send_shortest == 4096);
  CHECK(costly->for_message_sent_once(16384) == 4096);
  // No send cost known: the floor.
  CHECK(profile_segment_range(two_subnets(6.7e-6, 125e6), 0)->one_send_shortest == 1024);
  CHECK(profile_segment_range(two_subnets(6.7e-6, 125e6), -1)->one_send_shortest == 1024);
}
