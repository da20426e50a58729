/* An ordinary MPI program that knows nothing about shim: built with mpicc,
 * not linked to libshim. check_preload.py runs it with and without
 * LD_PRELOAD=libshim.so. It checks its results against values it computes
 * itself and prints how many MPI_Alltoall calls it made. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int value(int source, int dest, int i) { return source * 1000003 + dest * 1009 + i; }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, calls = 0, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int counts[] = {1, 17, 300};
  for (int c = 0; c < 3; ++c) {
    const int n = counts[c];
    int *send = malloc(sizeof(int) * n * size), *recv = malloc(sizeof(int) * n * size);
    for (int d = 0; d < size; ++d)
      for (int i = 0; i < n; ++i) send[d * n + i] = value(rank, d, i);
    MPI_Alltoall(send, n, MPI_INT, recv, n, MPI_INT, MPI_COMM_WORLD);
    ++calls;
    for (int s = 0; s < size; ++s)
      for (int i = 0; i < n; ++i) bad += recv[s * n + i] != value(s, rank, i);
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, send, n, MPI_INT, MPI_COMM_WORLD);
    ++calls;
    for (int s = 0; s < size; ++s)
      for (int i = 0; i < n; ++i) bad += send[s * n + i] != value(s, rank, i);
    free(send);
    free(recv);
  }
  int total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("plain_alltoall (C): calls=%d wrong=%d\n", calls, total);
  MPI_Finalize();
  return total != 0;
}
