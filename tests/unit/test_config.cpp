#include <catch2/catch.hpp>
#include <map>
#include <ranges>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "shim/config.hpp"

using shim::parse_config;
using shim::coll::AlltoallAlgorithm;

namespace {

shim::ParsedConfig parse(const std::map<std::string, std::string>& env) {
  return parse_config([&env](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

}  // namespace

TEST_CASE("no settings give the documented defaults", "[config]") {
  const auto parsed = parse({});
  CHECK(parsed.problems.empty());
  CHECK(parsed.config.enabled);
  CHECK_FALSE(parsed.config.alltoall.has_value());
  CHECK_FALSE(parsed.config.verbose);
  CHECK_FALSE(parsed.config.stats);
  CHECK(parsed.config.node_size == 0);
  CHECK(parsed.config.nic == shim::topo::NicClass::onload);
  CHECK(parsed.config.send_cost_ns == 25);
  CHECK_FALSE(parsed.config.send_cost_explicit);
  CHECK(parsed.config.node_bandwidth == 0);
  CHECK_FALSE(parsed.config.node_bandwidth_explicit);
  CHECK(parsed.config.alltoall_thresholds.sa_max_bytes == 4096);
  CHECK(parsed.config.alltoall_thresholds.leader_max_bytes == 8192);
  CHECK(parsed.config.alltoall_thresholds.rail_point_to_point_max_bytes == 32768);
  CHECK(parsed.config.server_cluster == shim::rma::kClusterBeyondBudget);
  CHECK(parsed.config.server_credits == 8);
  CHECK(parsed.config.server_buffer_bytes == 16384);
}

TEST_CASE("server clustering settings: good values are applied, bad ones cost one line and keep the default",
          "[config]") {
  const auto good =
      parse({{"SHIM_SERVER_CLUSTER", "3"}, {"SHIM_SERVER_CREDITS", "1"}, {"SHIM_SERVER_BUFFER_SIZE", "4K"}});
  CHECK(good.problems.empty());
  CHECK(good.config.server_cluster == 3);
  CHECK(good.config.server_credits == 1);
  CHECK(good.config.server_buffer_bytes == 4096);
  CHECK(parse({{"SHIM_SERVER_CLUSTER", "auto"}}).config.server_cluster == shim::rma::kClusterSquareRoot);
  CHECK(parse({{"SHIM_SERVER_CLUSTER", "budget"}}).config.server_cluster == shim::rma::kClusterBeyondBudget);
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, std::string>>{{"SHIM_SERVER_CLUSTER", "0"},
                                                        {"SHIM_SERVER_CLUSTER", "abc"},
                                                        {"SHIM_SERVER_CLUSTER", "-2"},
                                                        {"SHIM_SERVER_CREDITS", "0"},
                                                        {"SHIM_SERVER_CREDITS", "x"},
                                                        {"SHIM_SERVER_BUFFER_SIZE", "0"},
                                                        {"SHIM_SERVER_BUFFER_SIZE", "512"},
                                                        {"SHIM_SERVER_BUFFER_SIZE", "1Q"}}) {
    CAPTURE(name, value);
    const auto bad = parse({{name, value}});
    REQUIRE(bad.problems.size() == 1);
    CHECK(bad.problems[0].find(name + "='" + value + "'") == 0);
    CHECK(bad.config.server_cluster == shim::rma::kClusterBeyondBudget);
    CHECK(bad.config.server_credits == 8);
    CHECK(bad.config.server_buffer_bytes == 16384);
  }
}

TEST_CASE("valid settings are applied", "[config]") {
  const auto parsed = parse({{"SHIM_ENABLE", "0"},
                             {"SHIM_ALLTOALL", "leader"},
                             {"SHIM_VERBOSE", "yes"},
                             {"SHIM_STATS", "on"},
                             {"SHIM_NODE_SIZE", "4"},
                             {"SHIM_NIC", "offload"},
                             {"SHIM_SEND_COST_NS", "6390"},
                             {"SHIM_NODE_BANDWIDTH", "3G"},
                             {"SHIM_ALLTOALL_SA_MAX", "32K"},
                             {"SHIM_ALLTOALL_LEADER_MAX", "1m"},
                             {"SHIM_ALLTOALL_RAIL_P2P_MAX", "0"}});
  CHECK(parsed.problems.empty());
  CHECK_FALSE(parsed.config.enabled);
  CHECK(parsed.config.alltoall == AlltoallAlgorithm::leader);
  CHECK(parsed.config.verbose);
  CHECK(parsed.config.stats);
  CHECK(parsed.config.node_size == 4);
  CHECK(parsed.config.nic == shim::topo::NicClass::offload);
  CHECK(parsed.config.send_cost_ns == 6390);
  CHECK(parsed.config.send_cost_explicit);
  CHECK(parsed.config.node_bandwidth == std::int64_t{3} << 30);
  CHECK(parsed.config.node_bandwidth_explicit);
  CHECK(parsed.config.alltoall_thresholds.sa_max_bytes == 32 * 1024);
  CHECK(parsed.config.alltoall_thresholds.leader_max_bytes == 1024 * 1024);
  CHECK(parsed.config.alltoall_thresholds.rail_point_to_point_max_bytes == 0);
}

TEST_CASE("a malformed setting gives one line naming variable, value and accepted values", "[config]") {
  const auto parsed = parse({{"SHIM_ALLTOALL", "sx"}, {"SHIM_VERBOSE", "1"}});
  REQUIRE(parsed.problems.size() == 1);
  const std::string& line = parsed.problems.front();
  CHECK(line.find("SHIM_ALLTOALL") != std::string::npos);
  CHECK(line.find("'sx'") != std::string::npos);
  CHECK(line.find("auto|native|sa|rd|leader|linear|node-pairs") != std::string::npos);
  CHECK(line.find("default, auto") != std::string::npos);
  CHECK(line.find('\n') == std::string::npos);
  // The bad value falls back to the default; the good one still applies.
  CHECK_FALSE(parsed.config.alltoall.has_value());
  CHECK(parsed.config.verbose);
}

TEST_CASE("every kind of malformed value is rejected without side effects", "[config]") {
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, std::string>>{{"SHIM_NODE_SIZE", "0"},
                                                        {"SHIM_NODE_SIZE", "-2"},
                                                        {"SHIM_NODE_SIZE", "4x"},
                                                        {"SHIM_ENABLE", "2"},
                                                        {"SHIM_ENABLE", ""},
                                                        {"SHIM_NIC", "Onload"},
                                                        {"SHIM_SEND_COST_NS", "-1"},
                                                        {"SHIM_SEND_COST_NS", "6.4us"},
                                                        {"SHIM_SEND_COST_NS", "100000001"},
                                                        {"SHIM_NODE_BANDWIDTH", "-1"},
                                                        {"SHIM_NODE_BANDWIDTH", "25Gb"},
                                                        {"SHIM_ALLTOALL_SA_MAX", "16Q"},
                                                        {"SHIM_ALLTOALL_SA_MAX", "-1"},
                                                        {"SHIM_ALLTOALL_LEADER_MAX", "99999999999999999999"},
                                                        {"SHIM_ALLTOALL_LEADER_MAX", "9000000000G"},
                                                        {"SHIM_ALLTOALL_RAIL_P2P_MAX", "32 K"}}) {
    INFO(name << "=" << value);
    const auto parsed = parse({{name, value}});
    CHECK(parsed.problems.size() == 1);
    const shim::Config defaults;
    CHECK(parsed.config.node_size == defaults.node_size);
    CHECK(parsed.config.enabled == defaults.enabled);
    CHECK(parsed.config.send_cost_ns == defaults.send_cost_ns);
    CHECK(parsed.config.send_cost_explicit == defaults.send_cost_explicit);
    CHECK(parsed.config.node_bandwidth == defaults.node_bandwidth);
    CHECK(parsed.config.node_bandwidth_explicit == defaults.node_bandwidth_explicit);
    CHECK(parsed.config.alltoall_thresholds.sa_max_bytes == defaults.alltoall_thresholds.sa_max_bytes);
    CHECK(parsed.config.alltoall_thresholds.leader_max_bytes == defaults.alltoall_thresholds.leader_max_bytes);
    CHECK(parsed.config.alltoall_thresholds.rail_point_to_point_max_bytes ==
          defaults.alltoall_thresholds.rail_point_to_point_max_bytes);
  }
}

TEST_CASE("byte sizes", "[config]") {
  std::int64_t bytes = -1;
  CHECK(shim::parse_byte_size("0", bytes));
  CHECK(bytes == 0);
  CHECK(shim::parse_byte_size("512", bytes));
  CHECK(bytes == 512);
  CHECK(shim::parse_byte_size("2G", bytes));
  CHECK(bytes == std::int64_t{2} << 30);
  CHECK_FALSE(shim::parse_byte_size("K", bytes));
  CHECK_FALSE(shim::parse_byte_size("1.5K", bytes));
  CHECK_FALSE(shim::parse_byte_size(" 1K", bytes));
}

TEST_CASE("every setting documents its values, default and effect", "[config]") {
  for (const shim::SettingSpec& spec : shim::setting_specs()) {
    INFO(spec.name);
    CHECK(spec.name.substr(0, 5) == "SHIM_");
    CHECK_FALSE(spec.values.empty());
    CHECK_FALSE(spec.default_value.empty());
    CHECK_FALSE(spec.effect.empty());
  }
}

namespace {

// The values a choice setting lists, against the names its parser accepts.
template <typename Choices>
void check_lists_exactly(std::string_view setting, const Choices& choices) {
  std::set<std::string> accepted{"auto"};
  for (const auto choice : choices) accepted.emplace(name(choice));
  int specs_found = 0;
  for (const shim::SettingSpec& spec : shim::setting_specs()) {
    if (spec.name != setting) continue;
    ++specs_found;
    std::set<std::string> listed;
    for (const auto value : std::views::split(spec.values, '|')) listed.emplace(value.begin(), value.end());
    CHECK(listed == accepted);
  }
  CHECK(specs_found == 1);
  for (const std::string& value : accepted) {
    INFO(setting << "=" << value);
    CHECK(parse({{std::string(setting), value}}).problems.empty());
  }
}

}  // namespace

TEST_CASE("a choice setting lists every value its parser accepts", "[config]") {
  check_lists_exactly("SHIM_ALLTOALL", shim::coll::kAlltoallAlgorithms);
  check_lists_exactly("SHIM_BCAST", shim::coll::kBcastAlgorithms);
  check_lists_exactly("SHIM_ACCUMULATE", shim::rma::kAccumulatePaths);
}
