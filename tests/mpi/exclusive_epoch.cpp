// Another origin's exclusive epoch is respected: while rank 0 holds an
// exclusive lock on the last rank's window, no accumulate from rank 1 (which
// asks for a shared lock meanwhile) may land there; rank 0 reads the target
// twice inside its epoch, with other work between, and the two reads must
// agree. After both epochs the target holds every accumulate. Runs natively
// and under shim (the same-node path stores directly, the remote path goes
// through the target node's server), with MPI_Win_lock and MPI_Win_lock_all.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>

namespace {

constexpr int kElements = 5;
constexpr double kHoldSeconds = 0.2;

int fail(const char* what, long expected, long actual) {
  std::fprintf(stderr, "exclusive_epoch: %s: expected %ld, got %ld\n", what, expected, actual);
  MPI_Abort(MPI_COMM_WORLD, 1);
  return 1;
}

long read_first(MPI_Win win, int target) {
  long value = -1;
  MPI_Get(&value, 1, MPI_LONG, target, 0, 1, MPI_LONG, win);
  MPI_Win_flush(target, win);
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 3) {
    if (rank == 0) std::printf("exclusive_epoch: needs 3 ranks or more\n");
    MPI_Finalize();
    return 77;
  }
  const int target = size - 1;
  long* base = nullptr;
  MPI_Win win;
  MPI_Win_allocate(kElements * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
  for (int i = 0; i < kElements; ++i) base[i] = 0;
  MPI_Win_unlock(rank, win);
  MPI_Barrier(MPI_COMM_WORLD);

  const long ones[kElements] = {1, 1, 1, 1, 1};
  for (int round = 0; round < 2; ++round) {
    const bool lock_all = round == 1;
    if (rank == 0) {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
      const long before = read_first(win, target);
      MPI_Barrier(MPI_COMM_WORLD);  // rank 1 now asks for its lock
      const double start = MPI_Wtime();
      while (MPI_Wtime() - start < kHoldSeconds) {
        int flag = 0;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
      }
      const long after = read_first(win, target);
      MPI_Win_unlock(target, win);
      if (after != before) return fail("the target inside rank 0's exclusive epoch changed", before, after);
    } else if (rank == 1) {
      MPI_Barrier(MPI_COMM_WORLD);
      if (lock_all) {
        MPI_Win_lock_all(0, win);
      } else {
        MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
      }
      MPI_Accumulate(ones, kElements, MPI_LONG, target, 0, kElements, MPI_LONG, MPI_SUM, win);
      if (lock_all) {
        MPI_Win_unlock_all(win);
      } else {
        MPI_Win_unlock(target, win);
      }
    } else {
      MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (rank == target) {
    MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
    for (int i = 0; i < kElements; ++i) {
      if (base[i] != 2) return fail("accumulates applied after both epochs", 2, base[i]);
    }
    MPI_Win_unlock(target, win);
    std::printf("exclusive_epoch: %d ranks: no accumulate landed inside an exclusive epoch; all applied\n", size);
  }
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
