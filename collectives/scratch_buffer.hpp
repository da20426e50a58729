// Per-communicator staging memory. Kept between calls up to a cap, so small
// and medium collectives do not pay for allocation and first-touch each time;
// larger requests are allocated for the call and released after it.
#pragma once

#include <cstddef>
#include <memory>

namespace shim::coll {

class ScratchBuffer {
 public:
  static constexpr std::size_t kRetainedBytes = std::size_t{64} << 20;

  // Returns at least `bytes` of uninitialised memory, or nullptr when the
  // allocation fails. Valid until the next call or release_if_large().
  std::byte* get(std::size_t bytes);
  void release_if_large();

 private:
  std::unique_ptr<std::byte[]> memory_;
  std::size_t capacity_ = 0;
};

}  // namespace shim::coll
