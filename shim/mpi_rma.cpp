// The RMA interposers: MPI_Win_allocate and MPI_Win_create build a managed
// window (dynamic and shared-memory windows stay MPI's); the
// accumulate family on managed windows goes to its path (owner or caller);
// puts and gets are ordered with it; the synchronisation calls complete
// what shim shipped before MPI closes the epoch. Everything else, and every
// window shim did not create, goes straight to PMPI_*.
#include <mpi.h>

#include <atomic>
#include <climits>
#include <string>

#include "common/log.hpp"
#include "common/mpi_try.hpp"
#include "rma/managed_window.hpp"
#include "shim/comm_state.hpp"
#include "shim/errors.hpp"
#include "shim/export.hpp"
#include "shim/rma_startup.hpp"
#include "shim/runtime.hpp"
#include "shim/stats.hpp"

namespace {

using shim::rma::AccumulateCall;
using shim::rma::AccumulatePath;
using shim::rma::ManagedWindow;
using Op = shim::stats::AccumulateOp;

// The window's state when shim handles its accumulates; nullptr sends the
// call to MPI as it is.
ManagedWindow* managed(MPI_Win win) {
  if (!shim::shim_active()) return nullptr;
  ManagedWindow* window = ManagedWindow::of(win);
  return window != nullptr && window->path() != AccumulatePath::native ? window : nullptr;
}

// SHIM_STATS: a call that succeeded, by operation and the path it took
// (`window`: nullptr when MPI ran it); bytes as the call names them at the
// target.
void count_call(Op op, const ManagedWindow* window, int target, MPI_Count target_count, MPI_Datatype target_type) {
  if (!shim::config().stats || target == MPI_PROC_NULL || !shim::shim_active()) return;
  MPI_Count size = 0;
  // MPI accepted the datatype in the call that succeeded, so it has a size.
  static_cast<void>(PMPI_Type_size_c(target_type, &size));
  using Path = shim::stats::AccumulatePath;
  const Path path = window == nullptr                          ? Path::native
                    : window->path() == AccumulatePath::caller ? Path::caller
                    : window->same_node(target)                ? Path::same_node
                                                               : Path::server;
  shim::stats::record_accumulate(op, path, target_count * size);
}

// One body for the whole accumulate family: shim's path on a managed
// window, otherwise `pmpi_call` (the PMPI_* call with the user's arguments,
// large-count or not, so MPI reports errors under the name the user called).
template <typename PmpiCall>
int dispatch(Op op, MPI_Win win, const AccumulateCall& call, MPI_Request* request, PmpiCall pmpi_call) {
  ManagedWindow* window = managed(win);
  const int rc =
      window != nullptr ? shim::raise_on_window(window->user_window(), window->accumulate(call, request)) : pmpi_call();
  if (rc == MPI_SUCCESS) count_call(op, window, call.target, call.target_count, call.target_type);
  return rc;
}

AccumulateCall accumulate_call(const void* origin, MPI_Count origin_count, MPI_Datatype origin_type, int target,
                               MPI_Aint displacement, MPI_Count target_count, MPI_Datatype target_type, MPI_Op op) {
  AccumulateCall call;
  call.origin = origin;
  call.origin_count = origin_count;
  call.origin_type = origin_type;
  call.target = target;
  call.displacement = displacement;
  call.target_count = target_count;
  call.target_type = target_type;
  call.op = op;
  return call;
}

AccumulateCall fetching_call(const void* origin, MPI_Count origin_count, MPI_Datatype origin_type, void* result,
                             MPI_Count result_count, MPI_Datatype result_type, int target, MPI_Aint displacement,
                             MPI_Count target_count, MPI_Datatype target_type, MPI_Op op) {
  AccumulateCall call =
      accumulate_call(origin, origin_count, origin_type, target, displacement, target_count, target_type, op);
  call.result = result;
  call.result_count = result_count;
  call.result_type = result_type;
  call.fetch = true;
  return call;
}

// The synchronisation calls: what shim shipped on a managed window is
// completed first, then MPI's own call runs, whatever shim's completion
// found: a fence or complete that other processes wait for must happen, and
// an unlock that reports an error leaves no epoch open, as in native MPI.
template <typename PmpiCall>
int after_completion(MPI_Win win, PmpiCall pmpi_call) {
  ManagedWindow* window = managed(win);
  const int rc = window != nullptr ? window->complete_all() : MPI_SUCCESS;
  const int mpi_rc = pmpi_call();
  return rc != MPI_SUCCESS ? shim::raise_on_window(win, rc) : mpi_rc;
}

// SHIM_ACCUMULATE, or the window's info key shim_accumulate where it holds
// a valid value (a bad one costs one line on the window's rank 0).
ManagedWindow::PathRequest path_request(MPI_Info info, MPI_Comm comm) {
  ManagedWindow::PathRequest request{shim::config().accumulate, false};
  if (info == MPI_INFO_NULL) return request;
  char value[32] = {};
  int length = static_cast<int>(sizeof value) - 1;
  int found = 0;
  if (PMPI_Info_get_string(info, "shim_accumulate", &length, value, &found) != MPI_SUCCESS || !found) return request;
  shim::Choice<shim::rma::AccumulatePath> path;
  if (shim::parse_choice(value, shim::rma::kAccumulatePaths, path)) return {path, true};
  int rank = 0;
  if (PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS && rank == 0) {
    shim::print_line(std::string("window info shim_accumulate='") + value +
                     "' is not valid (accepted: auto|owner|caller|native); using SHIM_ACCUMULATE's " +
                     std::string(shim::choice_name(shim::config().accumulate)));
  }
  return request;
}

// Collective over comm: a managed window, its decision announced under
// SHIM_VERBOSE. MPI error code.
int create_managed(ManagedWindow::Creation creation, void* baseptr, MPI_Win* win) {
  creation.locks_held_on_return = shim::mpi_locks_held_on_return();
  const MPI_Comm comm = creation.comm;
  shim::CommState* state = nullptr;
  const shim::topo::Hierarchy* hierarchy = nullptr;
  SHIM_TRY(shim::comm_state(comm, state));
  SHIM_TRY(state->hierarchy(comm, shim::config().node_size, hierarchy));
  SHIM_TRY(ManagedWindow::create(creation, *hierarchy, path_request(creation.info, comm), baseptr, win));
  if (shim::config().verbose && state->rank() == 0) {
    const ManagedWindow* window = ManagedWindow::of(*win);
    const char* made_by = creation.flavor == ManagedWindow::Flavor::create ? " (MPI_Win_create)" : "";
    shim::print_line("accumulate on window " + std::to_string(window->id() & 0xffffffffu) + made_by + " of " +
                     state->label() + ", " + std::to_string(hierarchy->layout().nodes()) + " node(s): every size -> " +
                     std::string(name(window->path())) + ": " + window->reason());
  }
  return MPI_SUCCESS;
}

}  // namespace

