// The process-wide pieces of owner-computes across nodes: the communicator
// the servers listen on, this node's server thread (in the node's lowest
// world rank), which world rank serves which node, and the cooperative
// clusters the servers form (server_map.hpp). The interposition layer
// starts them inside MPI_Init when its settings and MPI's thread level
// allow, and stops them in MPI_Finalize.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>

#include "rma/node_server.hpp"
#include "rma/server_map.hpp"
#include "topology/hierarchy.hpp"

namespace shim::rma {

struct ServerSettings {
  int poll_max_us = 1000;                   // longest sleep of an idle server between polls
  int cluster_size = kClusterBeyondBudget;  // a width, or a rule (server_map.hpp)
  int credits = 8;
  std::int64_t buffer_bytes = 16 * 1024;
};

// Collective over MPI_COMM_WORLD, whose nodes `world` describes. MPI must
// provide MPI_THREAD_MULTIPLE, and the settings must be the same on every
// process. MPI error code; on error no server runs.
int start_servers(const topo::Hierarchy& world, const ServerSettings& settings);
// Collective: waits for every process, then stops this node's server.
int stop_servers();

bool servers_running();
// Servers are addressed by world rank on it.
MPI_Comm server_comm();
// The world rank whose server serves `world_rank`'s node; -1 if none.
int server_of(int world_rank);
// Where this process sends requests for the node `target_server` serves.
int first_hop(int target_server);
int my_world_rank();
int server_credits();
std::int64_t server_buffer_bytes();
// While servers run.
const ServerMap& server_map();
// This process's server, or nullptr.
NodeServer* local_server();
// What this node's server holds and did, if this process runs it.
std::optional<ServerPoolCounters> local_server_pool_counters();

}  // namespace shim::rma
