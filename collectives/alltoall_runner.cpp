#include "collectives/alltoall_runner.hpp"

#include "collectives/pmpi_executor.hpp"
#include "common/mpi_try.hpp"

namespace shim::coll {

namespace {

int user_buffer(const void* base, MPI_Count count, MPI_Datatype type, BlockBuffer& out) {
  MPI_Count lb = 0;
  MPI_Count extent = 0;
  SHIM_TRY(PMPI_Type_get_extent_c(type, &lb, &extent));
  out = {const_cast<void*>(base), type, count, count * extent};
  return MPI_SUCCESS;
}

}  // namespace

int run_alltoall(const AlltoallArgs& args, std::int64_t block_bytes, const Schedule& schedule, RailStep rail_step,
                 const topo::Hierarchy& hierarchy, ScratchBuffer& scratch) {
  const std::int64_t stage_bytes = schedule.stage_blocks * block_bytes;
  std::byte* stage = scratch.get(static_cast<std::size_t>(stage_bytes), args.recvbuf);
  if (stage == nullptr && stage_bytes > 0) return MPI_ERR_NO_MEM;

  ScheduleBuffers buffers;
  SHIM_TRY(user_buffer(args.recvbuf, args.recvcount, args.recvtype, buffers.recv));
  // MPI_IN_PLACE needs no copy: on every rank, each schedule finishes reading
  // send blocks in phases before the first phase that writes receive blocks
  // (the in-memory tests run every schedule with the two buffers aliased).
  if (args.sendbuf == MPI_IN_PLACE) {
    buffers.send = buffers.recv;
  } else {
    SHIM_TRY(user_buffer(args.sendbuf, args.sendcount, args.sendtype, buffers.send));
  }
  buffers.stage = {stage, MPI_PACKED, block_bytes, block_bytes};

  const int rc = run_schedule(schedule, buffers, hierarchy.shadow(), hierarchy.rail(), rail_step);
  scratch.release_if_large();
  return rc;
}

}  // namespace shim::coll
