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
  static constexpr std::size_t kPage = 4096;

  // Returns at least `bytes` of uninitialised memory whose address has the
  // same offset within a page as `peer`, or nullptr when the allocation
  // fails. Valid until the next call or release_if_large().
  //
  // Why the offset: copies between buffers whose addresses differ by a small
  // amount modulo 4 KiB suffer 4K aliasing (loads falsely depending on
  // earlier stores); measured here, staging at page+16 against page-aligned
  // user buffers made 1 MiB SA exchanges 2-3x slower than staging at the same
  // page offset as the user's buffer.
  std::byte* get(std::size_t bytes, const void* peer);
  void release_if_large();

 private:
  struct PageFree {
    void operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t{kPage}); }
  };
  std::unique_ptr<std::byte[], PageFree> memory_;
  std::size_t capacity_ = 0;
};

}  // namespace shim::coll
