// The network profile as this job sees it: loaded once at start, checked
// against the job's hosts, and mapped onto world ranks, so any communicator
// can tell the subnet of each of its nodes and the cost between them.
#pragma once

#include <mpi.h>

#include <optional>
#include <string>
#include <vector>

#include "topology/network_profile.hpp"

namespace shim::topo {

struct NetworkPicture {
  NetworkProfile profile;
  std::vector<int> host_of_world_rank;

  int subnet_of_world_rank(int world_rank) const;
  // Cost between the hosts of two world ranks, from the matrix the subnets
  // were drawn from.
  double cost(int world_a, int world_b) const;
};

// The name the profile knows a rank's node by: its processor name, or
// "vnode<i>" for virtual node i when SHIM_NODE_SIZE is set.
std::string profile_node_name(int world_rank, int node_size);

// Collective over MPI_COMM_WORLD. Rank 0 reads `path` and checks that every
// node of the job is in it, then shares the result. On failure every rank
// gets nullopt and rank 0's `error` holds one line saying why.
std::optional<NetworkPicture> load_network_picture(const std::string& path, int node_size, std::string& error);

}  // namespace shim::topo
