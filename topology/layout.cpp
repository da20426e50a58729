#include "topology/layout.hpp"

#include <algorithm>
#include <map>
#include <sstream>

namespace shim::topo {

Layout Layout::from_node_keys(std::span<const std::int64_t> node_key) {
  Layout layout;
  const int size = static_cast<int>(node_key.size());
  layout.node_of_.resize(size);
  layout.local_of_.resize(size);

  std::map<std::int64_t, int> node_index;
  for (int rank = 0; rank < size; ++rank) {
    auto [it, inserted] = node_index.try_emplace(node_key[rank], layout.nodes());
    if (inserted) layout.members_.emplace_back();
    const int node = it->second;
    layout.node_of_[rank] = node;
    layout.local_of_[rank] = static_cast<int>(layout.members_[node].size());
    layout.members_[node].push_back(rank);
  }

  if (size == 0) return layout;
  const auto [min_it, max_it] = std::minmax_element(layout.members_.begin(), layout.members_.end(),
                                                    [](const auto& a, const auto& b) { return a.size() < b.size(); });
  layout.min_ppn_ = static_cast<int>(min_it->size());
  layout.max_ppn_ = static_cast<int>(max_it->size());

  layout.consecutive_ = layout.uniform();
  for (int rank = 0; rank < size && layout.consecutive_; ++rank) {
    layout.consecutive_ = rank == layout.node_of_[rank] * layout.max_ppn_ + layout.local_of_[rank];
  }
  return layout;
}

std::vector<int> Layout::rail(int local) const {
  std::vector<int> ranks;
  for (const auto& node : members_) {
    if (local < static_cast<int>(node.size())) ranks.push_back(node[local]);
  }
  return ranks;
}

std::string Layout::describe() const {
  std::ostringstream out;
  out << size() << (size() == 1 ? " rank" : " ranks");
  if (uniform()) {
    out << " = " << nodes() << (nodes() == 1 ? " node" : " nodes") << " x " << max_ppn_;
    out << (consecutive_ ? ", consecutive" : ", non-consecutive");
  } else {
    out << " on " << nodes() << " nodes (";
    for (int node = 0; node < nodes(); ++node) out << (node ? "," : "") << ppn(node);
    out << "), uneven";
  }
  return out.str();
}

}  // namespace shim::topo
