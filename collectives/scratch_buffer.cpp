#include "collectives/scratch_buffer.hpp"

#include <cstdint>
#include <new>

namespace shim::coll {

std::byte* ScratchBuffer::get(std::size_t bytes, const void* peer) {
  const std::size_t needed = bytes + kPage;
  if (needed > capacity_) {
    memory_.reset();
    capacity_ = 0;
    memory_.reset(static_cast<std::byte*>(::operator new[](needed, std::align_val_t{kPage}, std::nothrow)));
    if (!memory_) return nullptr;
    capacity_ = needed;
  }
  return memory_.get() + (reinterpret_cast<std::uintptr_t>(peer) % kPage);
}

void ScratchBuffer::release_if_large() {
  if (capacity_ > kRetainedBytes) {
    memory_.reset();
    capacity_ = 0;
  }
}

}  // namespace shim::coll
