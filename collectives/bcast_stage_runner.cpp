#include "collectives/bcast_stage_runner.hpp"

#include <cstring>

#include "collectives/pmpi_executor.hpp"
#include "common/mpi_try.hpp"

namespace shim::coll {

std::int64_t stage_block_bytes(std::int64_t message_bytes, std::int64_t blocks) {
  return (message_bytes + blocks - 1) / blocks;
}

int run_staged_bcast(const BcastBuffer& buffer, bool at_root, const Schedule& schedule, std::int64_t message_bytes,
                     MPI_Comm shadow, ScratchBuffer& scratch) {
  const std::int64_t block = stage_block_bytes(message_bytes, schedule.stage_blocks);
  const std::int64_t stage_bytes = block * schedule.stage_blocks;
  std::byte* stage = scratch.get(static_cast<std::size_t>(stage_bytes), buffer.base);
  if (stage == nullptr) return MPI_ERR_NO_MEM;
  if (at_root) {
    MPI_Count position = 0;
    SHIM_TRY(PMPI_Pack_c(buffer.base, buffer.count, buffer.type, stage, message_bytes, &position, shadow));
    // The padding travels too: never send memory nobody wrote.
    std::memset(stage + message_bytes, 0, static_cast<std::size_t>(stage_bytes - message_bytes));
  }
  ScheduleBuffers buffers;
  buffers.stage = {stage, MPI_BYTE, block, block};
  SHIM_TRY(run_schedule(schedule, buffers, shadow, MPI_COMM_NULL, RailStep::point_to_point, block));
  if (at_root) return MPI_SUCCESS;
  MPI_Count position = 0;
  return PMPI_Unpack_c(stage, message_bytes, &position, buffer.base, buffer.count, buffer.type, shadow);
}

}  // namespace shim::coll
