#include "rma/server_map.hpp"

#include <algorithm>
#include <cmath>

#include "common/format.hpp"

namespace shim::rma {

namespace {

bool within_direct_budget(std::int64_t processes, std::int64_t bytes_per_origin) {
  return processes * bytes_per_origin <= kDirectPoolBudget;
}

}  // namespace

int resolve_cluster_size(int requested, int nodes, std::int64_t processes, std::int64_t bytes_per_origin) {
  nodes = std::max(nodes, 1);
  if (requested == kClusterBeyondBudget) {
    requested = within_direct_budget(processes, bytes_per_origin) ? 1 : kClusterSquareRoot;
  }
  if (requested == kClusterSquareRoot) {
    int width = static_cast<int>(std::sqrt(static_cast<double>(nodes)));
    while (width * width < nodes) ++width;
    requested = width;
  }
  return std::clamp(requested, 1, nodes);
}

std::string explain_cluster_size(int requested, int nodes, std::int64_t processes, std::int64_t bytes_per_origin) {
  const int width = resolve_cluster_size(requested, nodes, processes, bytes_per_origin);
  const std::string nodes_text = std::to_string(std::max(nodes, 1)) + " nodes";
  if (requested >= 1) {
    return "SHIM_SERVER_CLUSTER=" + std::to_string(requested) +
           (width < requested ? ", at most the " + nodes_text : std::string());
  }
  const std::string square_root = "ceil(sqrt(" + nodes_text + ")) = " + std::to_string(width);
  if (requested == kClusterSquareRoot) return "SHIM_SERVER_CLUSTER=auto: " + square_root;
  const bool within = within_direct_budget(processes, bytes_per_origin);
  return "SHIM_SERVER_CLUSTER=budget: unclustered, a server would hold " + std::to_string(processes) + " processes x " +
         format_bytes(bytes_per_origin) + " of request buffers, " + (within ? "within " : "beyond ") +
         format_bytes(kDirectPoolBudget) + ": " + (within ? std::string("direct") : square_root);
}

ClusterSplit::ClusterSplit(std::int64_t nodes, std::int64_t width) {
  nodes = std::max<std::int64_t>(nodes, 1);
  width = std::clamp<std::int64_t>(width, 1, nodes);
  clusters = nodes / width;
  narrow_ = nodes / clusters;
  wide_ = nodes % clusters;
}

std::int64_t ClusterSplit::cluster_of(std::int64_t node) const {
  const std::int64_t in_wide = wide_ * (narrow_ + 1);
  return node < in_wide ? node / (narrow_ + 1) : wide_ + (node - in_wide) / narrow_;
}

std::int64_t ClusterSplit::first_node(std::int64_t cluster) const {
  return cluster <= wide_ ? cluster * (narrow_ + 1) : wide_ * (narrow_ + 1) + (cluster - wide_) * narrow_;
}

namespace {

int count_nodes(const std::vector<int>& node_of_rank) {
  int nodes = 0;
  for (const int node : node_of_rank) nodes = std::max(nodes, node + 1);
  return nodes;
}

}  // namespace

ServerMap::ServerMap(std::vector<int> node_of_rank, int cluster_size)
    : node_of_rank_(std::move(node_of_rank)),
      node_of_server_(node_of_rank_.size(), -1),
      split_(count_nodes(node_of_rank_), cluster_size) {
  const int nodes = count_nodes(node_of_rank_);
  server_of_node_.assign(static_cast<std::size_t>(nodes), -1);
  for (int rank = static_cast<int>(node_of_rank_.size()) - 1; rank >= 0; --rank) {
    server_of_node_[static_cast<std::size_t>(node_of(rank))] = rank;
  }
  for (int node = 0; node < nodes; ++node) node_of_server_[static_cast<std::size_t>(server_of_node(node))] = node;
}

int ServerMap::node_of_server(int server) const {
  if (server < 0 || server >= processes()) return -1;
  return node_of_server_[static_cast<std::size_t>(server)];
}

int ServerMap::assigned_server(int origin, int target_node) const {
  const auto first = static_cast<int>(split_.first_node(split_.cluster_of(target_node)));
  return server_of_node(first + origin % cluster_width(target_node));
}

// A server's own process does not hop through its own server thread: that
// hop would only hand the message on inside the process (an MPI self-send
// and a thread switch), so it sends to the other servers of its cluster
// directly, as the server thread would have forwarded it.
int ServerMap::first_hop(int origin, int target_node) const {
  const int assigned = assigned_server(origin, target_node);
  return assigned == origin ? server_of_node(target_node) : assigned;
}

// Whether `node`'s server is the origin's first hop towards some other node
// of its cluster than the origin's own.
bool ServerMap::sends_directly(int origin, int node) const {
  const int server = server_of_node(node);
  const auto first = static_cast<int>(split_.first_node(split_.cluster_of(node)));
  for (int target = first; target < first + cluster_width(node); ++target) {
    if (target != node_of(origin) && first_hop(origin, target) == server) return true;
  }
  return false;
}

int ServerMap::direct_origins(int node) const {
  int count = 0;
  for (int origin = 0; origin < processes(); ++origin) count += sends_directly(origin, node) ? 1 : 0;
  return count;
}

int ServerMap::peers(int node) const {
  int count = direct_origins(node);
  const auto first = static_cast<int>(split_.first_node(split_.cluster_of(node)));
  for (int other = first; other < first + cluster_width(node); ++other) {
    if (other != node && !sends_directly(server_of_node(other), node)) ++count;
  }
  return count;
}

ServerFootprint footprint(const ServerMap& map, int node, std::int64_t credits, std::int64_t buffer_bytes) {
  ServerFootprint f;
  f.direct_origins = map.direct_origins(node);
  f.forwarding_servers = map.forwarding_servers(node);
  f.direct_bytes = f.direct_origins * credits * buffer_bytes;
  f.forward_bytes = f.forwarding_servers * credits * buffer_bytes;
  f.peers = map.peers(node);
  return f;
}

ServerFootprint model_footprint(std::int64_t processes, std::int64_t ppn, int cluster_size, std::int64_t node,
                                std::int64_t credits, std::int64_t buffer_bytes) {
  const std::int64_t nodes = (processes + ppn - 1) / ppn;
  const ClusterSplit split(nodes, cluster_size);
  const std::int64_t first = split.first_node(split.cluster_of(node));
  const std::int64_t width = split.width(split.cluster_of(node));
  const std::int64_t position = node - first;
  // Ranks r < processes with r mod width == position.
  auto congruent = [&](std::int64_t residue) {
    return residue < processes ? (processes - 1 - residue) / width + 1 : 0;
  };
  // Node m's server is world rank m * ppn; it is assigned to itself in its
  // own cluster when that rank's residue is m's position.
  auto self_assigned = [&](std::int64_t m) { return (m * ppn) % width == m - first; };
  ServerFootprint f;
  if (width == 1) {
    f.direct_origins = processes - std::min(ppn, processes - node * ppn);
  } else {
    f.direct_origins = congruent(position) - (self_assigned(node) ? 1 : 0);
    for (std::int64_t other = first; other < first + width; ++other) {
      if (other != node && self_assigned(other)) ++f.direct_origins;
    }
  }
  f.forwarding_servers = width - 1;
  f.direct_bytes = f.direct_origins * credits * buffer_bytes;
  f.forward_bytes = f.forwarding_servers * credits * buffer_bytes;
  f.peers = f.direct_origins;
  for (std::int64_t other = first; other < first + width; ++other) {
    const bool direct = width > 1 && ((other * ppn) % width == position || self_assigned(other));
    if (other != node && !direct) ++f.peers;
  }
  return f;
}

ServerFootprint model_largest_footprint(std::int64_t processes, std::int64_t ppn, int cluster_size,
                                        std::int64_t credits, std::int64_t buffer_bytes) {
  const std::int64_t nodes = (processes + ppn - 1) / ppn;
  ServerFootprint largest;
  for (std::int64_t node = 0; node < nodes; ++node) {
    const ServerFootprint f = model_footprint(processes, ppn, cluster_size, node, credits, buffer_bytes);
    const auto key = [](const ServerFootprint& x) { return std::pair(x.direct_bytes + x.forward_bytes, x.peers); };
    if (key(f) > key(largest)) largest = f;
  }
  return largest;
}

}  // namespace shim::rma
