// Per-message CPU costs that depend on where a message goes. SMPI's smpi/os,
// smpi/ois and smpi/or apply one curve to every message, but a real MPI
// sends between ranks of one node through shared memory, at a small fraction
// of what its network path costs (on the TCP platforms, 0.05 us against 7 us
// per small message on this machine: docs/scale/platforms.md). With
// use_node_costs, messages whose ends share a host (a rank's message to
// itself included) cost the node curve; the others keep the platform's.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace shim::sim {

// One of SMPI's cost curves, "size:offset:per-byte;size:offset:per-byte;..."
// (the format of smpi/os): a message of n bytes costs offset + n x per-byte
// of the last section that starts at or below n.
class CostCurve {
 public:
  // Returns false, leaving the curve empty, when `text` is not in that format.
  bool parse(std::string_view text);
  double seconds(std::size_t bytes) const;

 private:
  struct Section {
    std::size_t from;
    double offset;
    double per_byte;
  };
  std::vector<Section> sections_;
};

// `spec` is "OS/OIS/OR", each a curve for messages within a node. Returns
// false (and registers nothing) when it is malformed.
bool use_node_costs(std::string_view spec);

}  // namespace shim::sim
