// The shape of a communicator over nodes: which rank lives on which node, and
// the derived maps (local ranks, rails, leaders) that hierarchical algorithms
// need. Pure data, no MPI: built from one integer key per rank, so every
// layout the algorithms must survive can be constructed in a unit test.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace shim::topo {

class Layout {
 public:
  // node_key[r] identifies the node of rank r; equal keys mean the same node.
  // Nodes are numbered by first appearance in rank order, and ranks keep
  // their rank order inside a node (that is the local-rank order).
  static Layout from_node_keys(std::span<const std::int64_t> node_key);

  int size() const { return static_cast<int>(node_of_.size()); }
  int nodes() const { return static_cast<int>(members_.size()); }
  int node_of(int rank) const { return node_of_[rank]; }
  int local_rank(int rank) const { return local_of_[rank]; }
  int ppn(int node) const { return static_cast<int>(members_[node].size()); }
  int max_ppn() const { return max_ppn_; }
  int min_ppn() const { return min_ppn_; }
  int rank_of(int node, int local) const { return members_[node][local]; }
  std::span<const int> members(int node) const { return members_[node]; }
  bool same_node(int a, int b) const { return node_of_[a] == node_of_[b]; }

  // Every node holds the same number of processes.
  bool uniform() const { return min_ppn_ == max_ppn_; }
  // Uniform, and rank == node * ppn + local: each node is one ascending block
  // of ranks, so per-node data of a rank-ordered buffer is contiguous.
  bool consecutive() const { return consecutive_; }

  // The rail of local rank x: the ranks with local rank x, in node order
  // (nodes with fewer than x+1 processes are absent). Rail 0 is the leaders.
  std::vector<int> rail(int local) const;

  // "8 ranks = 2 nodes x 4, consecutive" or "7 ranks on 3 nodes (3,3,1), uneven".
  std::string describe() const;

 private:
  std::vector<int> node_of_;
  std::vector<int> local_of_;
  std::vector<std::vector<int>> members_;
  int max_ppn_ = 0;
  int min_ppn_ = 0;
  bool consecutive_ = false;
};

}  // namespace shim::topo
