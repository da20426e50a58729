#include <catch2/catch.hpp>
#include <complex>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/element_kind.hpp"
#include "mirror/block_distribution.hpp"
#include "mirror/sparse_merge.hpp"

using namespace shim;
using namespace shim::mirror;

TEST_CASE("block distribution tiles the range with balanced consecutive blocks", "[mirror]") {
  for (const std::int64_t count : {0, 1, 2, 5, 7, 64, 1001, 65537}) {
    for (const int parts : {1, 2, 3, 4, 7, 8, 13}) {
      const BlockDistribution blocks(count, parts);
      std::int64_t next = 0;
      for (int p = 0; p < parts; ++p) {
        const Range block = blocks.block(p);
        INFO("count " << count << " parts " << parts << " part " << p);
        CHECK(block.first == next);
        CHECK((block.count == count / parts || block.count == count / parts + 1));
        // Longer blocks come first.
        if (p > 0) CHECK(blocks.block(p - 1).count >= block.count);
        for (std::int64_t i = block.first; i < block.end(); ++i) REQUIRE(blocks.owner(i) == p);
        next = block.end();
      }
      CHECK(next == count);
    }
  }
}

TEST_CASE("block distribution owner lookup on counts beyond 2^32", "[mirror]") {
  const std::int64_t count = (std::int64_t{1} << 33) + 3;
  const BlockDistribution blocks(count, 5);
  for (int p = 0; p < 5; ++p) {
    const Range block = blocks.block(p);
    CHECK(blocks.owner(block.first) == p);
    CHECK(blocks.owner(block.end() - 1) == p);
  }
}

TEST_CASE("share cuts a patch into balanced slices inside it", "[mirror]") {
  const Range patch{100, 10};
  CHECK(share(patch, 3, 0).first == 100);
  CHECK(share(patch, 3, 0).count == 4);
  CHECK(share(patch, 3, 1).first == 104);
  CHECK(share(patch, 3, 2).first == 107);
  CHECK(share(patch, 3, 2).end() == 110);
  CHECK(share(patch, 16, 15).count == 0);
}

TEST_CASE("scaled_add is dst += scale * src in the element's arithmetic", "[mirror]") {
  SECTION("doubles") {
    std::vector<double> dst{1, 2, 3}, src{10, 20, 30};
    const double scale = 0.5;
    scaled_add(ElementKind::float64, dst.data(), src.data(), &scale, 3);
    CHECK(dst == std::vector<double>{6, 12, 18});
    scaled_add(ElementKind::float64, dst.data(), src.data(), nullptr, 3);
    CHECK(dst == std::vector<double>{16, 32, 48});
  }
  SECTION("narrow integers wrap without undefined behaviour") {
    std::vector<std::uint8_t> dst{250, 1};
    std::vector<std::uint8_t> src{10, 255};
    const std::uint8_t scale = 255;
    scaled_add(ElementKind::uint8, dst.data(), src.data(), &scale, 2);
    CHECK(dst[0] == static_cast<std::uint8_t>(250 + 255 * 10));
    CHECK(dst[1] == static_cast<std::uint8_t>(1 + 255 * 255));
    std::vector<std::int16_t> s16{32767};
    const std::int16_t one16[] = {1};
    scaled_add(ElementKind::int16, s16.data(), one16, nullptr, 1);
    CHECK(s16[0] == -32768);
    std::vector<std::int64_t> s64{INT64_MAX};
    const std::int64_t two = 2, one = 1;
    scaled_add(ElementKind::int64, s64.data(), &one, &two, 1);
    CHECK(s64[0] == INT64_MIN + 1);
  }
  SECTION("negative integer scale") {
    std::vector<std::int32_t> dst{5, 5};
    const std::vector<std::int32_t> src{2, -3};
    const std::int32_t scale = -4;
    scaled_add(ElementKind::int32, dst.data(), src.data(), &scale, 2);
    CHECK(dst == std::vector<std::int32_t>{-3, 17});
  }
  SECTION("complex scale multiplies as complex numbers") {
    std::vector<std::complex<double>> dst{{1, 1}};
    const std::vector<std::complex<double>> src{{2, 3}};
    const std::complex<double> scale{0, 1};
    scaled_add(ElementKind::complex_float64, dst.data(), src.data(), &scale, 1);
    CHECK(dst[0] == std::complex<double>(1 - 3, 1 + 2));
  }
  CHECK(element_size(ElementKind::complex_float32) == 8);
  CHECK(element_size(ElementKind::long_double) == sizeof(long double));
}

