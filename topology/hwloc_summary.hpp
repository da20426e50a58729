// The hardware facts shim reports about a node, read from hwloc: how many
// packages, NUMA nodes, cores and PUs it has, and where its network devices
// sit. A NIC's locality decides which cores can drive it without crossing the
// inter-socket link, which is what NIC-aware placement needs to know. No MPI.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shim::topo {

// The hwloc OS device types that carry inter-node traffic.
enum class NetworkDeviceKind : std::uint8_t { network, openfabrics };

constexpr std::string_view name(NetworkDeviceKind kind) {
  return kind == NetworkDeviceKind::network ? "network" : "openfabrics";
}

struct NetworkDevice {
  std::string name;  // "eth0", "ib0", "mlx5_0"
  NetworkDeviceKind kind = NetworkDeviceKind::network;
  // The cpuset of the device's first non-I/O ancestor, as a list ("0-7").
  std::string local_cpus;
  // Logical indexes of the packages sharing a PU with local_cpus.
  std::vector<int> packages;
  // Logical indexes of the NUMA nodes in the nodeset of that ancestor.
  std::vector<int> numa_nodes;
};

struct HwlocSummary {
  int packages = 0;
  int numa_nodes = 0;
  int cores = 0;
  int pus = 0;
  std::vector<NetworkDevice> network_devices;  // in topology order
};

struct HwlocSummaryResult {
  HwlocSummary summary;
  std::string error;  // empty on success; otherwise `summary` is empty
  bool ok() const { return error.empty(); }
};

// The machine this process runs on, or the topology in HWLOC_XMLFILE when
// that variable is set (as every hwloc user does); a file that cannot be
// loaded is an error here, not a silent fallback to the real machine.
HwlocSummaryResult summarize_this_machine();

// The topology exported to `xml_path` (hwloc 2.x XML).
HwlocSummaryResult summarize_xml_file(const std::string& xml_path);

// "2 packages, 2 NUMA nodes, 8 cores, 16 PUs; NICs: mlx5_0 (openfabrics,
// package 0, NUMA 0), ib0 (network, package 0, NUMA 0), ..."
std::string describe_one_line(const HwlocSummary& summary);

// The counts, then one line per network device with its local CPUs.
std::vector<std::string> describe_lines(const HwlocSummary& summary);

}  // namespace shim::topo
