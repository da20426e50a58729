#include "tests/mpi/nodes.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace shim::test {

std::vector<int> node_of_world_ranks() {
  int size = 0;
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<int> node_of(static_cast<std::size_t>(size), 0);
  const char* k = std::getenv("SHIM_NODE_SIZE");
  const int node_size = k != nullptr && *k != '\0' ? std::atoi(k) : 0;
  if (node_size > 0) {
    for (int r = 0; r < size; ++r) node_of[static_cast<std::size_t>(r)] = r / node_size;
    return node_of;
  }
  char mine[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  PMPI_Get_processor_name(mine, &length);
  std::vector<char> all(static_cast<std::size_t>(size) * MPI_MAX_PROCESSOR_NAME);
  PMPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> names;
  for (int r = 0; r < size; ++r) {
    const std::string n(&all[static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME]);
    auto it = std::find(names.begin(), names.end(), n);
    if (it == names.end()) it = names.insert(names.end(), n);
    node_of[static_cast<std::size_t>(r)] = static_cast<int>(it - names.begin());
  }
  return node_of;
}

}  // namespace shim::test
