#include "shim/config.hpp"

#include <array>
#include <charconv>
#include <limits>

namespace shim {

std::string_view name(AlltoallChoice choice) {
  switch (choice) {
    case AlltoallChoice::automatic: return "auto";
    case AlltoallChoice::native: return "native";
    case AlltoallChoice::sa: return "sa";
    case AlltoallChoice::rd: return "rd";
    case AlltoallChoice::leader: return "leader";
  }
  return "?";
}

namespace {

bool parse_switch(std::string_view text, bool& value) {
  if (text == "1" || text == "on" || text == "yes" || text == "true") {
    value = true;
    return true;
  }
  if (text == "0" || text == "off" || text == "no" || text == "false") {
    value = false;
    return true;
  }
  return false;
}

bool parse_positive_int(std::string_view text, int& value) {
  int parsed = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), parsed);
  if (error != std::errc() || end != text.data() + text.size() || parsed < 1) return false;
  value = parsed;
  return true;
}

constexpr std::array kSpecs = {
    SettingSpec{"SHIM_ENABLE", "0|1", "1", "0: pure pass-through, every call goes straight to PMPI_*",
                [](std::string_view t, Config& c) { return parse_switch(t, c.enabled); }},
    SettingSpec{"SHIM_ALLTOALL", "auto|native|sa|rd|leader", "auto",
                "alltoall algorithm; auto chooses from the policy table (shim-info prints it)",
                [](std::string_view t, Config& c) {
                  for (AlltoallChoice choice : {AlltoallChoice::automatic, AlltoallChoice::native, AlltoallChoice::sa,
                                                AlltoallChoice::rd, AlltoallChoice::leader}) {
                    if (name(choice) == t) {
                      c.alltoall = choice;
                      return true;
                    }
                  }
                  return false;
                }},
    SettingSpec{"SHIM_VERBOSE", "0|1", "0",
                "1: rank 0 of each communicator prints each decision (communicator, size class, algorithm, "
                "reason) the first time it is taken",
                [](std::string_view t, Config& c) { return parse_switch(t, c.verbose); }},
    SettingSpec{"SHIM_STATS", "0|1", "0",
                "1: report at MPI_Finalize: calls and bytes per algorithm and size class, inter- and "
                "intra-node messages and bytes, beside a flat exchange's",
                [](std::string_view t, Config& c) { return parse_switch(t, c.stats); }},
    SettingSpec{"SHIM_NODE_SIZE", "integer >= 1", "unset (detect nodes)",
                "virtual nodes: world ranks [0,k), [k,2k), ... count as one node each, replacing detection",
                [](std::string_view t, Config& c) { return parse_positive_int(t, c.node_size); }},
    SettingSpec{"SHIM_NIC", "onload|offload", "onload",
                "NIC class used by the alltoall policy (onload favours SA, offload favours leader-based)",
                [](std::string_view t, Config& c) {
                  const auto nic = topo::parse_nic_class(t);
                  if (nic) c.nic = *nic;
                  return nic.has_value();
                }},
    SettingSpec{"SHIM_ALLTOALL_SA_MAX", "bytes, optional K|M|G suffix", "16K",
                "auto picks SA while ppn x block bytes <= this",
                [](std::string_view t, Config& c) { return parse_byte_size(t, c.alltoall_thresholds.sa_max_bytes); }},
    SettingSpec{"SHIM_ALLTOALL_LEADER_MAX", "bytes, optional K|M|G suffix", "8K",
                "offload NICs: auto picks leader-based while ppn^2 x block bytes <= this",
                [](std::string_view t, Config& c) {
                  return parse_byte_size(t, c.alltoall_thresholds.leader_max_bytes);
                }},
};

}  // namespace

std::span<const SettingSpec> setting_specs() { return kSpecs; }

bool parse_byte_size(std::string_view text, std::int64_t& bytes) {
  std::int64_t shift = 0;
  if (!text.empty()) {
    switch (text.back()) {
      case 'k': case 'K': shift = 10; break;
      case 'm': case 'M': shift = 20; break;
      case 'g': case 'G': shift = 30; break;
      default: break;
    }
    if (shift != 0) text.remove_suffix(1);
  }
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 0) return false;
  if (value > (std::numeric_limits<std::int64_t>::max() >> shift)) return false;
  bytes = value << shift;
  return true;
}

ParsedConfig parse_config(const EnvLookup& lookup) {
  ParsedConfig parsed;
  for (const SettingSpec& spec : kSpecs) {
    const std::string variable(spec.name);
    const char* text = lookup(variable.c_str());
    if (text == nullptr) continue;
    Config candidate = parsed.config;
    if (spec.apply(text, candidate)) {
      parsed.config = candidate;
    } else {
      parsed.problems.push_back(variable + "='" + text + "' is not valid (accepted: " + std::string(spec.values) +
                                "); using the default, " + std::string(spec.default_value));
    }
  }
  return parsed;
}

}  // namespace shim
