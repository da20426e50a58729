// Spin locks in memory shared by the processes of a node, one per stripe of
// a mirrored copy, so concurrent accumulates into the same elements are
// atomic while those into different stripes proceed in parallel. Each word
// sits on its own cache line. Waiters yield the core after a short spin:
// processes on a node may outnumber its cores.
#pragma once

#include <cstddef>
#include <cstdint>

namespace shim {

class StripeLocks {
 public:
  static constexpr int kStripes = 64;
  static constexpr std::size_t kWordStride = 64 / sizeof(std::uint32_t);
  // Bytes of shared memory the words need; zeroed memory is all unlocked.
  static constexpr std::size_t kBytes = kStripes * kWordStride * sizeof(std::uint32_t);

  StripeLocks() = default;
  explicit StripeLocks(std::uint32_t* words) : words_(words) {}

  void lock(int stripe);
  void unlock(int stripe);

 private:
  std::uint32_t& word(int stripe) { return words_[static_cast<std::size_t>(stripe) * kWordStride]; }
  std::uint32_t* words_ = nullptr;
};

}  // namespace shim
