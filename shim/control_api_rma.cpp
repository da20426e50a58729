// include/shim/shim.h: the control API's questions about windows and servers.
#include <shim/shim.h>

#include <algorithm>
#include <string_view>

#include "rma/managed_window.hpp"
#include "rma/rma_runtime.hpp"
#include "shim/errors.hpp"
#include "shim/export.hpp"
#include "shim/runtime.hpp"

SHIM_EXPORT int shim_win_accumulate_path(MPI_Win win, char* path, int path_len) {
  if (win == MPI_WIN_NULL || path == nullptr || path_len < 1) return shim::raise_on_comm(MPI_COMM_SELF, MPI_ERR_ARG);
  std::string_view taken = "native";
  if (shim::shim_active()) {
    if (const shim::rma::ManagedWindow* window = shim::rma::ManagedWindow::of(win)) taken = name(window->path());
  }
  const std::size_t length = std::min(taken.size(), static_cast<std::size_t>(path_len - 1));
  taken.copy(path, length);
  path[length] = '\0';
  return MPI_SUCCESS;
}

SHIM_EXPORT int shim_get_server_counters(shim_server_counters* counters, int* runs_server) {
  if (counters == nullptr || runs_server == nullptr) return shim::raise_on_comm(MPI_COMM_SELF, MPI_ERR_ARG);
  *counters = shim_server_counters{};
  const auto mine = shim::rma::local_server_pool_counters();
  *runs_server = mine ? 1 : 0;
  if (!mine) return MPI_SUCCESS;
  counters->direct_buffer_bytes = mine->direct_buffer_bytes;
  counters->forward_buffer_bytes = mine->forward_buffer_bytes;
  counters->peak_buffers_in_use = mine->peak_buffers_in_use;
  counters->messages_direct = mine->messages_direct;
  counters->messages_forwarded = mine->messages_forwarded;
  counters->messages_from_servers = mine->messages_from_servers;
  counters->distinct_peers = mine->distinct_peers;
  counters->busy_ns = mine->busy_ns;
  return MPI_SUCCESS;
}
