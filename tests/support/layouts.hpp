// Layouts for the unit tests: nodes of equal size in rank order, any
// placement from one node key per rank, and the shapes every schedule must
// survive.
#pragma once

#include <cstdint>
#include <vector>

#include "topology/layout.hpp"

namespace shim::test {

inline topo::Layout blocked(int nodes, int ppn) {
  std::vector<std::int64_t> keys;
  for (int n = 0; n < nodes; ++n) keys.insert(keys.end(), ppn, n);
  return topo::Layout::from_node_keys(keys);
}

inline topo::Layout from(std::vector<std::int64_t> keys) { return topo::Layout::from_node_keys(keys); }

// Every layout shape the algorithms must survive, small enough to enumerate.
inline std::vector<topo::Layout> layout_zoo() {
  std::vector<topo::Layout> zoo;
  for (int nodes = 1; nodes <= 5; ++nodes) {
    for (int ppn = 1; ppn <= 5; ++ppn) zoo.push_back(blocked(nodes, ppn));
  }
  zoo.push_back(from({0, 0, 0, 1, 1, 1, 2}));                          // 7 ranks, nodes of 3
  zoo.push_back(from({0, 1, 0, 1, 0, 1}));                             // round-robin
  zoo.push_back(from({1, 1, 0, 0}));                                   // nodes in reverse
  zoo.push_back(from({5, 9, 9, 5}));                                   // interleaved
  zoo.push_back(from({0, 0, 0, 0, 1, 2, 2}));                          // 4,1,2
  zoo.push_back(from({0, 1, 2, 0, 1, 2, 0, 1}));                       // round-robin, uneven
  zoo.push_back(from({3, 3, 2, 2, 1, 1, 0, 0, 0, 0}));                 // 2,2,2,4
  zoo.push_back(from({0, 1, 1, 1, 1, 1}));                             // 1,5
  zoo.push_back(blocked(9, 2));                                        // more nodes than processes per node
  zoo.push_back(from({0, 0, 1, 1, 1, 2, 3, 3, 4, 5, 5, 5, 6, 6, 6}));  // 2,3,1,2,1,3,3
  zoo.push_back(from({2, 0, 1, 2, 0, 1, 2, 0, 1, 3, 4}));              // round-robin, 5 nodes, uneven
  return zoo;
}

}  // namespace shim::test
