#include "mirror/block_distribution.hpp"

namespace shim::mirror {

BlockDistribution::BlockDistribution(std::int64_t count, int parts)
    : count_(count), parts_(parts), base_(count / parts), extra_(count % parts) {}

Range BlockDistribution::block(int part) const {
  const std::int64_t p = part;
  const std::int64_t first = p * base_ + (p < extra_ ? p : extra_);
  return {first, base_ + (p < extra_ ? 1 : 0)};
}

int BlockDistribution::owner(std::int64_t index) const {
  const std::int64_t in_long_blocks = extra_ * (base_ + 1);
  if (index < in_long_blocks) return static_cast<int>(index / (base_ + 1));
  // Past the long blocks every block has base_ >= 1 elements (index < count).
  return static_cast<int>(extra_ + (index - in_long_blocks) / base_);
}

Range share(Range whole, int parts, int part) {
  const Range piece = BlockDistribution(whole.count, parts).block(part);
  return {whole.first + piece.first, piece.count};
}

}  // namespace shim::mirror
