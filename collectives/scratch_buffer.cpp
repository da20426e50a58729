#include "collectives/scratch_buffer.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <limits>
#include <new>

namespace shim::coll {

namespace {

// `bytes` (a multiple of kHugePage) of anonymous memory starting on a
// kHugePage boundary, so that every 2 MiB of it can be one huge page; nullptr
// when the mapping fails.
std::byte* map_huge_page_aligned(std::size_t bytes) {
  constexpr std::size_t align = ScratchBuffer::kHugePage;
  void* raw = mmap(nullptr, bytes + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (start + align - 1) & ~(std::uintptr_t{align} - 1);
  if (aligned > start) munmap(raw, aligned - start);
  const std::uintptr_t tail = start + bytes + align - (aligned + bytes);
  if (tail > 0) munmap(reinterpret_cast<void*>(aligned + bytes), tail);
  // Advice only: where transparent huge pages are off, 4 KiB pages serve.
  madvise(reinterpret_cast<void*>(aligned), bytes, MADV_HUGEPAGE);
  return reinterpret_cast<std::byte*>(aligned);
}

}  // namespace

bool ScratchBuffer::allocate(std::size_t bytes) {
  // Beyond this, rounding up (here and in the mapping) would wrap around.
  if (bytes > std::numeric_limits<std::size_t>::max() - 2 * kHugePage) return false;
  if (bytes >= kMappedFromBytes) {
    const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    memory_ = map_huge_page_aligned(rounded);
    capacity_ = memory_ ? rounded : 0;
  } else {
    memory_ = static_cast<std::byte*>(::operator new[](bytes, std::align_val_t{kPage}, std::nothrow));
    capacity_ = memory_ ? bytes : 0;
  }
  return memory_ != nullptr;
}

void ScratchBuffer::release() {
  if (memory_ != nullptr) {
    if (mapped()) {
      munmap(memory_, capacity_);
    } else {
      ::operator delete[](memory_, std::align_val_t{kPage});
    }
  }
  memory_ = nullptr;
  capacity_ = 0;
}

std::byte* ScratchBuffer::get(std::size_t bytes, const void* peer) {
  if (bytes > std::numeric_limits<std::size_t>::max() - kPage) return nullptr;
  const std::size_t needed = bytes + kPage;
  if (needed > capacity_) {
    release();
    if (!allocate(needed)) return nullptr;
  }
  return memory_ + (reinterpret_cast<std::uintptr_t>(peer) % kPage);
}

void ScratchBuffer::release_if_large() {
  if (capacity_ > kRetainedBytes) release();
}

}  // namespace shim::coll
