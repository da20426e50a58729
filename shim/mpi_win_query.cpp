// Queries on a window from shim's MPI_Win_allocate answer as they would for
// the window the user asked for. Underneath it is an MPI_Win_create window
// over node shared memory, so two answers differ from MPICH's own
// MPI_Win_allocate and are put right here: the creation flavor, and the
// alloc_shm info key. Everything else (base, size, disp_unit, model, group,
// the other info keys, MPI_Win_shared_query) MPICH already answers alike.
#include <mpi.h>

#include "rma/managed_window.hpp"
#include "shim/export.hpp"
#include "shim/runtime.hpp"

namespace {

// MPI hands out attribute values as pointers the caller must not change.
const int kAllocateFlavor = MPI_WIN_FLAVOR_ALLOCATE;

// A window shim made for MPI_Win_allocate; those for MPI_Win_create are
// MPI_Win_create windows underneath, and MPI answers for them as it is.
const shim::rma::ManagedWindow* allocated_window(MPI_Win win) {
  if (!shim::shim_active()) return nullptr;
  const shim::rma::ManagedWindow* window = shim::rma::ManagedWindow::of(win);
  return window != nullptr && window->flavor() == shim::rma::ManagedWindow::Flavor::allocate ? window : nullptr;
}

}  // namespace

SHIM_EXPORT int MPI_Win_get_attr(MPI_Win win, int keyval, void* value, int* flag) {
  if (keyval == MPI_WIN_CREATE_FLAVOR && value != nullptr && flag != nullptr && allocated_window(win) != nullptr) {
    *static_cast<const int**>(value) = &kAllocateFlavor;
    *flag = 1;
    return MPI_SUCCESS;
  }
  return PMPI_Win_get_attr(win, keyval, value, flag);
}

SHIM_EXPORT int MPI_Win_get_info(MPI_Win win, MPI_Info* info_used) {
  const int rc = PMPI_Win_get_info(win, info_used);
  const shim::rma::ManagedWindow* window = allocated_window(win);
  if (rc != MPI_SUCCESS || window == nullptr) return rc;
  return PMPI_Info_set(*info_used, "alloc_shm", window->alloc_shm().c_str());
}
