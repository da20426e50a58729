// A collective written down as data: phases of transfers between ranks, with
// every piece of data addressed in whole blocks. A block is what one rank
// sends to one other rank in an alltoall (count x datatype); block k of the
// user's send or receive buffer belongs to rank k, and the staging buffer is
// an array of packed blocks.
//
// Schedules depend only on the layout and the calling rank, never on counts or
// datatypes, so they are built once per communicator and run by either the
// PMPI executor or the in-memory executor of the tests.
#pragma once

#include <cstdint>
#include <vector>

namespace shim::coll {

enum class Buffer : std::uint8_t { send, recv, stage };

// `blocks` consecutive blocks of `buffer`, starting at block `first`.
struct Run {
  Buffer buffer;
  std::int64_t first;
  std::int64_t blocks;
  friend bool operator==(const Run&, const Run&) = default;
};

// Appends a run, merging it into the previous one when they are adjacent, so
// regular layouts collapse into a single run (and so into a plain MPI call).
void append_run(std::vector<Run>& runs, Run run);
std::int64_t total_blocks(const std::vector<Run>& runs);

struct Transfer {
  int peer;
  std::vector<Run> runs;
};

enum class PhaseKind : std::uint8_t {
  // Point-to-point transfers; peers are ranks of the collective's communicator.
  exchange,
  // The same, with at most Phase::window messages in flight each way,
  // started in the order listed. Deadlock-free whatever the message protocol
  // when every message has a step and every rank lists its sends and its
  // receives by increasing step: the lowest step still in flight anywhere
  // then always has both its send and its receive posted.
  paced_exchange,
  // An alltoall among this rank's rail (the processes with the same local
  // rank), run by the tuned native alltoall. sends[i] and recvs[i] hold the
  // runs for rail rank i.
  rail_alltoall,
};

struct Phase {
  PhaseKind kind = PhaseKind::exchange;
  std::vector<Transfer> sends;
  std::vector<Transfer> recvs;
  int window = 0;  // paced_exchange only
  // paced_exchange only: blocks of fewer bytes go all at once, as an
  // exchange (the window pays where messages are large enough to queue).
  std::int64_t paced_from_block_bytes = 0;
};

struct Schedule {
  std::vector<Phase> phases;
  std::int64_t stage_blocks = 0;
  // False when a phase reads send blocks while writing receive blocks. With
  // MPI_IN_PLACE the two are one buffer, so the runner first packs it and
  // sends from the copy; schedules that read all send blocks before writing
  // any receive block need no copy.
  bool in_place_safe = true;
};

// How a rail_alltoall phase is carried out: its messages sent point to point
// on the rail communicator, or one call of the native MPI_Alltoall(v) there,
// with MPI's own choice of algorithm. Every rank of a collective must take
// the same one.
enum class RailStep : std::uint8_t { point_to_point, native_alltoall };

// Messages of a point-to-point rail step in flight per rank and direction: a
// new one starts as soon as one completes, so the link stays busy without a
// rank putting a message for every node on its NIC and into the receivers'
// queues at once (MPICH's scattered alltoall paces itself the same way, in
// batches: MPIR_CVAR_ALLTOALL_THROTTLE).
inline constexpr int kRailWindow = 8;

// How a rail_alltoall phase maps onto one native call: either every peer gets
// one run of the same size at a constant stride (MPI_Alltoall), or each peer
// gets one run of its own size (MPI_Alltoallv).
struct RailCallShape {
  bool valid = false;    // every peer has exactly one run on each side
  bool uniform = false;  // MPI_Alltoall suffices
  Buffer send_buffer = Buffer::stage;
  Buffer recv_buffer = Buffer::stage;
};
RailCallShape rail_call_shape(const Phase& phase);

}  // namespace shim::coll
