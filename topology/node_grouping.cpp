#include "topology/node_grouping.hpp"

#include <map>

namespace shim::topo {

std::uint64_t hash_processor_name(std::string_view name) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (unsigned char c : name) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return hash;
}

namespace {

// True when `key` determines `value` for every rank.
template <typename Key, typename Value>
bool is_function(std::span<const NodeEvidence> evidence, Key key, Value value) {
  std::map<std::int64_t, std::int64_t> seen;
  for (const NodeEvidence& e : evidence) {
    const auto [it, inserted] = seen.try_emplace(key(e), value(e));
    if (!inserted && it->second != value(e)) return false;
  }
  return true;
}

}  // namespace

NodeGrouping group_nodes(std::span<const NodeEvidence> evidence) {
  auto by_shm = [](const NodeEvidence& e) { return e.shared_node; };
  auto by_hash = [](const NodeEvidence& e) { return static_cast<std::int64_t>(e.name_hash); };

  std::map<std::int64_t, int> shm_group_sizes;
  for (const NodeEvidence& e : evidence) ++shm_group_sizes[e.shared_node];
  const bool all_singletons = evidence.size() > 1 && shm_group_sizes.size() == evidence.size();
  const bool agree = is_function(evidence, by_shm, by_hash) && is_function(evidence, by_hash, by_shm);

  NodeGrouping grouping;
  grouping.by_name = all_singletons || !agree;
  if (!grouping.by_name) {
    grouping.source = "shared-memory split, confirmed by processor names";
    for (const NodeEvidence& e : evidence) grouping.node_keys.push_back(e.shared_node);
    return grouping;
  }
  grouping.source = all_singletons ? "processor names (every shared-memory group was a single rank)"
                                   : "processor names (they disagree with the shared-memory split)";
  // Key = first rank with the same name, which is also a valid split color.
  std::map<std::int64_t, std::int64_t> first_rank;
  for (std::size_t rank = 0; rank < evidence.size(); ++rank) {
    const auto it = first_rank.try_emplace(by_hash(evidence[rank]), static_cast<std::int64_t>(rank)).first;
    grouping.node_keys.push_back(it->second);
  }
  return grouping;
}

std::int64_t virtual_node_of(int world_rank, int node_size) { return world_rank / node_size; }

}  // namespace shim::topo
