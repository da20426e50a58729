// First-fit allocation of byte ranges in one block of memory, for carving
// windows out of a communicator's pool. Freed ranges merge with their free
// neighbours. Pure: no MPI, unit-tested.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace shim::rma {

class RangeAllocator {
 public:
  // Ranges start at multiples of `alignment` (a power of two).
  RangeAllocator(std::int64_t bytes, std::int64_t alignment);

  // The offset of `bytes` free bytes, now taken; nothing when none fit.
  // Zero bytes take nothing and always fit.
  std::optional<std::int64_t> take(std::int64_t bytes);
  bool fits(std::int64_t bytes) const;
  // Gives back a range take() returned.
  void give_back(std::int64_t offset, std::int64_t bytes);

  std::int64_t capacity() const { return capacity_; }
  bool empty() const { return free_.size() == 1 && free_.begin()->second == capacity_; }

 private:
  std::int64_t rounded(std::int64_t bytes) const { return (bytes + alignment_ - 1) / alignment_ * alignment_; }

  std::int64_t capacity_;
  std::int64_t alignment_;
  std::map<std::int64_t, std::int64_t> free_;  // offset -> bytes
};

}  // namespace shim::rma
