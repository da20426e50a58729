#include "tests/mpi/accumulate/job.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace shim::test::accumulate {

void sync_ok(int rc, const std::string& where) {
  if (rc == MPI_SUCCESS) return;
  ok(rc, where);
  std::fprintf(stderr, "accumulate_matrix: rank %d: synchronisation failed, aborting\n", world_rank);
  PMPI_Abort(MPI_COMM_WORLD, 2);
}

void derive_nodes() {
  node_of_world.assign(static_cast<std::size_t>(world_size), 0);
  const char* k = std::getenv("SHIM_NODE_SIZE");
  const int node_size = k != nullptr && *k != '\0' ? std::atoi(k) : 0;
  if (node_size > 0) {
    for (int r = 0; r < world_size; ++r) node_of_world[static_cast<std::size_t>(r)] = r / node_size;
    return;
  }
  char mine[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  PMPI_Get_processor_name(mine, &length);
  std::vector<char> all(static_cast<std::size_t>(world_size) * MPI_MAX_PROCESSOR_NAME);
  PMPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> names;
  for (int r = 0; r < world_size; ++r) {
    const std::string n(&all[static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME]);
    auto it = std::find(names.begin(), names.end(), n);
    if (it == names.end()) it = names.insert(names.end(), n);
    node_of_world[static_cast<std::size_t>(r)] = static_cast<int>(it - names.begin());
  }
}

bool owner_reachable(const Comm& c) {
  bool one_node = true;
  bool servers_in = true;
  for (int member : c.world) {
    const int node = node_of_world[static_cast<std::size_t>(member)];
    one_node = one_node && node == node_of_world[static_cast<std::size_t>(c.world[0])];
    const int server =
        static_cast<int>(std::find(node_of_world.begin(), node_of_world.end(), node) - node_of_world.begin());
    servers_in = servers_in && std::find(c.world.begin(), c.world.end(), server) != c.world.end();
  }
  return one_node || servers_in;
}

Comm describe_comm(const std::string& name, MPI_Comm comm) {
  Comm c;
  c.name = name;
  c.comm = comm;
  PMPI_Comm_rank(comm, &c.rank);
  PMPI_Comm_size(comm, &c.size);
  c.world.resize(static_cast<std::size_t>(c.size));
  PMPI_Allgather(&world_rank, 1, MPI_INT, c.world.data(), 1, MPI_INT, comm);
  return c;
}

const char* class_name(int c) { return c == kSelf ? "self" : c == kSameNode ? "same-node" : "remote"; }

int target_class(int origin_world, int target_world) {
  if (origin_world == target_world) return kSelf;
  return node_of_world[static_cast<std::size_t>(origin_world)] == node_of_world[static_cast<std::size_t>(target_world)]
             ? kSameNode
             : kRemote;
}

}  // namespace shim::test::accumulate
