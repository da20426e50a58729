#include "rma/access_order.hpp"

#include <algorithm>

namespace shim::rma {

ByteSpan items_span(std::int64_t offset, std::int64_t count, std::int64_t extent, std::int64_t true_lb,
                    std::int64_t true_extent) {
  if (count <= 0 || true_extent <= 0) return {};
  std::int64_t first = 0, stride = 0, last = 0, end = 0;
  if (__builtin_add_overflow(offset, true_lb, &first) || __builtin_mul_overflow(count - 1, extent, &stride) ||
      __builtin_add_overflow(first, stride, &last) ||
      __builtin_add_overflow(std::max(first, last), true_extent, &end)) {
    // Beyond any window: MPI refuses the access; until then it covers all.
    return kEverything;
  }
  return {std::min(first, last), end};
}

void AccessOrder::mpi_completed_all() { std::fill(by_mpi_.begin(), by_mpi_.end(), ByteSpan{}); }

void AccessOrder::shim_completed_all() { std::fill(by_shim_.begin(), by_shim_.end(), ByteSpan{}); }

void AccessOrder::widen(std::vector<ByteSpan>& spans, int target, const ByteSpan& span) {
  if (span.empty()) return;
  ByteSpan& held = at(spans, target);
  held = held.empty() ? span : ByteSpan{std::min(held.begin, span.begin), std::max(held.end, span.end)};
}

}  // namespace shim::rma
