// MPI_Win_free inside an access or exposure epoch is erroneous: MPICH
// returns MPI_ERR_RMA_SYNC to the window's error handler and leaves the
// window as it was, so the program can close the epoch and free it again.
// shim's windows must do the same, with their own state intact: each case
// calls MPI_Win_free in the epoch, then accumulates through the window it
// was refused to free, closes the epoch and checks the sums element by
// element. Run on MPICH's own window (PMPI_Win_allocate) and on shim's
// (MPI_Win_allocate, MPI_Win_create), the error classes compared with
// MPICH's. Found by MPICH's errors/rma/win_sync_free_pt and
// win_sync_free_at: shim took its state apart before MPI refused, and the
// error went to MPI_COMM_SELF's fatal handler.
#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "tests/mpi/checker.hpp"

using shim::test::error_class;

namespace {

constexpr int kElements = 4;

enum class Kind { native, allocated, created };

struct Window {
  MPI_Win win = MPI_WIN_NULL;
  long* base = nullptr;
  std::vector<long> created_memory;
};

Window make_window(Kind kind) {
  Window w;
  const MPI_Aint bytes = kElements * sizeof(long);
  switch (kind) {
    case Kind::native:
      PMPI_Win_allocate(bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &w.base, &w.win);
      break;
    case Kind::allocated:
      MPI_Win_allocate(bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &w.base, &w.win);
      break;
    case Kind::created:
      w.created_memory.assign(kElements, 0);
      w.base = w.created_memory.data();
      MPI_Win_create(w.base, bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &w.win);
      break;
  }
  for (int i = 0; i < kElements; ++i) w.base[i] = 0;
  MPI_Win_set_errhandler(w.win, MPI_ERRORS_RETURN);
  MPI_Barrier(MPI_COMM_WORLD);
  return w;
}

const char* name(Kind kind) {
  switch (kind) {
    case Kind::native:
      return "MPICH's window";
    case Kind::allocated:
      return "shim's MPI_Win_allocate window";
    case Kind::created:
      return "shim's MPI_Win_create window";
  }
  return "";
}

void check_elements(shim::test::Checker& check, const long* got, long expected, const std::string& where) {
  check.expect_elements(
      kElements, [&](std::size_t k) { return got[k] == expected; },
      [&](std::size_t k) {
        return "element " + std::to_string(k) + " is " + std::to_string(got[k]) + ", expected " +
               std::to_string(expected);
      },
      where);
}

// An epoch the free is tried in: how to open it, whether this process may
// accumulate to the target inside it, how to close it. `everyone`: every
// process is in the epoch, else only rank 0 (the others call the free at
// once and wait in it for rank 0's second call).
struct Epoch {
  std::string name;
  bool everyone;
  std::function<void(MPI_Win, int rank, int size)> open;
  bool accumulates;
  std::function<void(MPI_Win, int rank, int size)> close;
};

std::vector<Epoch> epochs(MPI_Group world, MPI_Group empty) {
  return {
      {"MPI_Win_lock (shared, target 0)", true, [](MPI_Win w, int, int) { MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w); },
       true, [](MPI_Win w, int, int) { MPI_Win_unlock(0, w); }},
      {"MPI_Win_lock with MPI_MODE_NOCHECK", true,
       [](MPI_Win w, int, int) { MPI_Win_lock(MPI_LOCK_SHARED, 0, MPI_MODE_NOCHECK, w); }, true,
       [](MPI_Win w, int, int) { MPI_Win_unlock(0, w); }},
      {"MPI_Win_lock_all", true, [](MPI_Win w, int, int) { MPI_Win_lock_all(0, w); }, true,
       [](MPI_Win w, int, int) { MPI_Win_unlock_all(w); }},
      {"MPI_Win_post and MPI_Win_start", true,
       [world](MPI_Win w, int, int) {
         MPI_Win_post(world, 0, w);
         MPI_Win_start(world, 0, w);
       },
       true,
       [](MPI_Win w, int, int) {
         MPI_Win_complete(w);
         MPI_Win_wait(w);
       }},
      {"MPI_Win_post of an empty group (exposure only)", true,
       [empty](MPI_Win w, int, int) { MPI_Win_post(empty, 0, w); }, false,
       [](MPI_Win w, int, int) { MPI_Win_wait(w); }},
      {"MPI_Win_post of an empty group, closed by MPI_Win_test", true,
       [empty](MPI_Win w, int, int) { MPI_Win_post(empty, 0, w); }, false,
       [](MPI_Win w, int, int) {
         int flag = 0;
         while (flag == 0) MPI_Win_test(w, &flag);
       }},
      {"MPI_Win_lock on rank 0 only (target: the last rank)", false,
       [](MPI_Win w, int, int size) { MPI_Win_lock(MPI_LOCK_EXCLUSIVE, size - 1, 0, w); }, true,
       [](MPI_Win w, int, int size) { MPI_Win_unlock(size - 1, w); }},
  };
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  shim::test::Checker check("window_free_in_epoch");
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Group world = MPI_GROUP_NULL;
  MPI_Comm_group(MPI_COMM_WORLD, &world);

  for (const Epoch& epoch : epochs(world, MPI_GROUP_EMPTY)) {
    int native_class = -1;
    for (const Kind kind : {Kind::native, Kind::allocated, Kind::created}) {
      const std::string where = epoch.name + ", " + name(kind);
      Window w = make_window(kind);
      const int target = epoch.everyone ? 0 : size - 1;
      if (epoch.everyone || rank == 0) {
        epoch.open(w.win, rank, size);
        MPI_Win refused = w.win;
        const int got = error_class(MPI_Win_free(&refused));
        check.expect(refused == w.win, where + ": the handle stays after the refused free");
        if (kind == Kind::native) {
          native_class = got;
          check.expect(got == MPI_ERR_RMA_SYNC, where + ": MPICH refuses with MPI_ERR_RMA_SYNC");
        } else {
          check.expect(got == native_class,
                       where + ": class " + std::to_string(got) + ", MPICH's " + std::to_string(native_class));
        }
        if (epoch.accumulates) {
          const long mine = rank + 1;
          for (int i = 0; i < kElements; ++i) {
            check.expect(MPI_Accumulate(&mine, 1, MPI_LONG, target, i, 1, MPI_LONG, MPI_SUM, w.win) == MPI_SUCCESS,
                         where + ": accumulate after the refused free");
          }
        }
        epoch.close(w.win, rank, size);
      }
      long expected = 0;
      if (epoch.accumulates && rank == target) expected = epoch.everyone ? size * (size + 1L) / 2 : 1;
      if (epoch.everyone) {
        // The epoch's accumulates, read through a lock of this process's own part.
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w.win);
        check_elements(check, w.base, expected, where + ", rank " + std::to_string(rank));
        MPI_Win_unlock(rank, w.win);
      }
      // Without everyone in the epoch the others are in this free already
      // while rank 0 is refused, accumulates and closes its epoch.
      check.expect(MPI_Win_free(&w.win) == MPI_SUCCESS && w.win == MPI_WIN_NULL, where + ": the second free");
      if (!epoch.everyone && kind == Kind::created) {
        check_elements(check, w.created_memory.data(), expected,
                       where + ", rank " + std::to_string(rank) + " after the free");
      }
    }
  }

  MPI_Group_free(&world);
  const int status = check.finish();
  MPI_Finalize();
  return status;
}
