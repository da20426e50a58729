#include "rma/rma_runtime.hpp"

#include <memory>
#include <vector>

#include "common/mpi_handle.hpp"
#include "common/mpi_try.hpp"
#include "rma/server_channel.hpp"

namespace shim::rma {

namespace {

// A plain handle, not an owner: a static owner would free it after
// MPI_Finalize when a program exits without stopping shim.
MPI_Comm g_server_comm = MPI_COMM_NULL;
std::vector<int> g_server_of;  // by world rank
std::unique_ptr<ServerMap> g_map;
ServerSettings g_settings;
int g_me = -1;
std::unique_ptr<NodeServer> g_server;

}  // namespace

int start_servers(const topo::Hierarchy& world, const ServerSettings& settings) {
  OwnedComm comm;
  SHIM_TRY(PMPI_Comm_dup(MPI_COMM_WORLD, comm.out()));
  SHIM_TRY(PMPI_Comm_set_errhandler(comm.get(), MPI_ERRORS_RETURN));
  const topo::Layout& layout = world.layout();
  std::vector<int> node_of(static_cast<std::size_t>(layout.size()));
  for (int rank = 0; rank < layout.size(); ++rank) node_of[static_cast<std::size_t>(rank)] = layout.node_of(rank);
  const int width = resolve_cluster_size(settings.cluster_size, layout.nodes(), layout.size(),
                                         std::int64_t{settings.credits} * settings.buffer_bytes);
  auto map = std::make_unique<ServerMap>(std::move(node_of), width);
  std::vector<int> server_of(static_cast<std::size_t>(layout.size()));
  for (int rank = 0; rank < layout.size(); ++rank) {
    server_of[static_cast<std::size_t>(rank)] = map->server_of_node(map->node_of(rank));
  }
  const int me = world.rank();
  if (server_of[static_cast<std::size_t>(me)] == me) {
    const int node = map->node_of(me);
    const ServerPlan plan{settings.poll_max_us, std::int64_t{map->direct_origins(node)} * settings.credits,
                          std::int64_t{map->forwarding_servers(node)} * settings.credits, settings.buffer_bytes,
                          settings.credits};
    g_server = std::make_unique<NodeServer>(comm.get(), plan);
  }
  g_server_comm = comm.release();
  g_server_of = std::move(server_of);
  g_map = std::move(map);
  g_settings = settings;
  g_me = me;
  return MPI_SUCCESS;
}

int stop_servers() {
  if (g_server_comm == MPI_COMM_NULL) return MPI_SUCCESS;
  // Every buffer this process holds at a server released, then no process
  // may still be waiting on a server.
  const int drained = drain_server_credits();
  const int rc = PMPI_Barrier(g_server_comm);
  g_server.reset();
  g_server_of.clear();
  g_map.reset();
  const int freed = PMPI_Comm_free(&g_server_comm);
  if (drained != MPI_SUCCESS) return drained;
  return rc != MPI_SUCCESS ? rc : freed;
}

bool servers_running() { return g_server_comm != MPI_COMM_NULL; }
MPI_Comm server_comm() { return g_server_comm; }
int server_of(int world_rank) {
  if (world_rank < 0 || static_cast<std::size_t>(world_rank) >= g_server_of.size()) return -1;
  return g_server_of[static_cast<std::size_t>(world_rank)];
}
int first_hop(int target_server) { return g_map->first_hop(g_me, g_map->node_of_server(target_server)); }
int my_world_rank() { return g_me; }
int server_credits() { return g_settings.credits; }
std::int64_t server_buffer_bytes() { return g_settings.buffer_bytes; }
const ServerMap& server_map() { return *g_map; }
NodeServer* local_server() { return g_server.get(); }
std::optional<ServerPoolCounters> local_server_pool_counters() {
  if (g_server == nullptr) return std::nullopt;
  return g_server->counters();
}

}  // namespace shim::rma
