// Runs one MPI_Alltoall call through a hierarchical schedule: resolves the
// user's buffers into block buffers, stages MPI_IN_PLACE data, and hands the
// schedule to the PMPI executor.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "collectives/schedule.hpp"
#include "collectives/scratch_buffer.hpp"
#include "topology/hierarchy.hpp"

namespace shim::coll {

struct AlltoallArgs {
  const void* sendbuf;
  MPI_Count sendcount;
  MPI_Datatype sendtype;
  void* recvbuf;
  MPI_Count recvcount;
  MPI_Datatype recvtype;
};

// block_bytes: the packed size of one block, equal on both sides.
// Returns MPI_SUCCESS or an MPI error code (not yet raised on any handler).
int run_alltoall(const AlltoallArgs& args, std::int64_t block_bytes, const Schedule& schedule, RailStep rail_step,
                 const topo::Hierarchy& hierarchy, ScratchBuffer& scratch);

}  // namespace shim::coll
