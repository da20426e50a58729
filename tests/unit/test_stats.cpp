#include <catch2/catch.hpp>

#include <string>

#include "shim/stats.hpp"

using shim::coll::AlltoallAlgorithm;
using shim::coll::Traffic;
namespace stats = shim::stats;

TEST_CASE("size classes are powers of two, upper bound inclusive", "[stats]") {
  CHECK(stats::size_class(0) == 0);
  CHECK(stats::size_class(1) == 0);
  CHECK(stats::size_class(2) == 1);
  CHECK(stats::size_class(3) == 2);
  CHECK(stats::size_class(512) == 9);
  CHECK(stats::size_class(513) == 10);
  CHECK(stats::size_class(std::int64_t{1} << 40) == 40);
  CHECK(stats::size_class_label(9) == "<=512 B");
}

TEST_CASE("recorded calls turn block counts into bytes and flat comparisons", "[stats]") {
  stats::reset();
  const Traffic traffic{3, 12, 1, 4};
  const Traffic flat{8, 8, 3, 3};
  stats::record({AlltoallAlgorithm::sa, 100, true, 12, &traffic, flat});
  stats::record({AlltoallAlgorithm::sa, 100, false, 12, &traffic, flat});
  stats::record({AlltoallAlgorithm::native, 100000, false, 12, nullptr, flat});
  const stats::Table table = stats::snapshot();
  const stats::Counters sa = stats::total(table, AlltoallAlgorithm::sa);
  CHECK(sa[stats::calls] == 2);
  CHECK(sa[stats::collective_calls] == 1);
  CHECK(sa[stats::payload_bytes] == 2 * 12 * 100);
  CHECK(sa[stats::inter_messages] == 6);
  CHECK(sa[stats::inter_bytes] == 2 * 12 * 100);
  CHECK(sa[stats::intra_bytes] == 2 * 4 * 100);
  CHECK(sa[stats::flat_inter_messages] == 16);
  const stats::Counters native = stats::total(table, AlltoallAlgorithm::native);
  CHECK(native[stats::calls] == 1);
  CHECK(native[stats::inter_messages] == 0);
  CHECK(native[stats::flat_inter_bytes] == 800000);

  const auto lines = stats::report_lines(table, "summed over 12 processes");
  REQUIRE(lines.size() == 3);
  CHECK(lines[1].find("algo=native block<=128 KiB calls=1 ops=0") != std::string::npos);
  CHECK(lines[1].find("inter_msgs=n/a") != std::string::npos);
  CHECK(lines[2].find("algo=sa block<=128 B calls=2 ops=1 payload_bytes=2400 inter_msgs=6") != std::string::npos);
  stats::reset();
  CHECK(stats::total(stats::snapshot(), AlltoallAlgorithm::sa)[stats::calls] == 0);
}
