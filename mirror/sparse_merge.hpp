// The arithmetic of a sparse merge, on one contiguous slice of a node's copy:
// find the blocks holding a non-zero byte, pack them, and fold what every
// node sent back into the slice. Each node folds the same contributions in
// the same (node) order, so every copy ends bit-identical.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/element_kind.hpp"

namespace shim::mirror {

struct SliceBlocks {
  std::int64_t elements = 0;  // of the slice
  std::int64_t block = 1;     // elements per block; the last may be shorter
  std::size_t element_size = 1;

  // Not (elements + block - 1) / block: that overflows for a block near INT64_MAX.
  std::int64_t blocks() const { return elements == 0 ? 0 : (elements - 1) / block + 1; }
  std::int64_t first_of(std::int64_t id) const { return id * block; }
  std::int64_t length_of(std::int64_t id) const {
    const std::int64_t end = (id + 1) * block;
    return (end < elements ? end : elements) - id * block;
  }
  std::size_t bytes_of(std::span<const std::int64_t> ids) const;
};

// Ids of the blocks of `slice` with a non-zero byte, ascending.
std::vector<std::int64_t> nonzero_blocks(const SliceBlocks& shape, const std::byte* slice);

// The listed blocks, back to back.
std::vector<std::byte> pack_blocks(const SliceBlocks& shape, const std::byte* slice, std::span<const std::int64_t> ids);

// Every node's contribution, in node order: node n sent ids[id_offset[n] ..
// id_offset[n+1]) and their packed data starting at data_offset[n] (bytes).
struct Contributions {
  std::span<const std::int64_t> ids;
  std::span<const std::int64_t> id_offset;  // nodes + 1 entries
  std::span<const std::byte> data;
  std::span<const std::int64_t> data_offset;  // nodes entries
};

// Each block some node sent becomes the sum of what the nodes sent for it,
// in node order; blocks nobody sent are zero everywhere and stay untouched.
void fold_contributions(ElementKind kind, const SliceBlocks& shape, std::byte* slice, const Contributions& sent);

}  // namespace shim::mirror
