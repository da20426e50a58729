// Which server an origin sends to (after Yu et al., "Cooperative server
// clustering for a scalable GAS model on petascale Cray XT5 systems", 2010):
// the node servers form floor(nodes / g) clusters of consecutive nodes, as
// even as can be (widths g or more, differing by one at most: no small
// remainder cluster serves a large share of the job), and each origin is
// assigned to one server in every cluster (world rank mod the cluster's
// width). A request for node t goes to the server of t's cluster that the
// origin is assigned to; that server applies it if it is t's own, and
// forwards it to t's server otherwise; a server's own process, assigned to
// its own server, sends to the rest of that cluster directly. A server
// therefore holds request buffers for about N/g + g origins and for the
// g - 1 other servers of its cluster, instead of for all N processes. No
// MPI here.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace shim::rma {

// SHIM_SERVER_CLUSTER's two rules besides a fixed width g >= 1.
inline constexpr int kClusterSquareRoot = 0;     // auto: ceil(sqrt(nodes)), as Yu et al. suggest
inline constexpr int kClusterBeyondBudget = -1;  // the default
// The default leaves the servers unclustered (no forwarding hop) while an
// unclustered server's request buffers, processes x credits x buffer bytes,
// stay within this, and clusters them ceil(sqrt(nodes)) wide beyond it.
// 64 MiB per node is 512 processes at 8 credits of 16 KiB; up to there the
// buffers are of the order of what each process's MPI keeps for the rest
// of the job anyway (about 80 KiB per process measured here, README "Server
// clustering"), and clustering would buy little memory for a forwarding hop.
inline constexpr std::int64_t kDirectPoolBudget = std::int64_t{64} << 20;

// The cluster width, between 1 and `nodes`, for `requested` (a width, or
// one of the rules above) in a job of `processes`, each of which holds
// `bytes_per_origin` (credits x buffer bytes) at a server it sends to.
int resolve_cluster_size(int requested, int nodes, std::int64_t processes, std::int64_t bytes_per_origin);
// The same decision in words, for SHIM_VERBOSE and shim-info.
std::string explain_cluster_size(int requested, int nodes, std::int64_t processes, std::int64_t bytes_per_origin);

// `nodes` consecutive nodes cut into floor(nodes / width) clusters of at
// least `width` nodes whose widths differ by one at most, the wider first.
struct ClusterSplit {
  ClusterSplit(std::int64_t nodes, std::int64_t width);
  std::int64_t cluster_of(std::int64_t node) const;
  std::int64_t first_node(std::int64_t cluster) const;
  std::int64_t width(std::int64_t cluster) const { return cluster < wide_ ? narrow_ + 1 : narrow_; }

  std::int64_t clusters = 1;

 private:
  std::int64_t narrow_ = 1;
  std::int64_t wide_ = 0;  // clusters of narrow_ + 1 nodes
};

class ServerMap {
 public:
  // `node_of_rank[r]`: the node (0 .. nodes - 1) of world rank r; a node's
  // server is its lowest world rank. `cluster_size`: a width as
  // resolve_cluster_size() gives it.
  ServerMap(std::vector<int> node_of_rank, int cluster_size);

  int nodes() const { return static_cast<int>(server_of_node_.size()); }
  int processes() const { return static_cast<int>(node_of_rank_.size()); }
  // The widest cluster's width.
  int cluster_size() const { return static_cast<int>(split_.width(0)); }
  int clusters() const { return static_cast<int>(split_.clusters); }
  int node_of(int world_rank) const { return node_of_rank_[static_cast<std::size_t>(world_rank)]; }
  int server_of_node(int node) const { return server_of_node_[static_cast<std::size_t>(node)]; }
  // The node `server` serves, or -1 when that world rank runs no server.
  int node_of_server(int server) const;
  int cluster_of(int node) const { return static_cast<int>(split_.cluster_of(node)); }
  // Nodes in the cluster of `node`.
  int cluster_width(int node) const { return static_cast<int>(split_.width(split_.cluster_of(node))); }

  // World rank of the server that `origin`'s requests for `target_node` go
  // to first.
  int first_hop(int origin, int target_node) const;
  // Origins whose first hop towards some other node is this node's server:
  // the ones it holds direct request buffers for.
  int direct_origins(int node) const;
  // Other servers of the cluster, which forward to this node's server.
  int forwarding_servers(int node) const { return cluster_width(node) - 1; }
  // Distinct processes that may send requests to this node's server: its
  // direct origins and the other servers of its cluster.
  int peers(int node) const;

 private:
  // The server of `target_node`'s cluster that `origin` is assigned to.
  int assigned_server(int origin, int target_node) const;
  bool sends_directly(int origin, int node) const;

  std::vector<int> node_of_rank_;
  std::vector<int> server_of_node_;
  std::vector<int> node_of_server_;  // by world rank; -1 for non-servers
  ClusterSplit split_;
};

// What one server holds, for M credits of B bytes per sender.
struct ServerFootprint {
  std::int64_t direct_origins = 0;
  std::int64_t forwarding_servers = 0;
  std::int64_t direct_bytes = 0;   // direct_origins x M x B
  std::int64_t forward_bytes = 0;  // forwarding_servers x M x B
  std::int64_t peers = 0;          // distinct processes that send to it
};

ServerFootprint footprint(const ServerMap& map, int node, std::int64_t credits, std::int64_t buffer_bytes);

// The same in closed form, without enumerating ranks, for `processes`
// ranks placed `ppn` consecutive ranks per node (the last node may hold
// fewer) and clusters `cluster_size` wide (a resolved width).
ServerFootprint model_footprint(std::int64_t processes, std::int64_t ppn, int cluster_size, std::int64_t node,
                                std::int64_t credits, std::int64_t buffer_bytes);
// The largest over the job's nodes (buffer bytes first, then peers).
ServerFootprint model_largest_footprint(std::int64_t processes, std::int64_t ppn, int cluster_size,
                                        std::int64_t credits, std::int64_t buffer_bytes);

}  // namespace shim::rma
