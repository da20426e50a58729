#include <catch2/catch.hpp>
#include <string>

#include "shim/stats.hpp"

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

TEST_CASE("records land by collective, algorithm and size class", "[stats]") {
  stats::reset();
  stats::Record sa{stats::Collective::alltoall, 1, 100, true, 1200, true};
  sa.inter_messages = 3;
  sa.inter_bytes = 1200;
  sa.intra_messages = 1;
  sa.intra_bytes = 400;
  sa.flat_inter_messages = 8;
  sa.flat_inter_bytes = 800;
  stats::record(sa);
  sa.rank_zero = false;
  stats::record(sa);
  stats::Record native{stats::Collective::alltoall, 0, 100000, false, 1200000, false};
  native.inter_messages = 99;  // not visible for native: must not be counted
  native.flat_inter_bytes = 800000;
  stats::record(native);
  stats::Record eco{stats::Collective::bcast, 1, 1 << 20, true, 1 << 20, true};
  eco.inter_messages = 32;
  eco.inter_bytes = 2 << 20;
  stats::record(eco);

  const stats::Table table = stats::snapshot();
  const stats::Counters a = stats::total(table, stats::Collective::alltoall, 1);
  CHECK(a[stats::calls] == 2);
  CHECK(a[stats::collective_calls] == 1);
  CHECK(a[stats::payload_bytes] == 2400);
  CHECK(a[stats::inter_messages] == 6);
  CHECK(a[stats::intra_bytes] == 800);
  CHECK(a[stats::flat_inter_messages] == 16);
  const stats::Counters n = stats::total(table, stats::Collective::alltoall, 0);
  CHECK(n[stats::calls] == 1);
  CHECK(n[stats::inter_messages] == 0);
  CHECK(n[stats::flat_inter_bytes] == 800000);
  const stats::Counters b = stats::total(table, stats::Collective::bcast, 1);
  CHECK(b[stats::calls] == 1);
  CHECK(b[stats::inter_bytes] == (2 << 20));
  CHECK(stats::total(table, stats::Collective::bcast, 1)[stats::flat_inter_messages] == 0);

  const auto lines = stats::report_lines(table, "summed over 12 processes");
  REQUIRE(lines.size() == 4);
  CHECK(lines[0].rfind("stats: summed over 12 processes.", 0) == 0);
  CHECK(lines[1].find("alltoall algo=native block<=128 KiB calls=1 ops=0") != std::string::npos);
  CHECK(lines[1].find("inter_msgs=n/a") != std::string::npos);
  CHECK(lines[2].find("alltoall algo=sa block<=128 B calls=2 ops=1 payload_bytes=2400 inter_msgs=6") !=
        std::string::npos);
  CHECK(lines[3].find("bcast algo=eco size<=1 MiB calls=1 ops=1") != std::string::npos);
  stats::reset();
  CHECK(stats::total(stats::snapshot(), stats::Collective::alltoall, 1)[stats::calls] == 0);
}
