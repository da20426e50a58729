// The C++ flavour of plain_alltoall.c: built with mpicxx, not linked to shim.
#include <mpi.h>

#include <cstdio>
#include <vector>

namespace {
double value(int source, int dest, int i) { return source * 1000.0 + dest + i / 1024.0; }
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, calls = 0, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int n : {1, 9, 257}) {
    std::vector<double> send(n * size), recv(n * size);
    for (int d = 0; d < size; ++d)
      for (int i = 0; i < n; ++i) send[d * n + i] = value(rank, d, i);
    MPI_Alltoall(send.data(), n, MPI_DOUBLE, recv.data(), n, MPI_DOUBLE, MPI_COMM_WORLD);
    ++calls;
    for (int s = 0; s < size; ++s)
      for (int i = 0; i < n; ++i) bad += recv[s * n + i] != value(s, rank, i);
  }
  int total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("plain_alltoall (C++): calls=%d wrong=%d\n", calls, total);
  MPI_Finalize();
  return total != 0;
}
