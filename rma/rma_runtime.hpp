// Process-wide pieces of the RMA side: the server communicator, this node's
// server thread (in the node's lowest world rank), and which world rank
// serves which node. Started collectively inside MPI_Init when MPI provides
// MPI_THREAD_MULTIPLE and SHIM_SERVER is on; stopped in MPI_Finalize.
#pragma once

#include <mpi.h>

namespace shim::rma {

class NodeServer;

// Collective over MPI_COMM_WORLD when `collective` (inside MPI_Init);
// otherwise no servers are started. `threads_ok`: MPI provides
// MPI_THREAD_MULTIPLE (on every process, as MPICH does).
void start_rma(bool collective, bool threads_ok);
// Collective: waits for every process, then stops this node's server.
void stop_rma();

bool servers_running();
MPI_Comm server_comm();
// The world rank whose server serves `world_rank`'s node; -1 if none.
int server_of(int world_rank);
// This process's server, or nullptr.
NodeServer* local_server();

// The attribute keyval that caches ManagedWindow on user windows.
int window_keyval();

}  // namespace shim::rma
