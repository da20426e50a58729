// Messages and blocks a rank sends, split by whether they leave the node.
// Counted from the schedule itself, so the PMPI path (stats) and the
// in-memory tests report the same numbers. A rail alltoall counts as a direct
// exchange among the rail: one message to every other member.
#pragma once

#include <cstdint>

#include "collectives/schedule.hpp"
#include "topology/layout.hpp"

namespace shim::coll {

struct Traffic {
  std::int64_t inter_messages = 0;
  std::int64_t inter_blocks = 0;
  std::int64_t intra_messages = 0;
  std::int64_t intra_blocks = 0;
  Traffic& operator+=(const Traffic& other);
  friend bool operator==(const Traffic&, const Traffic&) = default;
};

Traffic schedule_traffic(const Schedule& schedule, const topo::Layout& layout, int rank);

// What a flat exchange (every rank sends straight to every other rank) sends.
Traffic flat_traffic(const topo::Layout& layout, int rank);

}  // namespace shim::coll
