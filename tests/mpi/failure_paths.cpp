// shim's error paths, taken on purpose: every MPI call shim makes while
// creating a window, a mirrored window, a distributed array or a
// communicator's hierarchy is made to fail in turn (fault_injection.hpp),
// and so are the calls behind MPI_Win_free and MPI_Win_unlock. Each time the
// error must reach the user's error handler with its class, the call must
// return it, nothing shim created may stay behind (MPI handles are counted
// here; memory by AddressSanitizer in the sanitizer build), and the objects
// must still work afterwards.
#include <mpi.h>
#include <shim/mirror.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fault_injection.hpp"
#include "tests/mpi/checker.hpp"

using shim::test::error_class;

namespace {

shim::test::Checker* g_check = nullptr;
int g_raised = 0;
int g_raised_class = MPI_SUCCESS;
MPI_Errhandler g_win_handler = MPI_ERRHANDLER_NULL;

void note(int code) {
  ++g_raised;
  static_cast<void>(MPI_Error_class(code, &g_raised_class));
}
void on_comm_error(MPI_Comm*, int* code, ...) { note(*code); }
void on_win_error(MPI_Win*, int* code, ...) { note(*code); }

// Every process failed the same step, or none did.
bool fired_everywhere(MPI_Comm comm, bool fired) {
  int extremes[2] = {fired ? 1 : 0, fired ? -1 : 0};
  MPI_Allreduce(MPI_IN_PLACE, extremes, 2, MPI_INT, MPI_MAX, comm);
  g_check->expect(extremes[0] == -extremes[1], "every process failed the same step");
  return extremes[0] == 1;
}

// After a call failed on purpose at step `step`: the call returned the
// injected class, the handler saw it once, and no handle stayed behind
// (handles_before < 0: what the call keeps is checked later, by the caller).
void expect_clean_failure(const std::string& what, long step, int rc, int raised_before, long handles_before) {
  const std::string where = what + " failing at step " + std::to_string(step) + " (" + fault::fired_in() + ")";
  g_check->expect(error_class(rc) == MPI_ERR_OTHER, where + ": returns MPI_ERR_OTHER (got " + std::to_string(rc) + ")");
  g_check->expect(g_raised == raised_before + 1 && g_raised_class == MPI_ERR_OTHER,
                  where + ": the error handler saw it once");
  if (handles_before < 0) return;
  g_check->expect(fault::live_handles() == handles_before,
                  where + ": no handle left behind (" + std::to_string(fault::live_handles() - handles_before) + ")");
}

// Runs `attempt` with the first, second, ... failable call failing until
// it succeeds without a failure; `prepare` runs before each attempt,
// unarmed. `attempt` returns the call's result. Returns the steps that failed.
template <typename Prepare, typename Attempt>
long fail_every_step(const std::string& what, MPI_Comm comm, Prepare prepare, Attempt attempt,
                     bool keeps_handles = false) {
  long step = 1;
  for (;; ++step) {
    prepare();
    const int raised = g_raised;
    const long handles = keeps_handles ? -1 : fault::live_handles();
    fault::arm(step);
    const int rc = attempt();
    const bool fired = fault::fired();
    fault::arm(0);
    // FAILURE_PATHS_TRACE=1 names each step, for finding the one that hangs.
    if (std::getenv("FAILURE_PATHS_TRACE") != nullptr) {
      std::fprintf(stderr, "%s step %ld: %s, rc %d\n", what.c_str(), step, fired ? fault::fired_in() : "-", rc);
    }
    if (!fired_everywhere(comm, fired)) {
      g_check->expect(rc == MPI_SUCCESS, what + " succeeds when nothing fails");
      return step - 1;
    }
    expect_clean_failure(what, step, rc, raised, handles);
  }
}

// A window that works: every rank adds its rank + 1 to element 0 of every
// rank; the sum must be complete.
void expect_working_window(MPI_Comm comm, MPI_Win win, long* base) {
  int size = 0, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  int rc = MPI_Win_fence(0, win);
  *base = 0;
  if (rc == MPI_SUCCESS) rc = MPI_Win_fence(0, win);
  const long mine = rank + 1;
  for (int target = 0; target < size && rc == MPI_SUCCESS; ++target) {
    rc = MPI_Accumulate(&mine, 1, MPI_LONG, target, 0, 1, MPI_LONG, MPI_SUM, win);
  }
  if (rc == MPI_SUCCESS) rc = MPI_Win_fence(0, win);
  g_check->expect(rc == MPI_SUCCESS, "fences and accumulates succeed after the failures");
  g_check->expect(*base == static_cast<long>(size) * (size + 1) / 2, "the window adds up after the failures");
}

// A new duplicate of `parent` with the error handler, for each attempt, so
// that every step of a communicator's first window (its hierarchy and pool
// included) can fail; the last one lives until release().
class FreshCommunicator {
 public:
  FreshCommunicator(MPI_Comm parent, MPI_Errhandler handler) : parent_(parent), handler_(handler) {}
  void operator()() {
    release();
    MPI_Comm_dup(parent_, &comm_);
    MPI_Comm_set_errhandler(comm_, handler_);
  }
  MPI_Comm get() const { return comm_; }
  void release() {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }

