// Runs this rank's part of a broadcast tree with PMPI: receive each segment
// from the parent, forward it to the children, with several segments in
// flight, so a large message streams through the tree instead of being
// stored and forwarded whole at every hop.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "collectives/scratch_buffer.hpp"

namespace shim::coll {

// How a message of `count` elements of `type_size` bytes is cut: whole, or
// into segments of `segment_bytes` (the last takes the rest). The cuts
// depend on the message's size alone: ranks may describe the same message
// with different datatypes and counts (the root `count` elements of a
// contiguous type, the others that many times more of its element type),
// and every segment must be the same bytes everywhere. A rank whose
// elements fit a segment exactly sends and receives runs of whole elements
// of its own datatype; any other packs the message and moves byte ranges
// as MPI_PACKED, which matches any datatype.
struct SegmentPlan {
  enum class Mode : std::uint8_t { whole, elements, packed } mode = Mode::whole;
  std::int64_t segments = 1;
  std::int64_t per_segment = 0;  // elements, or bytes when packed
};
SegmentPlan plan_segments(std::int64_t count, std::int64_t type_size, std::int64_t segment_bytes);

struct BcastBuffer {
  void* base;
  MPI_Count count;
  MPI_Datatype type;
};

// This rank's place in one broadcast tree: parent -1 at the root.
struct RelayRole {
  int parent = -1;
  std::vector<int> children;  // in the order the data is sent
};

// Segment s travels down tree s mod roles.size() (collectives/bcast_tree:
// one tree, or one per turn when subnet entries take turns). The root is
// the root of every tree. Returns MPI_SUCCESS or an MPI error code.
int run_tree_bcast(const BcastBuffer& buffer, const std::vector<RelayRole>& roles, const SegmentPlan& plan,
                   std::int64_t message_bytes, MPI_Comm shadow, ScratchBuffer& scratch);

}  // namespace shim::coll
