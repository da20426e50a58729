/* An ordinary MPI program that knows nothing about shim: broadcasts from
 * every root and checks the values it computes itself. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, wrong = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = 5000;
  double *data = malloc(sizeof(double) * n);
  for (int root = 0; root < size; ++root) {
    for (int i = 0; i < n; ++i) data[i] = rank == root ? root * 1e6 + i : -1;
    MPI_Bcast(data, n, MPI_DOUBLE, root, MPI_COMM_WORLD);
    for (int i = 0; i < n; ++i) wrong += data[i] != root * 1e6 + i;
  }
  free(data);
  int total = 0;
  MPI_Allreduce(&wrong, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("plain_bcast: calls=%d wrong=%d\n", size, total);
  MPI_Finalize();
  return total != 0;
}
