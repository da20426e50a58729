// SHIM_* settings: one table of specs (name, accepted values, default,
// effect) drives parsing, the one-line complaints about bad values, and the
// configuration table printed by shim-info. No MPI here.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "collectives/alltoall_algorithm.hpp"
#include "collectives/alltoall_policy.hpp"
#include "collectives/bcast_algorithm.hpp"
#include "rma/accumulate_policy.hpp"
#include "rma/server_map.hpp"
#include "topology/nic_class.hpp"

namespace shim {

// A setting that names one algorithm (or path), or leaves the choice to
// the policy table: nullopt is "auto".
template <typename Algorithm>
using Choice = std::optional<Algorithm>;

// "auto", or the algorithm's name.
template <typename Algorithm>
std::string_view choice_name(const Choice<Algorithm>& choice) {
  return choice ? name(*choice) : std::string_view("auto");
}

// "auto" or the name of one of `algorithms`; false for anything else.
template <typename Algorithm, std::size_t N>
bool parse_choice(std::string_view text, const std::array<Algorithm, N>& algorithms, Choice<Algorithm>& out) {
  if (text == "auto") {
    out.reset();
    return true;
  }
  for (const Algorithm algorithm : algorithms) {
    if (name(algorithm) == text) {
      out = algorithm;
      return true;
    }
  }
  return false;
}

struct Config {
  bool enabled = true;
  Choice<coll::AlltoallAlgorithm> alltoall;
  bool verbose = false;
  bool stats = false;
  std::array<char, 1024> stats_path{};  // SHIM_STATS=FILE, placeholders unexpanded; empty: stderr
  int node_size = 0;                    // 0: detect nodes; k > 0: k consecutive world ranks form one node
  topo::NicClass nic = topo::NicClass::onload;
  bool nic_explicit = false;                      // SHIM_NIC given: a profile's NIC class does not replace it
  int send_cost_ns = coll::kReferenceSendCostNs;  // per small message a core sends to another node
  bool send_cost_explicit = false;                // SHIM_SEND_COST_NS given: the profile's does not replace it
  std::int64_t node_bandwidth = 0;                // bytes/s one node's link carries to other nodes; 0: unknown
  bool node_bandwidth_explicit = false;           // SHIM_NODE_BANDWIDTH given: the profile's does not replace it
  coll::AlltoallThresholds alltoall_thresholds;
  Choice<coll::BcastAlgorithm> bcast;
  int bcast_k = 0;                        // 0: the profile's k, else 2
  std::int64_t bcast_segment_bytes = 0;   // 0: for ECO the profile's, else by message size (shim::bcast_segment_bytes)
  std::array<char, 1024> profile_path{};  // empty: no network profile
  bool mirror_per_process_segments = false;
  Choice<rma::AccumulatePath> accumulate;
  bool server = true;             // the per-node communication server thread
  int server_poll_max_us = 1000;  // longest sleep of an idle server between polls
  // Servers per cluster, or one of rma/server_map.hpp's rules.
  int server_cluster = rma::kClusterBeyondBudget;
  int server_credits = 8;                        // messages an origin may have unreleased at one server
  std::int64_t server_buffer_bytes = 16 * 1024;  // one request buffer (and the largest message)
};
// Rank 0's configuration is broadcast byte-for-byte at MPI_Init.
static_assert(std::is_trivially_copyable_v<Config>);

struct SettingSpec {
  std::string_view name;
  std::string_view values;
  std::string_view default_value;
  std::string_view effect;
  // Applies `text` to `config`; false when the text is not an accepted value.
  bool (*apply)(std::string_view text, Config& config);
};

std::span<const SettingSpec> setting_specs();

struct ParsedConfig {
  Config config;
  // One line per malformed setting: variable, bad value, accepted values,
  // and the default that is used instead.
  std::vector<std::string> problems;
};

using EnvLookup = std::function<const char*(const char* name)>;
ParsedConfig parse_config(const EnvLookup& lookup);

// Byte sizes: a decimal integer with an optional K, M or G suffix (binary).
bool parse_byte_size(std::string_view text, std::int64_t& bytes);

}  // namespace shim