SHIM_EXPORT int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                                 MPI_Win* win) {
  // Arguments native MPI rejects, and intercommunicators, go to MPI.
  int inter = 0;
  if (!shim::shim_active() || !shim::rma_wing_ready() || size < 0 || disp_unit <= 0 || comm == MPI_COMM_NULL ||
      baseptr == nullptr || win == nullptr || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) {
    return PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
  }
  return shim::raise_on_comm(
      comm, create_managed({ManagedWindow::Flavor::allocate, nullptr, size, disp_unit, info, comm}, baseptr, win));
}

SHIM_EXPORT int MPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                                   MPI_Win* win) {
  if (!shim::shim_active() || disp_unit > INT_MAX)
    return PMPI_Win_allocate_c(size, disp_unit, info, comm, baseptr, win);
  return MPI_Win_allocate(size, static_cast<int>(disp_unit), info, comm, baseptr, win);
}

SHIM_EXPORT int MPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  int inter = 0;
  if (!shim::shim_active() || !shim::rma_wing_ready() || size < 0 || disp_unit <= 0 || comm == MPI_COMM_NULL ||
      (base == nullptr && size > 0) || win == nullptr || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) {
    return PMPI_Win_create(base, size, disp_unit, info, comm, win);
  }
  return shim::raise_on_comm(
      comm, create_managed({ManagedWindow::Flavor::create, base, size, disp_unit, info, comm}, nullptr, win));
}

