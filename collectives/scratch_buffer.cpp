#include "collectives/scratch_buffer.hpp"

#include <new>

namespace shim::coll {

std::byte* ScratchBuffer::get(std::size_t bytes) {
  if (bytes > capacity_) {
    memory_.reset();
    capacity_ = 0;
    memory_.reset(new (std::nothrow) std::byte[bytes]);
    if (!memory_) return nullptr;
    capacity_ = bytes;
  }
  return memory_.get();
}

void ScratchBuffer::release_if_large() {
  if (capacity_ > kRetainedBytes) {
    memory_.reset();
    capacity_ = 0;
  }
}

}  // namespace shim::coll
