// Messages between an origin and the communication server of the target's
// node, on the server communicator (a dup of MPI_COMM_WORLD). A message
// holds one or more requests; a request is a header, then `run_count`
// ByteRuns (where the packed payload goes in the target segment), then the
// payload. Requests from one origin are applied in
// the order they were sent (MPI's non-overtaking rule on one communicator and
// tag), which keeps accumulate_ordering's program order.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "rma/datatype_layout.hpp"
#include "common/message_tags.hpp"

namespace shim::rma {

// Payload bytes per request: larger operations travel in chunks of this, so
// the server's receive buffer is bounded.
constexpr std::int64_t kChunkBytes = 256 * 1024;
constexpr std::int64_t kMaxRuns = 4096;

enum class RequestKind : std::uint32_t { accumulate, compare_and_swap, flush };

enum RequestFlags : std::uint32_t {
  kWantAck = 1,     // reply with an empty message once applied
  kWantResult = 2,  // reply with the target's previous contents
};

struct alignas(16) RequestHeader {
  RequestKind kind;
  std::uint32_t flags;
  std::uint64_t window_id;
  std::int32_t target_local;  // the target's rank in the window's node group
  std::int32_t run_count;
  MPI_Datatype basic;  // predefined handles are the same in every process
  MPI_Op op;
  std::int64_t target_offset;  // bytes from the target segment's base
  std::int64_t data_bytes;     // target bytes the request updates (packed)
  std::int64_t payload_bytes;  // origin data: data_bytes, twice that for compare-and-swap, 0 for MPI_NO_OP
};

// Requests are laid out at multiples of 16 bytes in a message (several
// small ones travel together), so every header and payload stays aligned
// for any element type.
constexpr std::size_t padded_request_bytes(std::size_t runs, std::int64_t payload) {
  const std::size_t bytes = sizeof(RequestHeader) + runs * sizeof(ByteRun) + static_cast<std::size_t>(payload);
  return (bytes + 15) / 16 * 16;
}

constexpr std::int64_t kMaxRequestBytes =
    static_cast<std::int64_t>(sizeof(RequestHeader)) + kMaxRuns * static_cast<std::int64_t>(sizeof(ByteRun)) +
    kChunkBytes + 16;

}  // namespace shim::rma
