#include "shim/rma_startup.hpp"

#include <atomic>
#include <string>

#include "common/log.hpp"
#include "rma/datatype_layout.hpp"
#include "rma/lock_grant.hpp"
#include "rma/managed_window.hpp"
#include "rma/rma_runtime.hpp"
#include "rma/window_pool.hpp"
#include "shim/comm_state.hpp"

namespace shim {

namespace {

std::atomic<bool> g_ready{false};
std::atomic<bool> g_locks_held_on_return{false};

// Servers need MPI_THREAD_MULTIPLE (a thread calls MPI beside the
// application) and every process's MPI_Init (they start collectively).
void start_servers_if_wanted(StartMode mode) {
  const Config& settings = config();
  if (mode != StartMode::collective || !settings.server || settings.accumulate == rma::AccumulatePath::native) return;
  int threads = MPI_THREAD_SINGLE;
  if (PMPI_Query_thread(&threads) != MPI_SUCCESS || threads != MPI_THREAD_MULTIPLE) {
    if (world_rank() == 0) {
      print_line(
          "SHIM_SERVER: MPI did not provide MPI_THREAD_MULTIPLE, so no server threads run; windows "
          "spanning nodes use native accumulates");
    }
    return;
  }
  CommState* world = nullptr;
  const topo::Hierarchy* hierarchy = nullptr;
  int rc = comm_state(MPI_COMM_WORLD, world);
  if (rc == MPI_SUCCESS) rc = world->hierarchy(MPI_COMM_WORLD, settings.node_size, hierarchy);
  if (rc == MPI_SUCCESS) {
    const int nodes = hierarchy->layout().nodes();
    if (settings.server_cluster > nodes && world_rank() == 0) {
      print_line("SHIM_SERVER_CLUSTER=" + std::to_string(settings.server_cluster) + " is more than the " +
                 std::to_string(nodes) + " nodes; using " + std::to_string(nodes));
    }
    rc = rma::start_servers(*hierarchy, {settings.server_poll_max_us, settings.server_cluster, settings.server_credits,
                                         settings.server_buffer_bytes});
  }
  if (rc != MPI_SUCCESS && world_rank() == 0) {
    print_line("SHIM_SERVER: the server threads could not start (MPI error " + std::to_string(rc) +
               "); windows spanning nodes use native accumulates");
    return;
  }
  if (settings.verbose && world_rank() == 0) print_line(describe_server_clusters());
}

}  // namespace

std::string describe_server_clusters() {
  const Config& settings = config();
  const rma::ServerMap& map = rma::server_map();
  rma::ServerFootprint largest;
  for (int node = 0; node < map.nodes(); ++node) {
    const auto f = rma::footprint(map, node, settings.server_credits, settings.server_buffer_bytes);
    if (f.direct_bytes + f.forward_bytes > largest.direct_bytes + largest.forward_bytes) largest = f;
  }
  return "server clusters: " + std::to_string(map.nodes()) + " node servers in " + std::to_string(map.clusters()) +
         " clusters of at most " + std::to_string(map.cluster_size()) + "; " + std::to_string(settings.server_credits) +
         " credits of " + std::to_string(settings.server_buffer_bytes) +
         " bytes; largest server: " + std::to_string(largest.direct_origins) + " direct origins (" +
         std::to_string(largest.direct_bytes) + " bytes), " + std::to_string(largest.forwarding_servers) +
         " forwarding servers (" + std::to_string(largest.forward_bytes) + " bytes), " + std::to_string(largest.peers) +
         " peers; width from " +
         rma::explain_cluster_size(settings.server_cluster, map.nodes(), map.processes(),
                                   std::int64_t{settings.server_credits} * settings.server_buffer_bytes);
}

void start_rma_wing(StartMode mode) {
  if (!config().enabled) return;
  if (rma::create_window_keyval() != MPI_SUCCESS || rma::WindowPool::create_keyval() != MPI_SUCCESS) {
    print_line("could not create the window keyvals; MPI_Win_allocate stays native");
    return;
  }
  g_locks_held_on_return.store(rma::locks_held_on_return(mpi_library_version()));
  g_ready.store(true);
  start_servers_if_wanted(mode);
}

void stop_rma_wing() {
  if (!g_ready.exchange(false)) return;
  if (const int rc = rma::stop_servers(); rc != MPI_SUCCESS) {
    print_line("stopping the server threads failed (MPI error " + std::to_string(rc) + ")");
  }
  rma::WindowPool::free_keyval();
  rma::free_window_keyval();
  rma::free_datatype_layout_keyval();
}

bool rma_wing_ready() { return g_ready.load(std::memory_order_relaxed); }

bool mpi_locks_held_on_return() { return g_locks_held_on_return.load(std::memory_order_relaxed); }

}  // namespace shim