SHIM_EXPORT int MPI_Win_create_c(void* base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                                 MPI_Win* win) {
  if (!shim::shim_active() || disp_unit > INT_MAX) return PMPI_Win_create_c(base, size, disp_unit, info, comm, win);
  return MPI_Win_create(base, size, static_cast<int>(disp_unit), info, comm, win);
}

SHIM_EXPORT int MPI_Win_free(MPI_Win* win) {
  if (win == nullptr || !shim::shim_active() || ManagedWindow::of(*win) == nullptr) return PMPI_Win_free(win);
  const MPI_Win user = *win;
  const int rc = ManagedWindow::free(win);
  // A window freed has no handler left: what went wrong after that goes to
  // MPI_COMM_SELF's.
  return shim::raise_on_window(*win == MPI_WIN_NULL ? MPI_WIN_NULL : user, rc);
}

SHIM_EXPORT int MPI_Accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                               MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
                               MPI_Win win) {
  const AccumulateCall call = accumulate_call(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                                              target_count, target_datatype, op);
  return dispatch(Op::accumulate, win, call, nullptr, [&] {
    return PMPI_Accumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                           target_datatype, op, win);
  });
}

SHIM_EXPORT int MPI_Accumulate_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                                 int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                                 MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  const AccumulateCall call = accumulate_call(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                                              target_count, target_datatype, op);
  return dispatch(Op::accumulate, win, call, nullptr, [&] {
    return PMPI_Accumulate_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                             target_datatype, op, win);
  });
}

SHIM_EXPORT int MPI_Raccumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
                                MPI_Op op, MPI_Win win, MPI_Request* request) {
  const AccumulateCall call = accumulate_call(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                                              target_count, target_datatype, op);
  return dispatch(Op::accumulate, win, call, request, [&] {
    return PMPI_Raccumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                            target_datatype, op, win, request);
  });
}

SHIM_EXPORT int MPI_Raccumulate_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                                  int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                                  MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request) {
  const AccumulateCall call = accumulate_call(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                                              target_count, target_datatype, op);
  return dispatch(Op::accumulate, win, call, request, [&] {
    return PMPI_Raccumulate_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                              target_datatype, op, win, request);
  });
}

SHIM_EXPORT int MPI_Get_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                   void* result_addr, int result_count, MPI_Datatype result_datatype, int target_rank,
                                   MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
                                   MPI_Win win) {
  const AccumulateCall call =
      fetching_call(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank,
                    target_disp, target_count, target_datatype, op);
  return dispatch(Op::get_accumulate, win, call, nullptr, [&] {
    return PMPI_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
                               target_rank, target_disp, target_count, target_datatype, op, win);
  });
}

SHIM_EXPORT int MPI_Get_accumulate_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                                     void* result_addr, MPI_Count result_count, MPI_Datatype result_datatype,
                                     int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  const AccumulateCall call =
      fetching_call(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank,
                    target_disp, target_count, target_datatype, op);
  return dispatch(Op::get_accumulate, win, call, nullptr, [&] {
    return PMPI_Get_accumulate_c(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
                                 target_rank, target_disp, target_count, target_datatype, op, win);
  });
}

SHIM_EXPORT int MPI_Rget_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                    void* result_addr, int result_count, MPI_Datatype result_datatype, int target_rank,
                                    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
                                    MPI_Win win, MPI_Request* request) {
  const AccumulateCall call =
      fetching_call(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank,
                    target_disp, target_count, target_datatype, op);
  return dispatch(Op::get_accumulate, win, call, request, [&] {
    return PMPI_Rget_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
                                target_rank, target_disp, target_count, target_datatype, op, win, request);
  });
}

SHIM_EXPORT int MPI_Rget_accumulate_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                                      void* result_addr, MPI_Count result_count, MPI_Datatype result_datatype,
                                      int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                                      MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request) {
  const AccumulateCall call =
      fetching_call(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank,
                    target_disp, target_count, target_datatype, op);
  return dispatch(Op::get_accumulate, win, call, request, [&] {
    return PMPI_Rget_accumulate_c(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                                  result_datatype, target_rank, target_disp, target_count, target_datatype, op, win,
                                  request);
  });
}

