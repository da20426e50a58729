/* An application linked with shim (-lshim), as users link it: one window from
 * MPI_Win_allocate on MPI_COMM_WORLD, every rank adds 1 to every rank's
 * element, and each rank checks it holds the number of ranks. Under
 * SHIM_VERBOSE=1, shim prints the window's accumulate decision; the
 * shim-info test compares shim-info's report with it. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double *element;
  MPI_Win win;
  MPI_Win_allocate(sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &element, &win);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
  *element = 0.0;
  MPI_Win_unlock(rank, win);
  MPI_Barrier(MPI_COMM_WORLD);

  const double one = 1.0;
  MPI_Win_lock_all(0, win);
  for (int target = 0; target < size; ++target) {
    MPI_Accumulate(&one, 1, MPI_DOUBLE, target, 0, 1, MPI_DOUBLE, MPI_SUM, win);
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);

  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
  int wrong = *element != (double)size, total = 0;
  MPI_Win_unlock(rank, win);
  MPI_Allreduce(&wrong, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("window_job: ranks=%d wrong=%d\n", size, total);
  MPI_Win_free(&win);
  MPI_Finalize();
  return total != 0;
}
