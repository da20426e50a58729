// Orders, per target, what MPI carries for the user (MPI_Put, MPI_Get and
// their variants) with what shim carries (the accumulate family on an owner
// or caller window). MPI leaves a put or get and an accumulate to one
// location undefined unless a flush or unlock separates them, but MPICH
// orders them, and programs rely on it (ARMCI-MPI with
// ARMCI_RMA_ATOMICITY=0: put, flush_local, accumulate, flush_local, get). So
// each side remembers the bytes it may still have in flight at each target,
// as one span (conservative: a span covers everything between its ends), and
// the other side completes them before touching overlapping bytes. Pure: no
// MPI, unit-tested.
#pragma once

#include <cstdint>
#include <vector>

namespace shim::rma {

// Bytes [begin, end) of a target's window; empty when begin == end.
struct ByteSpan {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  bool empty() const { return begin >= end; }
  bool overlaps(const ByteSpan& other) const {
    return !empty() && !other.empty() && begin < other.end && other.begin < end;
  }
};

// Every byte, and beyond: what an access whose bounds overflow covers.
inline constexpr ByteSpan kEverything{INT64_MIN, INT64_MAX};

// The bytes `count` items of a type touch from byte `offset`: each item spans
// [offset + i * extent + true_lb, ... + true_extent). Extents may be negative
// (resized types), so both ends are checked. kEverything where the bounds
// overflow.
ByteSpan items_span(std::int64_t offset, std::int64_t count, std::int64_t extent, std::int64_t true_lb,
                    std::int64_t true_extent);

class AccessOrder {
 public:
  explicit AccessOrder(std::size_t targets) : by_mpi_(targets), by_shim_(targets) {}

  // MPI's put or get to `target` may be in flight until MPI completes it at
  // the target (flush, unlock, fence, complete; not a local flush).
  void mpi_issued(int target, const ByteSpan& span) { widen(by_mpi_, target, span); }
  bool mpi_in_flight(int target, const ByteSpan& span) const { return at(by_mpi_, target).overlaps(span); }
  void mpi_completed(int target) { at(by_mpi_, target) = {}; }
  void mpi_completed_all();

  // An accumulate shim shipped to `target`'s server may be unapplied until
  // shim's completion, which waits for every target at once.
  void shim_issued(int target, const ByteSpan& span) { widen(by_shim_, target, span); }
  bool shim_in_flight(int target, const ByteSpan& span) const { return at(by_shim_, target).overlaps(span); }
  void shim_completed_all();

 private:
  static ByteSpan& at(std::vector<ByteSpan>& spans, int target) { return spans[static_cast<std::size_t>(target)]; }
  static const ByteSpan& at(const std::vector<ByteSpan>& spans, int target) {
    return spans[static_cast<std::size_t>(target)];
  }
  static void widen(std::vector<ByteSpan>& spans, int target, const ByteSpan& span);

  std::vector<ByteSpan> by_mpi_;
  std::vector<ByteSpan> by_shim_;
};

}  // namespace shim::rma