SHIM_EXPORT int MPI_Fetch_and_op(const void* origin_addr, void* result_addr, MPI_Datatype datatype, int target_rank,
                                 MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  AccumulateCall call =
      fetching_call(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp, 1, datatype, op);
  call.form = shim::rma::AccumulateForm::fetch_and_op;
  return dispatch(Op::fetch_and_op, win, call, nullptr, [&] {
    return PMPI_Fetch_and_op(origin_addr, result_addr, datatype, target_rank, target_disp, op, win);
  });
}

SHIM_EXPORT int MPI_Compare_and_swap(const void* origin_addr, const void* compare_addr, void* result_addr,
                                     MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win) {
  // Compare-and-swap is the family's one operation that is not an op: run
  // as a fetching replace that only writes on a match.
  AccumulateCall call = fetching_call(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp, 1,
                                      datatype, MPI_REPLACE);
  call.compare = compare_addr;
  call.form = shim::rma::AccumulateForm::compare_and_swap;
  return dispatch(Op::compare_and_swap, win, call, nullptr, [&] {
    return PMPI_Compare_and_swap(origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp, win);
  });
}

// MPI's own puts and gets: on a managed window they wait for shim's
// accumulates to the bytes they touch, then pass to MPI as they are.
template <typename PmpiCall>
int ordered(MPI_Win win, int target, MPI_Aint displacement, MPI_Count count, MPI_Datatype type, PmpiCall pmpi_call) {
  ManagedWindow* window = managed(win);
  if (window != nullptr) {
    const int rc = window->order_mpi_access(target, displacement, count, type);
    if (rc != MPI_SUCCESS) return shim::raise_on_window(win, rc);
  }
  return pmpi_call();
}

SHIM_EXPORT int MPI_Put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                        MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  return ordered(win, target_rank, target_disp, target_count, target_datatype, [&] {
    return PMPI_Put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype,
                    win);
  });
}

SHIM_EXPORT int MPI_Put_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                          int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype,
                          MPI_Win win) {
  return ordered(win, target_rank, target_disp, target_count, target_datatype, [&] {
    return PMPI_Put_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                      target_datatype, win);
  });
}

SHIM_EXPORT int MPI_Rput(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                         MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
                         MPI_Request* request) {
  return ordered(win, target_rank, target_disp, target_count, target_datatype, [&] {
    return PMPI_Rput(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                     target_datatype, win, request);
  });
}

SHIM_EXPORT int MPI_Rput_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                           int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype,
                           MPI_Win win, MPI_Request* request) {
  return ordered(win, target_rank, target_disp, target_count, target_datatype, [&] {
    return PMPI_Rput_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                       target_datatype, win, request);
  });
}

SHIM_EXPORT int MPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                        MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  return ordered(win, target_rank, target_disp, target_count, target_datatype, [&] {
    return PMPI_Get(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype,
                    win);
  });
}

SHIM_EXPORT int MPI_Get_c(void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                          MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win) {
  return ordered(win, target_rank, target_disp, target_count, target_datatype, [&] {
    return PMPI_Get_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                      target_datatype, win);
  });
}

SHIM_EXPORT int MPI_Rget(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                         MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
                         MPI_Request* request) {
  return ordered(win, target_rank, target_disp, target_count, target_datatype, [&] {
    return PMPI_Rget(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                     target_datatype, win, request);
  });
}

SHIM_EXPORT int MPI_Rget_c(void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                           MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
                           MPI_Request* request) {
  return ordered(win, target_rank, target_disp, target_count, target_datatype, [&] {
    return PMPI_Rget_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                       target_datatype, win, request);
  });
}

// The epoch calls: MPI's call first, then the window notes what it opened
// or closed; the closing ones complete what shim shipped before MPI closes.
template <typename PmpiCall, typename Note>
int noted(MPI_Win win, PmpiCall pmpi_call, Note note) {
  const int rc = pmpi_call();
  if (rc != MPI_SUCCESS) return rc;
  ManagedWindow* window = managed(win);
  return window != nullptr ? shim::raise_on_window(win, note(*window)) : MPI_SUCCESS;
}

SHIM_EXPORT int MPI_Win_lock(int lock_type, int rank, int assert_flags, MPI_Win win) {
  return noted(
      win, [&] { return PMPI_Win_lock(lock_type, rank, assert_flags, win); },
      [&](ManagedWindow& window) {
        window.note_lock(rank, (assert_flags & MPI_MODE_NOCHECK) != 0);
        return MPI_SUCCESS;
      });
}

