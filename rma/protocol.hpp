// Messages between an origin and the communication servers, on the server
// communicator (a dup of MPI_COMM_WORLD). A message is a MessageHeader, then
// one or more requests, all for one target server; a request is a header,
// then `run_count` ByteRuns (where the packed payload goes in the target
// segment), then the payload. A message goes to the origin's first hop
// (server_map.hpp), which applies it or forwards it unchanged to the target
// server. Requests from one origin to one target are applied in the order
// they were sent: they always take the same path, each hop is first in,
// first out, and MPI does not overtake on one communicator and tag. That
// keeps accumulate_ordering's program order.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "common/message_tags.hpp"
#include "rma/datatype_layout.hpp"

namespace shim::rma {

enum MessageFlags : std::uint32_t {
  kWantCredit = 1,         // the first hop answers once it released this message's buffer, and all before it
  kWantForwardCredit = 2,  // the same, from a target server to the server that forwarded the message
};

struct alignas(16) MessageHeader {
  std::uint32_t flags;
  std::int32_t origin;         // world rank that answers go to
  std::int32_t target_server;  // world rank of the server that applies the requests
  std::int32_t reserved;
};

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

// The most bytes of requests one message of `buffer_bytes` may carry.
constexpr std::int64_t request_capacity(std::int64_t buffer_bytes) {
  return buffer_bytes - static_cast<std::int64_t>(sizeof(MessageHeader));
}

}  // namespace shim::rma
