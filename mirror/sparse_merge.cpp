#include "mirror/sparse_merge.hpp"

#include <cstring>

namespace shim::mirror {

std::size_t SliceBlocks::bytes_of(std::span<const std::int64_t> ids) const {
  std::size_t bytes = 0;
  for (const std::int64_t id : ids) bytes += static_cast<std::size_t>(length_of(id)) * element_size;
  return bytes;
}

std::vector<std::int64_t> nonzero_blocks(const SliceBlocks& shape, const std::byte* slice) {
  std::vector<std::int64_t> ids;
  for (std::int64_t id = 0; id < shape.blocks(); ++id) {
    const std::byte* start = slice + static_cast<std::size_t>(shape.first_of(id)) * shape.element_size;
    if (!all_zero_bytes(start, static_cast<std::size_t>(shape.length_of(id)) * shape.element_size)) ids.push_back(id);
  }
  return ids;
}

std::vector<std::byte> pack_blocks(const SliceBlocks& shape, const std::byte* slice,
                                   std::span<const std::int64_t> ids) {
  std::vector<std::byte> packed(shape.bytes_of(ids));
  std::size_t at = 0;
  for (const std::int64_t id : ids) {
    const std::size_t bytes = static_cast<std::size_t>(shape.length_of(id)) * shape.element_size;
    std::memcpy(packed.data() + at, slice + static_cast<std::size_t>(shape.first_of(id)) * shape.element_size, bytes);
    at += bytes;
  }
  return packed;
}

void fold_contributions(ElementKind kind, const SliceBlocks& shape, std::byte* slice, const Contributions& sent) {
  // The first contribution to a block replaces the slice's own value (which
  // is already among the contributions, or zero), later ones add.
  std::vector<bool> seen(static_cast<std::size_t>(shape.blocks()), false);
  const std::size_t nodes = sent.data_offset.size();
  for (std::size_t n = 0; n < nodes; ++n) {
    std::size_t at = static_cast<std::size_t>(sent.data_offset[n]);
    for (std::int64_t i = sent.id_offset[n]; i < sent.id_offset[n + 1]; ++i) {
      const std::int64_t id = sent.ids[static_cast<std::size_t>(i)];
      const std::size_t length = static_cast<std::size_t>(shape.length_of(id));
      std::byte* target = slice + static_cast<std::size_t>(shape.first_of(id)) * shape.element_size;
      if (!seen[static_cast<std::size_t>(id)]) {
        std::memcpy(target, sent.data.data() + at, length * shape.element_size);
        seen[static_cast<std::size_t>(id)] = true;
      } else {
        scaled_add(kind, target, sent.data.data() + at, nullptr, length);
      }
      at += length * shape.element_size;
    }
  }
}

}  // namespace shim::mirror
