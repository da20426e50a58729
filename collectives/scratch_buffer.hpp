// Per-communicator staging memory. Kept between calls up to a cap, so small
// and medium collectives do not pay for allocation and first-touch each time;
// larger requests are allocated for the call and released after it.
#pragma once

#include <cstddef>

namespace shim::coll {

class ScratchBuffer {
 public:
  static constexpr std::size_t kRetainedBytes = std::size_t{64} << 20;
  static constexpr std::size_t kPage = 4096;
  // Requests from this size are mapped on their own, aligned to and advised
  // for transparent huge pages (x86-64's and 4K-granule AArch64's 2 MiB).
  // Why: a large scratch is fresh memory in every call beyond
  // kRetainedBytes, and first-touching it 4 KiB at a time dominated large
  // exchanges here: 2 GiB of staging cost 20 s of page faults in this VM,
  // where 1 GiB advised for huge pages faulted in 0.1 s against 3.5 s.
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;
  static constexpr std::size_t kMappedFromBytes = 2 * kHugePage;

  ScratchBuffer() = default;
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  ~ScratchBuffer() { release(); }

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
  bool allocate(std::size_t bytes);
  // Not named free: the simulated build's SMPI helpers define free as a macro.
  void release();

  // Mapped by mmap (else from operator new[]): only requests from
  // kMappedFromBytes are, and they get at least that capacity.
  bool mapped() const { return capacity_ >= kMappedFromBytes; }

  std::byte* memory_ = nullptr;
  std::size_t capacity_ = 0;
};

}  // namespace shim::coll
