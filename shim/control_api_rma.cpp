// include/shim/shim.h: the control API's question about windows.
#include <shim/shim.h>

#include <algorithm>
#include <string_view>

#include "rma/managed_window.hpp"
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
