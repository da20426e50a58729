#include "collectives/alltoall_runner.hpp"

#include "collectives/pmpi_executor.hpp"
#include "common/address.hpp"
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

// Packs the user's in-place buffer into `copy`, block k at k x block_bytes,
// for a schedule that must send from a copy.
int pack_blocks(const BlockBuffer& user, std::int64_t blocks, std::int64_t block_bytes, std::byte* copy) {
  for (std::int64_t k = 0; k < blocks; ++k) {
    MPI_Count position = k * block_bytes;
    const MPI_Aint block = PMPI_Aint_add(address_of(user.base), k * user.block_extent);
    SHIM_TRY(PMPI_Pack_c(pointer_at(block), user.per_block, user.type, copy, blocks * block_bytes, &position,
                         MPI_COMM_SELF));
  }
  return MPI_SUCCESS;
}

}  // namespace

int run_alltoall(const AlltoallArgs& args, std::int64_t block_bytes, const Schedule& schedule, RailStep rail_step,
                 const topo::Hierarchy& hierarchy, ScratchBuffer& scratch) {
  const bool in_place = args.sendbuf == MPI_IN_PLACE;
  const bool send_from_copy = in_place && !schedule.in_place_safe;
  const std::int64_t copy_blocks = send_from_copy ? hierarchy.layout().size() : 0;
  const std::int64_t stage_bytes = (schedule.stage_blocks + copy_blocks) * block_bytes;
  std::byte* stage = scratch.get(static_cast<std::size_t>(stage_bytes), args.recvbuf);
  if (stage == nullptr && stage_bytes > 0) return MPI_ERR_NO_MEM;

  ScheduleBuffers buffers;
  SHIM_TRY(user_buffer(args.recvbuf, args.recvcount, args.recvtype, buffers.recv));
  // Most schedules need no copy for MPI_IN_PLACE: on every rank, they finish
  // reading send blocks in phases before the first phase that writes receive
  // blocks (the in-memory tests run every schedule with the buffers aliased).
  if (send_from_copy) {
    std::byte* copy = stage + schedule.stage_blocks * block_bytes;
    SHIM_TRY(pack_blocks(buffers.recv, copy_blocks, block_bytes, copy));
    buffers.send = {copy, MPI_PACKED, block_bytes, block_bytes};
  } else if (in_place) {
    buffers.send = buffers.recv;
  } else {
    SHIM_TRY(user_buffer(args.sendbuf, args.sendcount, args.sendtype, buffers.send));
  }
  buffers.stage = {stage, MPI_PACKED, block_bytes, block_bytes};

  const int rc = run_schedule(schedule, buffers, hierarchy.shadow(), hierarchy.rail(), rail_step, block_bytes);
  scratch.release_if_large();
  return rc;
}

}  // namespace shim::coll
