// The node of every world rank, as a test derives it itself (never from
// shim's answers): virtual nodes of SHIM_NODE_SIZE consecutive world ranks
// when it is set, else the processes with the same processor name, numbered
// in order of their lowest world rank. Collective over MPI_COMM_WORLD.
#pragma once

#include <vector>

namespace shim::test {

std::vector<int> node_of_world_ranks();

}  // namespace shim::test