TEST_CASE("all_zero_bytes at every alignment and length", "[mirror]") {
  std::vector<unsigned char> data(64, 0);
  for (std::size_t start = 0; start < 9; ++start)
    for (std::size_t length = 0; start + length <= data.size(); ++length) {
      CHECK(all_zero_bytes(data.data() + start, length));
      if (length == 0) continue;
      data[start + length - 1] = 1;
      CHECK_FALSE(all_zero_bytes(data.data() + start, length));
      data[start + length - 1] = 0;
      data[start] = 0x80;
      CHECK_FALSE(all_zero_bytes(data.data() + start, length));
      data[start] = 0;
    }
}

namespace {

// Three nodes' slices of 10 doubles, merged by the sparse path, against the
// plain element-wise sum.
std::vector<double> sparse_merge_of(const std::vector<std::vector<double>>& nodes, std::int64_t block) {
  const SliceBlocks shape{static_cast<std::int64_t>(nodes[0].size()), block, sizeof(double)};
  std::vector<std::int64_t> ids, id_offset{0}, data_offset;
  std::vector<std::byte> data;
  for (const auto& node : nodes) {
    const auto* bytes = reinterpret_cast<const std::byte*>(node.data());
    const std::vector<std::int64_t> mine = nonzero_blocks(shape, bytes);
    const std::vector<std::byte> packed = pack_blocks(shape, bytes, mine);
    CHECK(packed.size() == shape.bytes_of(mine));
    data_offset.push_back(static_cast<std::int64_t>(data.size()));
    ids.insert(ids.end(), mine.begin(), mine.end());
    data.insert(data.end(), packed.begin(), packed.end());
    id_offset.push_back(static_cast<std::int64_t>(ids.size()));
  }
  std::vector<double> result = nodes[0];  // node 0 folds into its own copy
  fold_contributions(ElementKind::float64, shape, reinterpret_cast<std::byte*>(result.data()),
                     {ids, id_offset, data, data_offset});
  return result;
}

}  // namespace

TEST_CASE("sparse merge equals the element-wise sum for every block size", "[mirror]") {
  const std::vector<std::vector<double>> nodes = {
      {1, 0, 0, 0, 0, 0, 0, 0, 0, 2},
      {0, 0, 0, 3, 4, 0, 0, 0, 0, 0},
      {5, 0, 0, 0, 0, 0, 0, 0, 0, 0},
  };
  std::vector<double> sum(10, 0.0);
  for (const auto& node : nodes)
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += node[i];
  for (const std::int64_t block : {1, 2, 3, 4, 7, 10, 64}) {
    INFO("block " << block);
    CHECK(sparse_merge_of(nodes, block) == sum);
  }
}

TEST_CASE("sparse merge sends only non-zero blocks", "[mirror]") {
  const std::vector<double> slice = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
  const SliceBlocks shape{11, 4, sizeof(double)};
  const auto ids = nonzero_blocks(shape, reinterpret_cast<const std::byte*>(slice.data()));
  CHECK(ids == std::vector<std::int64_t>{0});
  CHECK(shape.blocks() == 3);
  CHECK(shape.length_of(2) == 3);
  CHECK(shape.bytes_of(std::vector<std::int64_t>{2}) == 3 * sizeof(double));
  const SliceBlocks empty{0, 4, sizeof(double)};
  CHECK(empty.blocks() == 0);
}

TEST_CASE("sparse merge of all-zero slices leaves them zero", "[mirror]") {
  const std::vector<std::vector<double>> nodes(3, std::vector<double>(10, 0.0));
  CHECK(sparse_merge_of(nodes, 3) == std::vector<double>(10, 0.0));
}
