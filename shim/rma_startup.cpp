#include "shim/rma_startup.hpp"

#include <atomic>

#include "common/log.hpp"
#include "rma/datatype_layout.hpp"
#include "rma/managed_window.hpp"
#include "rma/rma_runtime.hpp"
#include "rma/window_pool.hpp"
#include "shim/comm_state.hpp"

namespace shim {

namespace {

std::atomic<bool> g_ready{false};

// Servers need MPI_THREAD_MULTIPLE (a thread calls MPI beside the
// application) and every process's MPI_Init (they start collectively).
void start_servers_if_wanted(StartMode mode) {
  const Config& settings = config();
  if (mode != StartMode::collective || !settings.server || settings.accumulate == rma::AccumulatePath::native) return;
  int threads = MPI_THREAD_SINGLE;
  if (PMPI_Query_thread(&threads) != MPI_SUCCESS || threads != MPI_THREAD_MULTIPLE) {
    if (world_rank() == 0) {
      print_line("SHIM_SERVER: MPI did not provide MPI_THREAD_MULTIPLE, so no server threads run; windows "
                 "spanning nodes use native accumulates");
    }
    return;
  }
  CommState* world = nullptr;
  const topo::Hierarchy* hierarchy = nullptr;
  int rc = comm_state(MPI_COMM_WORLD, world);
  if (rc == MPI_SUCCESS) rc = world->hierarchy(MPI_COMM_WORLD, settings.node_size, hierarchy);
  if (rc == MPI_SUCCESS) rc = rma::start_servers(*hierarchy, {settings.server_poll_max_us});
  if (rc != MPI_SUCCESS && world_rank() == 0) {
    print_line("SHIM_SERVER: the server threads could not start (MPI error " + std::to_string(rc) +
               "); windows spanning nodes use native accumulates");
  }
}

}  // namespace

void start_rma_wing(StartMode mode) {
  if (!config().enabled) return;
  if (rma::create_window_keyval() != MPI_SUCCESS || rma::WindowPool::create_keyval() != MPI_SUCCESS) {
    print_line("could not create the window keyvals; MPI_Win_allocate stays native");
    return;
  }
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

}  // namespace shim
