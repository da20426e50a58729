#include <catch2/catch.hpp>
#include <string>

#include "topology/network_profile.hpp"

using shim::topo::NetworkProfile;
using shim::topo::parse_profile;

namespace {

NetworkProfile sample() {
  NetworkProfile p;
  p.hosts = {"h0", "h1", "h2"};
  p.sizes = {8, 65536};
  p.cost = {{{0, 1e-5, 2e-5}, {1e-5, 0, 2e-5}, {2e-5, 2e-5, 0}}, {{0, 1e-3, 5e-3}, {1e-3, 0, 5e-3}, {5e-3, 5e-3, 0}}};
  p.partition_size = 65536;
  p.subnet_of_host = {0, 0, 1};
  p.nic = shim::topo::NicClass::offload;
  p.pair_throughput = {1.1e8, 1.12e8};
  p.bcast_k = 1;
  p.send_cost_s = 6.39e-6;
  p.created_by = "test";
  return p;
}

std::string without(std::string text, const std::string& piece) {
  const auto at = text.find(piece);
  REQUIRE(at != std::string::npos);
  return text.erase(at, piece.size());
}

}  // namespace

TEST_CASE("a profile survives writing and reading", "[profile]") {
  const NetworkProfile p = sample();
  const auto load = parse_profile(shim::topo::profile_to_json(p), "mem");
  REQUIRE(load.error == "");
  const NetworkProfile& q = *load.profile;
  CHECK(q.hosts == p.hosts);
  CHECK(q.sizes == p.sizes);
  CHECK(q.cost == p.cost);
  CHECK(q.partition_size == p.partition_size);
  CHECK(q.subnet_of_host == p.subnet_of_host);
  CHECK(q.nic == p.nic);
  CHECK(q.pair_throughput == p.pair_throughput);
  CHECK(q.bcast_k == 1);
  CHECK(q.send_cost_s == p.send_cost_s);
  CHECK(q.subnets() == 2);
  CHECK(q.partition_cost()[0][2] == 5e-3);
  CHECK(q.host_index("h2") == 2);
  CHECK(q.host_index("h9") == -1);
}

TEST_CASE("a profile written before the send cost was measured still reads, without one", "[profile]") {
  const std::string text = without(shim::topo::profile_to_json(sample()), ",\n \"send_cost_seconds\": 6.39e-06");
  const auto load = parse_profile(text, "old.json");
  REQUIRE(load.error == "");
  CHECK(load.profile->send_cost_s == 0);
}

TEST_CASE("syntax errors name the file, line and column", "[profile]") {
  const auto load = parse_profile("{\n  \"format\": \"shim-network-profile\",\n  \"version\": 1,,\n}", "p.json");
  CHECK_FALSE(load.profile);
  CHECK(load.error.rfind("p.json: line 3, column 16: ", 0) == 0);
}

TEST_CASE("a truncated file is an error, not a crash", "[profile]") {
  const std::string text = shim::topo::profile_to_json(sample());
  for (std::size_t cut : {std::size_t{0}, std::size_t{1}, text.size() / 3, text.size() / 2, text.size() - 3}) {
    const auto load = parse_profile(text.substr(0, cut), "cut.json");
    INFO("cut at " << cut << ": " << load.error);
    CHECK_FALSE(load.profile);
    CHECK(load.error.rfind("cut.json: ", 0) == 0);
  }
}

TEST_CASE("malformed content names the field", "[profile]") {
  const std::string good = shim::topo::profile_to_json(sample());
  struct Case {
    std::string text;
    std::string expected;
  };
  const Case cases[] = {
      {"[1, 2]", "expected a JSON object"},
      {without(good, "\"bcast_k\": 1,"), "missing field \"bcast_k\""},
      {std::string(good).replace(good.find("\"version\": 1"), 12, "\"version\": 7"), "\"version\" 7 is not supported"},
      {std::string(good).replace(good.find("\"offload\""), 9, "\"fast\""), "\"nic\".\"class\""},
      {std::string(good).replace(good.find("\"h1\""), 4, "\"h0\""), "repeated"},
      {std::string(good).replace(good.find("\"partition_size\": 65536"), 23, "\"partition_size\": 9"),
       "\"partition_size\" is not one of"},
      {std::string(good).replace(good.find("\"bcast_k\": 1"), 12, "\"bcast_k\": 0"), "\"bcast_k\""},
      {std::string(good).replace(good.find("6.39e-06"), 8, "-6.4e-06"), "\"send_cost_seconds\": expected 0 to 1"},
      {std::string(good).replace(good.find("6.39e-06"), 8, "\"fast\""), "\"send_cost_seconds\""},
  };
  for (const Case& c : cases) {
    const auto load = parse_profile(c.text, "bad.json");
    INFO(load.error);
    CHECK_FALSE(load.profile);
    CHECK(load.error.find(c.expected) != std::string::npos);
    CHECK(load.error.find('\n') == std::string::npos);
  }
}

TEST_CASE("matrices must match the host list", "[profile]") {
  NetworkProfile p = sample();
  p.cost[1].pop_back();
  const auto load = parse_profile(shim::topo::profile_to_json(p), "m.json");
  CHECK_FALSE(load.profile);
  CHECK(load.error.find("\"cost_seconds\"[1]: expected a 3 x 3 matrix") != std::string::npos);
}

TEST_CASE("subnets must cover every host once", "[profile]") {
  NetworkProfile p = sample();
  const std::string text = shim::topo::profile_to_json(p);
  const std::string missing = std::string(text).replace(text.find("[\n   2\n  ]"), 10, "[\n   1\n  ]");
  const auto load = parse_profile(missing, "s.json");
  CHECK_FALSE(load.profile);
  CHECK(load.error.find("\"subnets\"") != std::string::npos);
}

TEST_CASE("an unreadable file is reported", "[profile]") {
  const auto load = shim::topo::load_profile_file("/nonexistent/profile.json");
  CHECK_FALSE(load.profile);
  CHECK(load.error == "/nonexistent/profile.json: cannot be read");
}

TEST_CASE("a node's bandwidth is half its highest pair throughput, which counts both directions", "[profile]") {
  NetworkProfile p = sample();
  CHECK(p.node_bandwidth() == 56'000'000);
  p.pair_throughput = {2.4e9, 5.975e9, 5.9e9};
  CHECK(p.node_bandwidth() == 2'987'500'000);
  p.pair_throughput.clear();
  CHECK(p.node_bandwidth() == 0);
  p.pair_throughput = {-1e300};
  CHECK(p.node_bandwidth() == 0);
  p.pair_throughput = {1e300};
  CHECK(p.node_bandwidth() == std::int64_t{1} << 62);
}
