// N elements cut into P consecutive, balanced blocks: the first N % P blocks
// hold one element more. Used for a node's share of a mirrored copy, for the
// slices each local rank merges, and for distributed arrays over a
// communicator, so all three agree on the same arithmetic.
#pragma once

#include <cstdint>

namespace shim::mirror {

struct Range {
  std::int64_t first = 0;
  std::int64_t count = 0;
  std::int64_t end() const { return first + count; }
  bool contains(std::int64_t index) const { return index >= first && index < end(); }
};

class BlockDistribution {
 public:
  // count >= 0, parts >= 1.
  BlockDistribution(std::int64_t count, int parts);

  std::int64_t count() const { return count_; }
  int parts() const { return parts_; }
  Range block(int part) const;
  // The part whose block holds `index`; requires 0 <= index < count.
  int owner(std::int64_t index) const;

 private:
  std::int64_t count_;
  int parts_;
  std::int64_t base_;   // elements of every block
  std::int64_t extra_;  // blocks 0 .. extra_-1 hold one more
};

// Part `part` of `whole` cut into `parts` balanced blocks, offset into whole.
Range share(Range whole, int parts, int part);

}  // namespace shim::mirror
