#include <catch2/catch.hpp>

#include "rma/access_order.hpp"

using shim::rma::AccessOrder;
using shim::rma::ByteSpan;
using shim::rma::items_span;

TEST_CASE("items_span covers every byte a put or accumulate touches", "[access_order]") {
  // 3 doubles at byte 16.
  CHECK(items_span(16, 3, 8, 0, 8).begin == 16);
  CHECK(items_span(16, 3, 8, 0, 8).end == 40);
  // Two items of a 40-byte type whose data fills its extent.
  const ByteSpan vector = items_span(0, 2, 40, 0, 40);
  CHECK(vector.begin == 0);
  CHECK(vector.end == 80);
  // Resized to a negative extent: the items run downwards from the offset.
  const ByteSpan downwards = items_span(100, 3, -16, 0, 8);
  CHECK(downwards.begin == 68);
  CHECK(downwards.end == 108);
  // A lower bound moved below zero.
  const ByteSpan shifted = items_span(64, 1, 8, -8, 8);
  CHECK(shifted.begin == 56);
  CHECK(shifted.end == 64);
  // Bounds that overflow cover everything (MPI refuses such an access).
  const ByteSpan huge = items_span(INT64_MAX - 8, 4, 8, 0, 8);
  CHECK(huge.begin == shim::rma::kEverything.begin);
  CHECK(huge.end == shim::rma::kEverything.end);
  CHECK(items_span(0, INT64_MAX, INT64_MAX, 0, 8).begin == INT64_MIN);
  CHECK(items_span(16, 0, 8, 0, 8).empty());
  CHECK(items_span(16, 4, 0, 0, 0).empty());
}

TEST_CASE("spans overlap only when they share a byte", "[access_order]") {
  CHECK(ByteSpan{0, 8}.overlaps(ByteSpan{7, 9}));
  CHECK_FALSE(ByteSpan{0, 8}.overlaps(ByteSpan{8, 16}));
  CHECK_FALSE(ByteSpan{8, 16}.overlaps(ByteSpan{0, 8}));
  CHECK_FALSE(ByteSpan{}.overlaps(ByteSpan{0, 8}));
  CHECK(ByteSpan{0, 100}.overlaps(ByteSpan{40, 41}));
}

TEST_CASE("each side's span grows until it completes, per target", "[access_order]") {
  AccessOrder order(3);
  order.mpi_issued(1, {0, 8});
  order.mpi_issued(1, {64, 72});
  // Conservative: the span covers the gap between the two puts.
  CHECK(order.mpi_in_flight(1, {32, 40}));
  CHECK_FALSE(order.mpi_in_flight(1, {72, 80}));
  CHECK_FALSE(order.mpi_in_flight(0, {0, 8}));
  CHECK_FALSE(order.mpi_in_flight(2, {0, 8}));
  // MPI's and shim's are apart.
  CHECK_FALSE(order.shim_in_flight(1, {0, 8}));
  order.shim_issued(2, {16, 24});
  CHECK(order.shim_in_flight(2, {20, 21}));
  CHECK_FALSE(order.mpi_in_flight(2, {16, 24}));

  order.mpi_completed(1);
  CHECK_FALSE(order.mpi_in_flight(1, {0, 8}));
  CHECK(order.shim_in_flight(2, {16, 24}));
  order.mpi_issued(0, {0, 8});
  order.mpi_issued(1, {0, 8});
  order.mpi_completed_all();
  CHECK_FALSE(order.mpi_in_flight(0, {0, 8}));
  CHECK_FALSE(order.mpi_in_flight(1, {0, 8}));
  order.shim_completed_all();
  CHECK_FALSE(order.shim_in_flight(2, {16, 24}));
  // An empty access is never in the way, nor recorded.
  order.shim_issued(0, {});
  CHECK_FALSE(order.shim_in_flight(0, {0, 1000}));
}
