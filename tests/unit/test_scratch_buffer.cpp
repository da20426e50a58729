#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "collectives/scratch_buffer.hpp"

using shim::coll::ScratchBuffer;

namespace {

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

}  // namespace

TEST_CASE("scratch memory lies at the peer's offset within a page, small or mapped", "[scratch]") {
  ScratchBuffer scratch;
  alignas(4096) static std::byte peer_page[4096 * 2];
  for (const std::size_t bytes : {std::size_t{1}, std::size_t{100000}, ScratchBuffer::kMappedFromBytes - 1,
                                  ScratchBuffer::kMappedFromBytes, ScratchBuffer::kMappedFromBytes * 3 + 17}) {
    for (const std::size_t offset : {std::size_t{0}, std::size_t{16}, std::size_t{4095}}) {
      const void* peer = peer_page + 4096 + offset;
      std::byte* memory = scratch.get(bytes, peer);
      REQUIRE(memory != nullptr);
      CHECK(address(memory) % ScratchBuffer::kPage == offset);
      // Every byte asked for is there to be written and read back.
      std::memset(memory, 0x5a, bytes);
      CHECK(memory[0] == std::byte{0x5a});
      CHECK(memory[bytes - 1] == std::byte{0x5a});
    }
  }
}

TEST_CASE("mapped scratch starts on a huge-page boundary, so each 2 MiB of it can be one huge page", "[scratch]") {
  ScratchBuffer scratch;
  std::byte* memory = scratch.get(ScratchBuffer::kMappedFromBytes, nullptr);
  REQUIRE(memory != nullptr);
  CHECK(address(memory) % ScratchBuffer::kHugePage == 0);
}

TEST_CASE("scratch within the retained size is kept between calls; beyond it, released", "[scratch]") {
  ScratchBuffer scratch;
  std::byte* kept = scratch.get(ScratchBuffer::kRetainedBytes / 2, nullptr);
  REQUIRE(kept != nullptr);
  kept[0] = std::byte{7};
  scratch.release_if_large();
  std::byte* again = scratch.get(1000, nullptr);
  CHECK(again == kept);
  CHECK(again[0] == std::byte{7});

  std::byte* large = scratch.get(ScratchBuffer::kRetainedBytes + 1, nullptr);
  REQUIRE(large != nullptr);
  large[ScratchBuffer::kRetainedBytes] = std::byte{1};
  scratch.release_if_large();
  // Released: the next request is served by a fresh allocation, whose bytes
  // are there to be used.
  std::byte* fresh = scratch.get(ScratchBuffer::kRetainedBytes + 1, nullptr);
  REQUIRE(fresh != nullptr);
  fresh[ScratchBuffer::kRetainedBytes] = std::byte{2};
  CHECK(fresh[ScratchBuffer::kRetainedBytes] == std::byte{2});
}

TEST_CASE("a request too large to round up fails instead of wrapping around", "[scratch]") {
  ScratchBuffer scratch;
  CHECK(scratch.get(std::numeric_limits<std::size_t>::max() - 100, nullptr) == nullptr);
  CHECK(scratch.get(std::numeric_limits<std::size_t>::max() - 3 * ScratchBuffer::kHugePage, nullptr) == nullptr);
  CHECK(scratch.get(100, nullptr) != nullptr);
}
