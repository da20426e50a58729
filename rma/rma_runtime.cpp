#include "rma/rma_runtime.hpp"

#include <memory>
#include <vector>

#include "common/mpi_handle.hpp"
#include "common/mpi_try.hpp"
#include "rma/node_server.hpp"

namespace shim::rma {

namespace {

// A plain handle, not an owner: a static owner would free it after
// MPI_Finalize when a program exits without stopping shim.
MPI_Comm g_server_comm = MPI_COMM_NULL;
std::vector<int> g_server_of;  // by world rank
std::unique_ptr<NodeServer> g_server;

}  // namespace

int start_servers(const topo::Hierarchy& world, const ServerSettings& settings) {
  OwnedComm comm;
  SHIM_TRY(PMPI_Comm_dup(MPI_COMM_WORLD, comm.out()));
  SHIM_TRY(PMPI_Comm_set_errhandler(comm.get(), MPI_ERRORS_RETURN));
  const topo::Layout& layout = world.layout();
  std::vector<int> server_of(static_cast<std::size_t>(layout.size()));
  for (int rank = 0; rank < layout.size(); ++rank) {
    server_of[static_cast<std::size_t>(rank)] = layout.rank_of(layout.node_of(rank), 0);
  }
  const int me = world.rank();
  if (server_of[static_cast<std::size_t>(me)] == me) {
    g_server = std::make_unique<NodeServer>(comm.get(), settings.poll_max_us);
  }
  g_server_comm = comm.release();
  g_server_of = std::move(server_of);
  return MPI_SUCCESS;
}

int stop_servers() {
  if (g_server_comm == MPI_COMM_NULL) return MPI_SUCCESS;
  // No process may still be waiting on a server.
  const int rc = PMPI_Barrier(g_server_comm);
  g_server.reset();
  g_server_of.clear();
  const int freed = PMPI_Comm_free(&g_server_comm);
  return rc != MPI_SUCCESS ? rc : freed;
}

bool servers_running() { return g_server_comm != MPI_COMM_NULL; }
MPI_Comm server_comm() { return g_server_comm; }
int server_comm_size() { return static_cast<int>(g_server_of.size()); }
int server_of(int world_rank) {
  if (world_rank < 0 || static_cast<std::size_t>(world_rank) >= g_server_of.size()) return -1;
  return g_server_of[static_cast<std::size_t>(world_rank)];
}
NodeServer* local_server() { return g_server.get(); }

}  // namespace shim::rma
