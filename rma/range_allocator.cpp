#include "rma/range_allocator.hpp"

#include <iterator>

namespace shim::rma {

RangeAllocator::RangeAllocator(std::int64_t bytes, std::int64_t alignment)
    : capacity_(bytes / alignment * alignment), alignment_(alignment) {
  if (capacity_ > 0) free_.emplace(0, capacity_);
}

bool RangeAllocator::fits(std::int64_t bytes) const {
  if (bytes <= 0) return true;
  const std::int64_t wanted = rounded(bytes);
  for (const auto& [offset, length] : free_) {
    if (length >= wanted) return true;
  }
  return false;
}

std::optional<std::int64_t> RangeAllocator::take(std::int64_t bytes) {
  if (bytes <= 0) return 0;
  const std::int64_t wanted = rounded(bytes);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < wanted) continue;
    const std::int64_t offset = it->first;
    const std::int64_t left = it->second - wanted;
    free_.erase(it);
    if (left > 0) free_.emplace(offset + wanted, left);
    return offset;
  }
  return std::nullopt;
}

void RangeAllocator::give_back(std::int64_t offset, std::int64_t bytes) {
  if (bytes <= 0) return;
  std::int64_t start = offset;
  std::int64_t length = rounded(bytes);
  auto next = free_.lower_bound(start);
  if (next != free_.begin()) {
    const auto previous = std::prev(next);
    if (previous->first + previous->second == start) {
      start = previous->first;
      length += previous->second;
      free_.erase(previous);
    }
  }
  if (next != free_.end() && start + length == next->first) {
    length += next->second;
    free_.erase(next);
  }
  free_.emplace(start, length);
}

}  // namespace shim::rma