SHIM_EXPORT int MPI_Win_lock_all(int assert_flags, MPI_Win win) {
  return noted(
      win, [&] { return PMPI_Win_lock_all(assert_flags, win); },
      [&](ManagedWindow& window) {
        window.note_lock_all((assert_flags & MPI_MODE_NOCHECK) != 0);
        return MPI_SUCCESS;
      });
}

SHIM_EXPORT int MPI_Win_start(MPI_Group group, int assert_flags, MPI_Win win) {
  return noted(
      win, [&] { return PMPI_Win_start(group, assert_flags, win); },
      [&](ManagedWindow& window) { return window.note_start(group); });
}

SHIM_EXPORT int MPI_Win_post(MPI_Group group, int assert_flags, MPI_Win win) {
  return noted(
      win, [&] { return PMPI_Win_post(group, assert_flags, win); },
      [](ManagedWindow& window) {
        window.note_post();
        return MPI_SUCCESS;
      });
}

SHIM_EXPORT int MPI_Win_wait(MPI_Win win) {
  return noted(
      win, [&] { return PMPI_Win_wait(win); },
      [](ManagedWindow& window) {
        window.note_exposure_closed();
        return MPI_SUCCESS;
      });
}

SHIM_EXPORT int MPI_Win_test(MPI_Win win, int* flag) {
  return noted(
      win, [&] { return PMPI_Win_test(win, flag); },
      [&](ManagedWindow& window) {
        if (*flag != 0) window.note_exposure_closed();
        return MPI_SUCCESS;
      });
}

// A completing call (unlock, fence, complete, flush): what shim shipped
// completes first, then MPI's own call, then the window notes what MPI
// completed.
template <typename PmpiCall, typename Note>
int completing(MPI_Win win, PmpiCall pmpi_call, Note note) {
  return after_completion(win, [&] {
    return noted(win, pmpi_call, [&](ManagedWindow& window) {
      note(window);
      return MPI_SUCCESS;
    });
  });
}

SHIM_EXPORT int MPI_Win_unlock(int rank, MPI_Win win) {
  return completing(
      win, [&] { return PMPI_Win_unlock(rank, win); }, [&](ManagedWindow& w) { w.note_unlock(rank); });
}

SHIM_EXPORT int MPI_Win_unlock_all(MPI_Win win) {
  return completing(
      win, [&] { return PMPI_Win_unlock_all(win); }, [](ManagedWindow& w) { w.note_unlock_all(); });
}

SHIM_EXPORT int MPI_Win_fence(int assert_flags, MPI_Win win) {
  return completing(
      win, [&] { return PMPI_Win_fence(assert_flags, win); }, [&](ManagedWindow& w) { w.note_fence(assert_flags); });
}

SHIM_EXPORT int MPI_Win_complete(MPI_Win win) {
  return completing(
      win, [&] { return PMPI_Win_complete(win); }, [](ManagedWindow& w) { w.note_complete(); });
}

SHIM_EXPORT int MPI_Win_flush(int rank, MPI_Win win) {
  return completing(
      win, [&] { return PMPI_Win_flush(rank, win); }, [&](ManagedWindow& w) { w.note_flush(rank); });
}

SHIM_EXPORT int MPI_Win_flush_all(MPI_Win win) {
  return completing(
      win, [&] { return PMPI_Win_flush_all(win); }, [](ManagedWindow& w) { w.note_flush_all(); });
}

// Local completion of a fetching operation is its result being in, so the
// local flushes complete as much as the remote ones.
SHIM_EXPORT int MPI_Win_flush_local(int rank, MPI_Win win) {
  return after_completion(win, [&] { return PMPI_Win_flush_local(rank, win); });
}

SHIM_EXPORT int MPI_Win_flush_local_all(MPI_Win win) {
  return after_completion(win, [&] { return PMPI_Win_flush_local_all(win); });
}

// Same-node owner-computes writes the target's memory with plain stores
// under locks; a full fence makes them visible to the caller's loads.
SHIM_EXPORT int MPI_Win_sync(MPI_Win win) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return PMPI_Win_sync(win);
}
