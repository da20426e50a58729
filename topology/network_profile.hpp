// The measured picture of the network that shim-probe writes and shim loads
// (SHIM_PROFILE): hosts, the cost matrix per message size, ECO's subnets, the
// NIC class and the fan-out of broadcast trees. Versioned JSON, read and
// written with nlohmann-json. No MPI.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topology/nic_class.hpp"
#include "topology/subnet_partition.hpp"

namespace shim::topo {

struct NetworkProfile {
  static constexpr int kVersion = 1;

  std::vector<std::string> hosts;
  std::vector<std::int64_t> sizes;  // message sizes measured, bytes
  std::vector<CostMatrix> cost;     // per size: one-way time between hosts, seconds
  std::int64_t partition_size = 0;  // the size whose costs the subnets were drawn from
  std::vector<int> subnet_of_host;  // subnets numbered from 0
  NicClass nic = NicClass::onload;
  // Throughput between two nodes with 1, 2, ... concurrent sender pairs,
  // bytes/s, the median over node pairs: what the NIC class was read from.
  std::vector<double> pair_throughput;
  int bcast_k = 2;
  // What a core spends per small message it streams to another node (the
  // median over node pairs); 0: not measured.
  double send_cost_s = 0;
  std::string created_by;

  int subnets() const;
  // The cost matrix the subnets came from.
  const CostMatrix& partition_cost() const;
  int host_index(std::string_view host) const;  // -1 when absent
  // What one node's link carries to other nodes, bytes/s: half the highest
  // pair throughput, which counts both directions; 0 when not measured.
  std::int64_t node_bandwidth() const;
};

struct ProfileLoad {
  std::optional<NetworkProfile> profile;
  std::string error;  // one line: source, position or field, reason
};

ProfileLoad parse_profile(std::string_view text, const std::string& source);
ProfileLoad load_profile_file(const std::string& path);
std::string profile_to_json(const NetworkProfile& profile);

}  // namespace shim::topo
