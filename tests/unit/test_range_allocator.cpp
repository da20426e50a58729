#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <vector>

#include "rma/range_allocator.hpp"

using shim::rma::RangeAllocator;

TEST_CASE("ranges are aligned, disjoint, inside the block, and come back whole", "[pool]") {
  RangeAllocator pool(1 << 16, 64);
  struct Taken {
    std::int64_t offset, bytes;
  };
  std::vector<Taken> taken;
  std::mt19937 random(7);
  for (int step = 0; step < 4000; ++step) {
    if (!taken.empty() && (random() % 3 == 0 || !pool.fits(2048))) {
      const std::size_t i = random() % taken.size();
      pool.give_back(taken[i].offset, taken[i].bytes);
      taken.erase(taken.begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    }
    const std::int64_t bytes = 1 + static_cast<std::int64_t>(random() % 2048);
    const auto offset = pool.take(bytes);
    REQUIRE(offset.has_value());
    CHECK(*offset % 64 == 0);
    CHECK(*offset + bytes <= pool.capacity());
    for (const Taken& other : taken) {
      CHECK((*offset + bytes <= other.offset || other.offset + other.bytes <= *offset));
    }
    taken.push_back({*offset, bytes});
  }
  for (const Taken& t : taken) pool.give_back(t.offset, t.bytes);
  CHECK(pool.empty());
  CHECK(pool.take(pool.capacity()) == std::int64_t{0});
}

TEST_CASE("first fit, neighbours merge, zero bytes always fit", "[pool]") {
  RangeAllocator pool(4096, 64);
  CHECK(pool.take(0) == std::int64_t{0});
  const auto a = pool.take(100);  // 128 bytes
  const auto b = pool.take(64);
  const auto c = pool.take(1000);
  CHECK(a == std::int64_t{0});
  CHECK(b == std::int64_t{128});
  CHECK(c == std::int64_t{192});
  CHECK_FALSE(pool.fits(4096));
  pool.give_back(*a, 100);
  pool.give_back(*b, 64);
  // The merged hole at the front takes 192 bytes, first.
  CHECK(pool.take(192) == std::int64_t{0});
  pool.give_back(0, 192);
  pool.give_back(*c, 1000);
  CHECK(pool.empty());
  CHECK_FALSE(pool.fits(4097));
}
