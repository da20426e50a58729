/*
 * win_allocate_sum: an unmodified MPI program (plain C, nothing but <mpi.h>)
 * that MPICH 4.0.2's MPI_Win_allocate gets wrong (MPICH issue #6110: on
 * windows of an odd multiple of 8 bytes per rank, one-sided operations land
 * in the wrong place). tools/demo runs the same executable natively and
 * with LD_PRELOAD=libshim.so.
 *
 *   win_allocate_sum [LONGS_PER_RANK]      default 65
 *
 * Every rank allocates LONGS_PER_RANK longs with MPI_Win_allocate and
 * zeroes them; then every rank r adds (r + 1) * (i + 1) to element i of
 * every rank's window with MPI_Accumulate (MPI_SUM) under MPI_Win_lock_all;
 * then each rank checks its elements against (i + 1) * n(n + 1)/2 for n ranks.
 * Rank 0 prints one line: ranks, elements in all windows, wrong elements.
 * Exit status 1 when any element is wrong.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long count = argc > 1 ? atol(argv[1]) : 65;
  if (count < 1) {
    if (rank == 0) fprintf(stderr, "win_allocate_sum: LONGS_PER_RANK must be a positive number\n");
    MPI_Finalize();
    return 2;
  }

  long *elements;
  MPI_Win win;
  MPI_Win_allocate((MPI_Aint)(count * sizeof(long)), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &elements, &win);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
  for (long i = 0; i < count; ++i) elements[i] = 0;
  MPI_Win_unlock(rank, win);
  MPI_Barrier(MPI_COMM_WORLD);

  long *contribution = malloc((size_t)count * sizeof(long));
  for (long i = 0; i < count; ++i) contribution[i] = (rank + 1) * (i + 1);
  MPI_Win_lock_all(0, win);
  for (int target = 0; target < size; ++target) {
    MPI_Accumulate(contribution, (int)count, MPI_LONG, target, 0, (int)count, MPI_LONG, MPI_SUM, win);
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);

  long wrong = 0, total = 0;
  const long ranks_sum = (long)size * (size + 1) / 2;
  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
  for (long i = 0; i < count; ++i) wrong += elements[i] != (i + 1) * ranks_sum;
  MPI_Win_unlock(rank, win);
  MPI_Reduce(&wrong, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Bcast(&total, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("win_allocate_sum: ranks=%d elements=%ld wrong=%ld\n", size, count * size, total);
  }
  free(contribution);
  MPI_Win_free(&win);
  MPI_Finalize();
  return total != 0;
}
