// SHIM_* settings: one table of specs (name, accepted values, default,
// effect) drives parsing, the one-line complaints about bad values, and the
// configuration table printed by shim-info. No MPI here.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "collectives/alltoall_algorithm.hpp"
#include "collectives/alltoall_policy.hpp"
#include "topology/nic_class.hpp"

namespace shim {

enum class AlltoallChoice : std::uint8_t { automatic, native, sa, rd, leader };
enum class BcastChoice : std::uint8_t { automatic, native, eco, twolevel };
enum class AccumulateChoice : std::uint8_t { automatic, native, owner, caller };

std::string_view name(AlltoallChoice choice);
std::string_view name(BcastChoice choice);
std::string_view name(AccumulateChoice choice);
// "auto", "native", "owner" or "caller"; false for anything else.
bool parse_accumulate_choice(std::string_view text, AccumulateChoice& out);

struct Config {
  bool enabled = true;
  AlltoallChoice alltoall = AlltoallChoice::automatic;
  bool verbose = false;
  bool stats = false;
  int node_size = 0;  // 0: detect nodes; k > 0: k consecutive world ranks form one node
  topo::NicClass nic = topo::NicClass::onload;
  bool nic_explicit = false;  // SHIM_NIC given: a profile's NIC class does not replace it
  coll::AlltoallThresholds alltoall_thresholds;
  BcastChoice bcast = BcastChoice::automatic;
  int bcast_k = 0;  // 0: the profile's k, else 2
  std::int64_t bcast_segment_bytes = 64 * 1024;
  std::array<char, 1024> profile_path{};  // empty: no network profile
  bool mirror_per_process_segments = false;
  AccumulateChoice accumulate = AccumulateChoice::automatic;
  bool server = true;  // the per-node communication server thread
  int server_poll_max_us = 1000;  // longest sleep of an idle server between polls
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
