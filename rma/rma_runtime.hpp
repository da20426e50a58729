// The process-wide pieces of owner-computes across nodes: the communicator
// the servers listen on, this node's server thread (in the node's lowest
// world rank), and which world rank serves which node. The interposition
// layer starts them inside MPI_Init when its settings and MPI's thread
// level allow, and stops them in MPI_Finalize.
#pragma once

#include <mpi.h>

#include "topology/hierarchy.hpp"

namespace shim::rma {

class NodeServer;

struct ServerSettings {
  int poll_max_us = 1000;  // longest sleep of an idle server between polls
};

// Collective over MPI_COMM_WORLD, whose nodes `world` describes. MPI must
// provide MPI_THREAD_MULTIPLE. MPI error code; on error no server runs.
int start_servers(const topo::Hierarchy& world, const ServerSettings& settings);
// Collective: waits for every process, then stops this node's server.
int stop_servers();

bool servers_running();
MPI_Comm server_comm();
// Servers are addressed by world rank on server_comm(), whose size this is.
int server_comm_size();
// The world rank whose server serves `world_rank`'s node; -1 if none.
int server_of(int world_rank);
// This process's server, or nullptr.
NodeServer* local_server();

}  // namespace shim::rma
