// MPI_THREAD_MULTIPLE: threads run alltoalls on their own communicators at
// the same time, each forcing a different algorithm; shim's per-communicator
// state, lazy hierarchy building and per-thread counters must keep them
// apart. Results are checked against values computed independently, and the
// counters must account for every call.
#include <mpi.h>
#include <shim/shim.h>

#include <string>
#include <thread>
#include <vector>

#include "tests/mpi/checker.hpp"

namespace {

constexpr int kThreads = 2;
constexpr int kCalls = 6;
constexpr shim_alltoall_algorithm kPerThread[kThreads] = {SHIM_ALLTOALL_SA, SHIM_ALLTOALL_LEADER};

int value(int thread, int call, int source, int dest, int i) {
  return (((thread * 16 + call) * 64 + source) * 64 + dest) * 8 + i;
}

// Returns the number of wrong elements seen by this thread.
long run_thread(MPI_Comm comm, int thread) {
  int rank = 0, size = 0;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  long wrong = 0;
  shim_set_alltoall_algorithm(comm, kPerThread[thread]);
  for (int call = 0; call < kCalls; ++call) {
    const int count = 1 + call % 3;
    std::vector<int> send(count * size), recv(count * size, -1);
    for (int d = 0; d < size; ++d) {
      for (int i = 0; i < count; ++i) send[d * count + i] = value(thread, call, rank, d, i);
    }
    MPI_Alltoall(send.data(), count, MPI_INT, recv.data(), count, MPI_INT, comm);
    for (int s = 0; s < size; ++s) {
      for (int i = 0; i < count; ++i) wrong += recv[s * count + i] != value(thread, call, s, rank, i);
    }
  }
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  shim::test::Checker check("alltoall_threads");
  check.expect(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE provided");

  // Communicators are created up front: creation is collective and must
  // happen in the same order everywhere.
  MPI_Comm comms[kThreads];
  for (MPI_Comm& comm : comms) PMPI_Comm_dup(MPI_COMM_WORLD, &comm);
  shim_counters before[kThreads];
  for (int t = 0; t < kThreads; ++t) shim_get_alltoall_counters(kPerThread[t], &before[t]);

  long wrong[kThreads] = {};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back([&, t] { wrong[t] = run_thread(comms[t], t); });
  for (std::thread& thread : threads) thread.join();

  for (int t = 0; t < kThreads; ++t) {
    check.expect(wrong[t] == 0, "thread " + std::to_string(t) + ": " + std::to_string(wrong[t]) + " wrong elements");
    shim_counters after{};
    shim_get_alltoall_counters(kPerThread[t], &after);
    check.expect(after.calls - before[t].calls == kCalls, "thread " + std::to_string(t) + ": " +
                                                              std::to_string(after.calls - before[t].calls) +
                                                              " calls counted, expected " + std::to_string(kCalls));
  }
  for (MPI_Comm& comm : comms) PMPI_Comm_free(&comm);
  const int status = check.finish();
  MPI_Finalize();
  return status;
}
