#include "tests/mpi/accumulate/job.hpp"

#include <algorithm>
#include <cstdio>

namespace shim::test::accumulate {

void sync_ok(int rc, const std::string& where) {
  if (rc == MPI_SUCCESS) return;
  ok(rc, where);
  std::fprintf(stderr, "accumulate_matrix: rank %d: synchronisation failed, aborting\n", world_rank);
  PMPI_Abort(MPI_COMM_WORLD, 2);
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
