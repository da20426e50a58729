// Deciding which ranks share a node. MPI_Comm_split_type(SHARED) is the
// primary source; processor names are the cross-check. When the two disagree
// (containers, namespaces, launchers that lie), or when every shared-memory
// group is a singleton (no shared-memory support), ranks are grouped by name.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace shim::topo {

// 64-bit FNV-1a of a processor name.
std::uint64_t hash_processor_name(std::string_view name);

struct NodeEvidence {
  std::uint64_t name_hash;   // hash_processor_name(MPI_Get_processor_name)
  std::int64_t shared_node;  // lowest rank of the rank's split_type(SHARED) group
};

struct NodeGrouping {
  bool by_name = false;
  std::vector<std::int64_t> node_keys;  // per rank; equal keys = same node
  std::string source;                   // for SHIM_VERBOSE and shim-info
};

NodeGrouping group_nodes(std::span<const NodeEvidence> evidence);

// SHIM_NODE_SIZE: world ranks [0,k), [k,2k), ... are one node each.
std::int64_t virtual_node_of(int world_rank, int node_size);

}  // namespace shim::topo
