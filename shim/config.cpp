#include "shim/config.hpp"

#include <array>
#include <charconv>
#include <limits>

namespace shim {

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

bool parse_int_in(std::string_view text, int low, int high, int& value) {
  int parsed = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), parsed);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || parsed < low || parsed > high) {
    return false;
  }
  value = parsed;
  return true;
}

bool parse_bytes_in(std::string_view text, std::int64_t low, std::int64_t high, std::int64_t& value) {
  std::int64_t bytes = 0;
  if (!parse_byte_size(text, bytes) || bytes < low || bytes > high) return false;
  value = bytes;
  return true;
}

constexpr std::array kSpecs = {
    SettingSpec{"SHIM_ENABLE", "0|1", "1", "0: pure pass-through, every call goes straight to PMPI_*",
                [](std::string_view t, Config& c) { return parse_switch(t, c.enabled); }},
    SettingSpec{"SHIM_ALLTOALL", "auto|native|sa|rd|leader|linear|node-pairs", "auto",
                "alltoall algorithm; auto chooses from the policy table (shim-info prints it)",
                [](std::string_view t, Config& c) { return parse_choice(t, coll::kAlltoallAlgorithms, c.alltoall); }},
    SettingSpec{"SHIM_VERBOSE", "0|1", "0",
                "1: rank 0 of each communicator prints each decision (communicator, size class, algorithm, "
                "reason) the first time it is taken",
                [](std::string_view t, Config& c) { return parse_switch(t, c.verbose); }},
    SettingSpec{"SHIM_STATS", "0|1|FILE (%r: rank, %j: job id, %%: %)", "0",
                "1: a report at MPI_Finalize on stderr, summed over the job: alltoall and broadcast per algorithm "
                "and size, the accumulate family per operation and path, its servers' load, mirrored windows. "
                "FILE: the same report to that file; with %r each process writes its own",
                [](std::string_view t, Config& c) {
                  if (parse_switch(t, c.stats)) {
                    c.stats_path.fill('\0');
                    return true;
                  }
                  if (t.empty() || t.size() >= c.stats_path.size()) return false;
                  c.stats = true;
                  c.stats_path.fill('\0');
                  t.copy(c.stats_path.data(), t.size());
                  return true;
                }},
    SettingSpec{"SHIM_NODE_SIZE", "integer >= 1", "unset (detect nodes)",
                "virtual nodes: world ranks [0,k), [k,2k), ... count as one node each, replacing detection",
                [](std::string_view t, Config& c) { return parse_int_in(t, 1, 1 << 30, c.node_size); }},
    SettingSpec{"SHIM_NIC", "onload|offload", "the profile's, else onload",
                "NIC class used by the alltoall policy (offload: leader-based for small blocks beyond 64 node-pair "
                "partners; otherwise the same rules for both); overrides the class measured in SHIM_PROFILE",
                [](std::string_view t, Config& c) {
                  const auto nic = topo::parse_nic_class(t);
                  if (nic) c.nic = *nic;
                  c.nic_explicit = nic.has_value();
                  return nic.has_value();
                }},
    SettingSpec{"SHIM_SEND_COST_NS", "integer nanoseconds 0..100000000", "the profile's, else 25",
                "what a core spends per small message it sends to another node; the alltoall policy adds what it "
                "costs beyond 25 ns (the platform its costs were fitted on) to every message of its estimates; "
                "from 1000, broadcasts of up to 4 KiB go to MPI; ECO's chains of one node per subnet cut segments "
                "down to the bytes the slowest link carries in it. Overrides the cost measured in SHIM_PROFILE",
                [](std::string_view t, Config& c) {
                  c.send_cost_explicit = parse_int_in(t, 0, 100'000'000, c.send_cost_ns);
                  return c.send_cost_explicit;
                }},
    SettingSpec{
        "SHIM_NODE_BANDWIDTH", "bytes per second, optional K|M|G suffix (0: unknown)", "the profile's, else unknown",
        "what one node's link carries to other nodes; with a send cost of 1 us or more, auto keeps SA beyond "
        "SHIM_ALLTOALL_SA_MAX while ppn x block <= 2 x send cost x this. Overrides the throughput measured in "
        "SHIM_PROFILE",
        [](std::string_view t, Config& c) {
          c.node_bandwidth_explicit = parse_bytes_in(t, 0, std::numeric_limits<std::int64_t>::max(), c.node_bandwidth);
          return c.node_bandwidth_explicit;
        }},
    SettingSpec{"SHIM_ALLTOALL_SA_MAX", "bytes, optional K|M|G suffix", "4K",
                "auto picks SA while ppn x block bytes <= this",
                [](std::string_view t, Config& c) { return parse_byte_size(t, c.alltoall_thresholds.sa_max_bytes); }},
    SettingSpec{
        "SHIM_ALLTOALL_LEADER_MAX", "bytes, optional K|M|G suffix", "8K",
        "offload NICs, beyond 64 node-pair partners (ceil((nodes - 1) / ppn)): auto picks leader-based while "
        "ppn^2 x block bytes <= this",
        [](std::string_view t, Config& c) { return parse_byte_size(t, c.alltoall_thresholds.leader_max_bytes); }},
    SettingSpec{"SHIM_ALLTOALL_RAIL_P2P_MAX", "bytes, optional K|M|G suffix", "32K",
                "SA, RD and leader-based: the inter-node step posts its messages at once while each is <= this "
                "many bytes; larger ones go through MPI_Alltoall",
                [](std::string_view t, Config& c) {
                  return parse_byte_size(t, c.alltoall_thresholds.rail_point_to_point_max_bytes);
                }},
    SettingSpec{"SHIM_PROFILE", "path of a shim-probe profile (JSON)", "unset (no profile)",
                "the measured network: subnets for ECO broadcasts, NIC class, tree fan-out. A file that cannot be "
                "used is reported in one line and ignored",
                [](std::string_view t, Config& c) {
                  if (t.empty() || t.size() >= c.profile_path.size()) return false;
                  c.profile_path.fill('\0');
                  t.copy(c.profile_path.data(), t.size());
                  return true;
                }},
    SettingSpec{"SHIM_BCAST", "auto|native|eco|twolevel|scatter-allgather", "auto",
                "broadcast algorithm; auto chooses from the policy table (shim-info prints it)",
                [](std::string_view t, Config& c) { return parse_choice(t, coll::kBcastAlgorithms, c.bcast); }},
    SettingSpec{"SHIM_BCAST_K", "integer 1..64", "the profile's, else 2",
                "fan-out of broadcast trees between nodes (1: a chain)",
                [](std::string_view t, Config& c) { return parse_int_in(t, 1, 64, c.bcast_k); }},
    SettingSpec{"SHIM_BCAST_SEGMENT", "bytes >= 1K, optional K|M|G suffix",
                "ECO: the profile's, else 4K up to 16K messages, 8K beyond",
                "broadcasts larger than this travel the tree in pipelined segments of this size. ECO's default "
                "comes from the profile: a segment takes 4x a message's fixed cost on the slowest link between "
                "subnets, a power of two from 4K to 64K",
                [](std::string_view t, Config& c) {
                  return parse_bytes_in(t, 1024, std::numeric_limits<std::int64_t>::max(), c.bcast_segment_bytes);
                }},
    SettingSpec{"SHIM_MIRROR_SEGMENTS", "contiguous|per-process", "contiguous",
                "memory of a mirrored window's node copy: one contiguous array, or each process's block on pages "
                "of its own (MPI's alloc_shared_noncontig: no page shared between NUMA nodes; merges of ranges "
                "that cross blocks then go through a scratch copy)",
                [](std::string_view t, Config& c) {
                  if (t != "contiguous" && t != "per-process") return false;
                  c.mirror_per_process_segments = t == "per-process";
                  return true;
                }},
    SettingSpec{
        "SHIM_ACCUMULATE", "auto|owner|caller|native", "auto",
        "path of the accumulate family on windows from MPI_Win_allocate and MPI_Win_create: owner-computes (same "
        "node in shared memory or by cross-memory attach, remote through the target node's server), "
        "caller-computes (lock, get, compute, put, unlock) or native MPI; auto chooses from the policy table. "
        "The window info key shim_accumulate overrides it per window",
        [](std::string_view t, Config& c) { return parse_choice(t, rma::kAccumulatePaths, c.accumulate); }},
    SettingSpec{"SHIM_SERVER", "0|1", "1",
                "1: one communication server thread per node (in its lowest world rank) applies accumulates "
                "shipped from other nodes; MPI is then initialised with MPI_THREAD_MULTIPLE underneath. 0: no "
                "thread, and windows spanning nodes go native",
                [](std::string_view t, Config& c) { return parse_switch(t, c.server); }},
    SettingSpec{"SHIM_SERVER_POLL", "microseconds 1..100000", "1000",
                "longest sleep of an idle server between polls; it backs off to this from busy polling, so "
                "larger values cost less idle CPU and more latency for the first request after a quiet spell",
                [](std::string_view t, Config& c) { return parse_int_in(t, 1, 100000, c.server_poll_max_us); }},
    SettingSpec{"SHIM_SERVER_CLUSTER", "budget|auto|integer >= 1", "budget",
                "servers per cooperative cluster: each origin sends to one server of each cluster, which forwards "
                "to the target node's server, so a server buffers requests from about N/g processes instead of N. "
                "budget: 1 while an unclustered server's request buffers (processes x credits x buffer size) fit "
                "in 64 MiB, else ceil(sqrt(nodes)). 1: every origin sends to the target's server directly. auto: "
                "ceil(sqrt(nodes)). Larger than the node count: the node count",
                [](std::string_view t, Config& c) {
                  if (t == "budget" || t == "auto") {
                    c.server_cluster = t == "budget" ? rma::kClusterBeyondBudget : rma::kClusterSquareRoot;
                    return true;
                  }
                  return parse_int_in(t, 1, 1 << 30, c.server_cluster);
                }},
    SettingSpec{"SHIM_SERVER_CREDITS", "integer 1..1024", "8",
                "messages a process may have unreleased at one server (and a server at another): each is one "
                "request buffer there, so a server's buffers are bounded by construction",
                [](std::string_view t, Config& c) { return parse_int_in(t, 1, 1024, c.server_credits); }},
    SettingSpec{"SHIM_SERVER_BUFFER_SIZE", "bytes 1K..64M, optional K|M|G suffix", "16K",
                "one server request buffer: the largest message to a server; larger accumulates travel in chunks",
                [](std::string_view t, Config& c) {
                  return parse_bytes_in(t, 1024, std::int64_t{64} << 20, c.server_buffer_bytes);
                }},
};

}  // namespace

std::span<const SettingSpec> setting_specs() { return kSpecs; }

bool parse_byte_size(std::string_view text, std::int64_t& bytes) {
  std::int64_t shift = 0;
  if (!text.empty()) {
    switch (text.back()) {
      case 'k':
      case 'K':
        shift = 10;
        break;
      case 'm':
      case 'M':
        shift = 20;
        break;
      case 'g':
      case 'G':
        shift = 30;
        break;
      default:
        break;
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
