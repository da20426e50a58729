#include "rma/rma_runtime.hpp"

#include <memory>
#include <vector>

#include "rma/datatype_layout.hpp"
#include "rma/managed_window.hpp"
#include "rma/node_server.hpp"
#include "shim/comm_state.hpp"
#include "common/log.hpp"
#include "shim/runtime.hpp"

namespace shim::rma {

namespace {

MPI_Comm g_server_comm = MPI_COMM_NULL;
std::vector<int> g_server_of;  // by world rank
std::unique_ptr<NodeServer> g_server;
bool g_running = false;
int g_window_keyval = MPI_KEYVAL_INVALID;

int delete_window_state(MPI_Win, int, void* state, void*) {
  delete static_cast<ManagedWindow*>(state);
  return MPI_SUCCESS;
}

}  // namespace

void start_rma(bool collective, bool threads_ok) {
  PMPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, delete_window_state, &g_window_keyval, nullptr);
  const Config& settings = config();
  if (!collective || !settings.enabled || !settings.server || settings.accumulate == AccumulateChoice::native) return;
  if (!threads_ok) {
    if (world_rank() == 0) {
      print_line("SHIM_SERVER: MPI did not provide MPI_THREAD_MULTIPLE, so no server threads run; windows "
                 "spanning nodes use native accumulates");
    }
    return;
  }
  CommState* world = nullptr;
  const topo::Hierarchy* hierarchy = nullptr;
  if (comm_state(MPI_COMM_WORLD, world) != MPI_SUCCESS ||
      world->hierarchy(MPI_COMM_WORLD, settings.node_size, hierarchy) != MPI_SUCCESS ||
      PMPI_Comm_dup(MPI_COMM_WORLD, &g_server_comm) != MPI_SUCCESS) {
    return;
  }
  PMPI_Comm_set_errhandler(g_server_comm, MPI_ERRORS_RETURN);
  const topo::Layout& layout = hierarchy->layout();
  g_server_of.resize(static_cast<std::size_t>(layout.size()));
  for (int rank = 0; rank < layout.size(); ++rank) {
    g_server_of[static_cast<std::size_t>(rank)] = layout.rank_of(layout.node_of(rank), 0);
  }
  if (g_server_of[static_cast<std::size_t>(world_rank())] == world_rank()) {
    g_server = std::make_unique<NodeServer>(g_server_comm, settings.server_poll_max_us);
  }
  g_running = true;
}

void stop_rma() {
  if (g_running) {
    // No process may still be waiting on a server.
    PMPI_Barrier(g_server_comm);
    g_server.reset();
    PMPI_Comm_free(&g_server_comm);
    g_server_of.clear();
    g_running = false;
  }
  if (g_window_keyval != MPI_KEYVAL_INVALID) PMPI_Win_free_keyval(&g_window_keyval);
  free_datatype_layout_keyval();
}

bool servers_running() { return g_running; }
MPI_Comm server_comm() { return g_server_comm; }
int server_of(int world_rank) {
  if (!g_running || world_rank < 0 || static_cast<std::size_t>(world_rank) >= g_server_of.size()) return -1;
  return g_server_of[static_cast<std::size_t>(world_rank)];
}
NodeServer* local_server() { return g_server.get(); }
int window_keyval() { return g_window_keyval; }

}  // namespace shim::rma