 private:
  MPI_Comm parent_;
  MPI_Errhandler handler_;
  MPI_Comm comm_ = MPI_COMM_NULL;
};

// Each attempt on a fresh communicator. What a communicator keeps
// (hierarchy, pool) goes with it: the count is checked once the last one is
// freed.
void window_creation(MPI_Comm parent, MPI_Errhandler handler) {
  const long handles = fault::live_handles();
  FreshCommunicator fresh(parent, handler);
  long* base = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  const long steps = fail_every_step(
      "MPI_Win_allocate", parent, [&] { fresh(); },
      [&] { return MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, fresh.get(), &base, &win); }, true);
  MPI_Comm comm = fresh.get();
  g_check->expect(steps >= 10, "MPI_Win_allocate failed at " + std::to_string(steps) + " steps (at least 10)");
  MPI_Win_set_errhandler(win, g_win_handler);
  expect_working_window(comm, win, base);
  // A second window on the same communicator fails only in its own steps.
  long* second_base = nullptr;
  MPI_Win second = MPI_WIN_NULL;
  const long second_steps = fail_every_step(
      "a second MPI_Win_allocate", parent, [] {},
      [&] { return MPI_Win_allocate(3 * sizeof(long), sizeof(long), MPI_INFO_NULL, comm, &second_base, &second); });
  g_check->expect(second_steps >= 3, "a second window failed at " + std::to_string(second_steps) + " steps");
  MPI_Win_free(&second);
  // The window outlives its communicator: the pool stays until the window goes.
  fresh.release();
  expect_working_window(parent, win, base);
  MPI_Win_free(&win);
  g_check->expect(fault::live_handles() == handles, "windows, pool and hierarchy go with the communicator");
}

// The same for a window over the caller's memory (shim's owner path over
// cross-memory attach): every step of MPI_Win_create fails in turn.
void created_window_creation(MPI_Comm parent, MPI_Errhandler handler) {
  const long handles = fault::live_handles();
  FreshCommunicator fresh(parent, handler);
  long memory = 0;
  MPI_Win win = MPI_WIN_NULL;
  const long steps = fail_every_step(
      "MPI_Win_create", parent, [&] { fresh(); },
      [&] { return MPI_Win_create(&memory, sizeof(long), sizeof(long), MPI_INFO_NULL, fresh.get(), &win); }, true);
  g_check->expect(steps >= 10, "MPI_Win_create failed at " + std::to_string(steps) + " steps (at least 10)");
  MPI_Win_set_errhandler(win, g_win_handler);
  expect_working_window(fresh.get(), win, &memory);
  MPI_Win_free(&win);
  fresh.release();
  g_check->expect(fault::live_handles() == handles, "the window, pool and hierarchy go with the communicator");
}

// Accumulates to every other rank in a passive epoch, so that completion
// has requests to ship to the servers.
void ship_to_others(MPI_Comm comm, MPI_Win win) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const long one = 1;
  for (int target = 0; target < size; ++target) {
    if (target != rank) MPI_Accumulate(&one, 1, MPI_LONG, target, 0, 1, MPI_LONG, MPI_SUM, win);
  }
}

