// Runs every rank's alltoall (or stage-buffer broadcast) schedule in memory, in lock-step by phase, with
// tokens instead of data: rank s's send block d holds token s*P+d. It checks
// that each transfer has exactly one matching partner of the same size, that
// no phase reads a block it (or anyone) has not written, that no phase reads
// and writes the same block, and that every rank ends with the right tokens.
// Messages are counted by locality as they are moved.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "collectives/alltoall_algorithm.hpp"
#include "collectives/alltoall_schedules.hpp"
#include "collectives/traffic.hpp"
#include "topology/layout.hpp"

namespace shim::test {

struct SimulationResult {
  std::vector<std::string> errors;     // empty when the exchange is exactly right
  std::vector<coll::Traffic> traffic;  // per rank, counted while moving tokens
  int rail_calls = 0;                  // rail alltoall phases run (per participating rank)
  int uniform_rail_calls = 0;          // ... of which a plain MPI_Alltoall suffices
};

// in_place: the send and receive buffers are one buffer, as with MPI_IN_PLACE.
SimulationResult simulate_alltoall(coll::ScheduleKind kind, const topo::Layout& layout, bool in_place = false);
// The algorithm's one-hop schedule.
SimulationResult simulate_alltoall(coll::AlltoallAlgorithm algorithm, const topo::Layout& layout,
                                   bool in_place = false);

// A broadcast schedule over the stage buffer alone (built per rank by
// `build`): the root's stage block b starts as token b, and every rank must
// end with all of them.
SimulationResult simulate_stage_bcast(const topo::Layout& layout, int root,
                                      const std::function<coll::Schedule(int rank)>& build);

}  // namespace shim::test
