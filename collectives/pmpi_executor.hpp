// Runs a schedule with PMPI: the only place where schedules meet MPI. Each
// transfer becomes one message whose datatype addresses the transfer's runs
// in place (a single run is sent as-is; several become one derived type), so
// user data is never copied with memcpy and derived datatypes just work.
#pragma once

#include <mpi.h>

#include "collectives/schedule.hpp"

namespace shim::coll {

// One of the three buffers a schedule addresses, in whole blocks: block k
// starts k * block_extent bytes after `base` and is `per_block` elements of
// `type`. The stage buffer is packed bytes (MPI_PACKED, per_block = bytes).
struct BlockBuffer {
  void* base = nullptr;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Count per_block = 0;
  MPI_Aint block_extent = 0;
};

struct ScheduleBuffers {
  BlockBuffer send, recv, stage;
  const BlockBuffer& operator[](Buffer buffer) const {
    return buffer == Buffer::send ? send : buffer == Buffer::recv ? recv : stage;
  }
};

// `shadow`: private dup of the collective's communicator (exchange phases);
// `rail`: this process's rail communicator (rail_alltoall phases, run as
// `rail_step` says); `block_bytes`: the size of one block, which decides
// whether a paced exchange is paced (Phase::paced_from_block_bytes).
// Returns MPI_SUCCESS or the first MPI error code.
int run_schedule(const Schedule& schedule, const ScheduleBuffers& buffers, MPI_Comm shadow, MPI_Comm rail,
                 RailStep rail_step, std::int64_t block_bytes);

}  // namespace shim::coll
