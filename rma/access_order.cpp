#include "rma/access_order.hpp"

#include <algorithm>

namespace shim::rma {

ByteSpan items_span(std::int64_t offset, std::int64_t count, std::int64_t extent, std::int64_t true_lb,
                    std::int64_t true_extent) {
  if (count <= 0 || true_extent <= 0) return {};
  const std::int64_t first = offset + true_lb;
  const std::int64_t last = first + (count - 1) * extent;
  return {std::min(first, last), std::max(first, last) + true_extent};
}

void AccessOrder::mpi_completed_all() { std::fill(by_mpi_.begin(), by_mpi_.end(), ByteSpan{}); }

void AccessOrder::shim_completed_all() { std::fill(by_shim_.begin(), by_shim_.end(), ByteSpan{}); }

void AccessOrder::widen(std::vector<ByteSpan>& spans, int target, const ByteSpan& span) {
  if (span.empty()) return;
  ByteSpan& held = at(spans, target);
  held = held.empty() ? span : ByteSpan{std::min(held.begin, span.begin), std::max(held.end, span.end)};
}

}  // namespace shim::rma
