// Runs a broadcast schedule that addresses only the stage buffer
// (collectives/bcast_scatter_allgather): the root packs the message into it,
// cut into `blocks` equal blocks, and every other rank unpacks it at the end.
// Every rank moves bytes (MPI_BYTE) on both sides, so ranks may describe the
// message with different datatypes, as MPI_Bcast allows.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "collectives/bcast_pipeline.hpp"
#include "collectives/schedule.hpp"
#include "collectives/scratch_buffer.hpp"

namespace shim::coll {

// The bytes of one stage block of a message of `message_bytes` cut into
// `blocks` blocks (the last ones padded).
std::int64_t stage_block_bytes(std::int64_t message_bytes, std::int64_t blocks);

// Returns MPI_SUCCESS or an MPI error code.
int run_staged_bcast(const BcastBuffer& buffer, bool at_root, const Schedule& schedule, std::int64_t message_bytes,
                     MPI_Comm shadow, ScratchBuffer& scratch);

}  // namespace shim::coll