void window_free_and_unlock(MPI_Comm parent) {
  const long handles = fault::live_handles();
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(parent, &comm);
  long* base = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, comm, &base, &win);
  MPI_Win_set_errhandler(win, g_win_handler);

  // The unlock's completion fails: the error reaches the window's handler
  // and MPI's epoch is closed all the same (a new lock_all is accepted).
  auto lock_and_ship = [&] {
    // An epoch left open by the failed unlock would make this an error.
    g_check->expect(MPI_Win_lock_all(0, win) == MPI_SUCCESS, "a new epoch opens after a failed unlock");
    ship_to_others(comm, win);
  };
  const long unlock_steps =
      fail_every_step("MPI_Win_unlock_all", comm, lock_and_ship, [&] { return MPI_Win_unlock_all(win); });
  g_check->expect(unlock_steps >= 1, "MPI_Win_unlock_all failed at " + std::to_string(unlock_steps) + " steps");
  expect_working_window(comm, win, base);

  const long free_steps = fail_every_step(
      "MPI_Win_free", comm, [] {}, [&] { return MPI_Win_free(&win); });
  g_check->expect(free_steps >= 1, "MPI_Win_free failed at " + std::to_string(free_steps) + " steps");
  g_check->expect(win == MPI_WIN_NULL, "the window is freed in the end");
  MPI_Comm_free(&comm);
  g_check->expect(fault::live_handles() == handles, "window create, failed frees and free leave no handle behind");
}

// The communicator's hierarchy, which shim builds on first use and keeps
// until the communicator goes (its failures are hierarchy_building's).
void build_hierarchy(MPI_Comm comm) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  std::vector<int> send(static_cast<std::size_t>(size), 0), recv(static_cast<std::size_t>(size), 0);
  MPI_Alltoall(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, comm);
}

void mirror_creation(MPI_Comm comm) {
  build_hierarchy(comm);
  const long handles = fault::live_handles();
  shim_mirror mirror = nullptr;
  const long steps = fail_every_step(
      "shim_mirror_create", comm, [] {}, [&] { return shim_mirror_create(1000, MPI_DOUBLE, comm, &mirror); });
  g_check->expect(steps >= 8, "shim_mirror_create failed at " + std::to_string(steps) + " steps (at least 8)");
  const double one = 1.0;
  shim_mirror_acc(mirror, 7, 1, &one, nullptr);
  shim_mirror_merge(mirror);
  double seen = 0.0;
  shim_mirror_get(mirror, 7, 1, &seen);
  int size = 0;
  MPI_Comm_size(comm, &size);
  g_check->expect(seen == size, "the mirror merges every process's accumulate after the failures");
  shim_mirror_free(&mirror);
  g_check->expect(fault::live_handles() == handles, "shim_mirror_free leaves no handle behind");

  shim_distributed array = nullptr;
  fail_every_step(
      "shim_distributed_create", comm, [] {}, [&] { return shim_distributed_create(1000, MPI_DOUBLE, comm, &array); });
  shim_distributed_free(&array);
  g_check->expect(fault::live_handles() == handles, "shim_distributed_free leaves no handle behind");
}

// The first collective on a communicator builds its hierarchy: each step of
// that fails in turn, on a fresh communicator each time.
void hierarchy_building(MPI_Comm parent, MPI_Errhandler handler) {
  int size = 0;
  MPI_Comm_size(parent, &size);
  std::vector<int> send(static_cast<std::size_t>(size), 1), recv(static_cast<std::size_t>(size), 0);
  const long handles = fault::live_handles();
  FreshCommunicator fresh(parent, handler);
  // A hierarchy built before a later step failed stays cached on the
  // communicator: the count is checked once the last one is freed.
  const long steps = fail_every_step(
      "the first MPI_Alltoall on a communicator", parent, [&] { fresh(); },
      [&] { return MPI_Alltoall(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, fresh.get()); }, true);
  g_check->expect(steps >= 5, "the hierarchy failed at " + std::to_string(steps) + " steps (at least 5)");
  g_check->expect(recv == std::vector<int>(static_cast<std::size_t>(size), 1), "the alltoall delivers afterwards");
  fresh.release();
  g_check->expect(fault::live_handles() == handles, "freeing the communicator frees its hierarchy");
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
  shim::test::Checker check("failure_paths");
  g_check = &check;
  MPI_Errhandler comm_handler = MPI_ERRHANDLER_NULL;
  MPI_Comm_create_errhandler(on_comm_error, &comm_handler);
  MPI_Win_create_errhandler(on_win_error, &g_win_handler);
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, comm_handler);

  window_creation(comm, comm_handler);
  created_window_creation(comm, comm_handler);
  window_free_and_unlock(comm);
  mirror_creation(comm);
  hierarchy_building(comm, comm_handler);

  MPI_Comm_free(&comm);
  MPI_Errhandler_free(&comm_handler);
  MPI_Errhandler_free(&g_win_handler);
  const int status = check.finish();
  MPI_Finalize();
  return status;
}
