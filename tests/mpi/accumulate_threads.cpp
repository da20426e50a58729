// The communication server beside application threads: every process runs
// two threads that accumulate into every other process's window (same node
// and remote) while the node's server thread applies what other nodes ship.
// Built with ThreadSanitizer in CI. Sums are checked exactly, every
// fetch-and-op ticket must be unique, and a get behind a fetch-and-op sees
// its increment.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <thread>
#include <vector>

namespace {

constexpr int kThreads = 2;
constexpr int kRounds = 200;
constexpr int kElements = 33;  // odd: the window is an odd multiple of 8 bytes

int fail(const char* what, long expected, long actual) {
  std::fprintf(stderr, "accumulate_threads: %s: expected %ld, got %ld\n", what, expected, actual);
  MPI_Abort(MPI_COMM_WORLD, 1);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided != MPI_THREAD_MULTIPLE) {
    std::printf("accumulate_threads: skipped: no MPI_THREAD_MULTIPLE\n");
    MPI_Finalize();
    return 77;
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long* counters = nullptr;
  MPI_Win win;
  // Element kElements is the ticket counter; then one counter per thread of
  // every process.
  const int elements = kElements + 1 + size * kThreads;
  MPI_Win_allocate(elements * static_cast<MPI_Aint>(sizeof(long)), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &counters, &win);
  std::fill(counters, counters + elements, 0L);
  MPI_Barrier(MPI_COMM_WORLD);

  std::vector<std::vector<long>> tickets(kThreads);
  MPI_Win_lock_all(0, win);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<long> ones(kElements, 1);
      const long one = 1;
      for (int round = 0; round < kRounds; ++round) {
        const int target = (rank + round + t) % size;
        MPI_Accumulate(ones.data(), kElements, MPI_LONG, target, 0, kElements, MPI_LONG, MPI_SUM, win);
        long ticket = -1, count = -1, seen = -1;
        MPI_Fetch_and_op(&one, &ticket, MPI_LONG, 0, kElements, MPI_SUM, win);
        // This thread's own counter, and a get right behind it, not flushed
        // between: ordered after it.
        const MPI_Aint own = kElements + 1 + rank * kThreads + t;
        MPI_Fetch_and_op(&one, &count, MPI_LONG, 0, own, MPI_SUM, win);
        MPI_Get(&seen, 1, MPI_LONG, 0, own, 1, MPI_LONG, win);
        MPI_Win_flush(0, win);
        if (seen != round + 1) fail("a get behind this thread's fetch-and-op sees its increment", round + 1, seen);
        tickets[static_cast<std::size_t>(t)].push_back(ticket);
        if (round % 50 == 0) MPI_Win_flush_all(win);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);

  // Every process sent kThreads * kRounds accumulates spread evenly over
  // targets by (rank + round + t) % size; count what lands here.
  long expected = 0;
  for (int origin = 0; origin < size; ++origin) {
    for (int t = 0; t < kThreads; ++t) {
      for (int round = 0; round < kRounds; ++round) expected += (origin + round + t) % size == rank;
    }
  }
  for (int i = 0; i < kElements; ++i) {
    if (counters[i] != expected) return fail("sum of concurrent accumulates", expected, counters[i]);
  }
  const long total_tickets = static_cast<long>(size) * kThreads * kRounds;
  if (rank == 0 && counters[kElements] != total_tickets) {
    return fail("ticket counter", total_tickets, counters[kElements]);
  }
  std::vector<long> mine;
  for (const auto& list : tickets) mine.insert(mine.end(), list.begin(), list.end());
  std::vector<long> all(static_cast<std::size_t>(total_tickets));
  MPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_LONG, all.data(), static_cast<int>(mine.size()), MPI_LONG,
             0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::sort(all.begin(), all.end());
    for (long i = 0; i < total_tickets; ++i) {
      if (all[static_cast<std::size_t>(i)] != i)
        return fail("fetch-and-op tickets 0..n-1, each once", i, all[static_cast<std::size_t>(i)]);
    }
    std::printf("accumulate_threads: %d processes x %d threads: sums and %ld tickets exact\n", size, kThreads,
                total_tickets);
  }
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
