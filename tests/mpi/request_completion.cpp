// A request-based accumulate's request completes when the operation is
// applied at its target, as MPICH's do (they complete on the target's
// acknowledgement), though MPI promises only local completion. BAGEL relies
// on it: an origin calls MPI_Raccumulate and MPI_Wait, then tells the owner
// by a message, and the owner reads its window memory with loads, with no
// flush in between. Every origin does that kRounds times to rank 0, each
// time after rank 0 answered that it looked, on
// native, caller and owner windows (MPI_Win_allocate and MPI_Win_create),
// through MPI_Raccumulate and MPI_Raccumulate_c; rank 0 checks after every
// message that the element holds every contribution so far.
#include <mpi.h>

#include <string>
#include <vector>

#include "tests/mpi/checker.hpp"

namespace {

constexpr int kRounds = 400;
constexpr int kNotice = 7;

shim::test::Checker* check = nullptr;

long contribution(int origin, int round) { return 1000L * origin + round + 1; }

void run(const char* path, bool create, int rank, int size) {
  const std::string where = std::string(path) + (create ? " MPI_Win_create" : " MPI_Win_allocate") + " window";
  MPI_Info info = MPI_INFO_NULL;
  MPI_Info_create(&info);
  MPI_Info_set(info, "shim_accumulate", path);
  long* base = nullptr;
  std::vector<long> memory;
  MPI_Win win = MPI_WIN_NULL;
  const auto bytes = static_cast<MPI_Aint>(size * sizeof(long));
  if (create) {
    memory.assign(static_cast<std::size_t>(size), 0);
    base = memory.data();
    check->expect_success(MPI_Win_create(base, bytes, sizeof(long), info, MPI_COMM_WORLD, &win), where);
  } else {
    check->expect_success(MPI_Win_allocate(bytes, sizeof(long), info, MPI_COMM_WORLD, &base, &win), where);
    for (int k = 0; k < size; ++k) base[k] = 0;
  }
  MPI_Info_free(&info);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  if (rank != 0) {
    for (int round = 0; round < kRounds; ++round) {
      const long value = contribution(rank, round);
      MPI_Request request = MPI_REQUEST_NULL;
      const int rc = round % 2 == 0
                         ? MPI_Raccumulate(&value, 1, MPI_LONG, 0, rank, 1, MPI_LONG, MPI_SUM, win, &request)
                         : MPI_Raccumulate_c(&value, 1, MPI_LONG, 0, rank, 1, MPI_LONG, MPI_SUM, win, &request);
      check->expect_success(rc, where + ": MPI_Raccumulate");
      MPI_Wait(&request, MPI_STATUS_IGNORE);
      MPI_Send(&round, 1, MPI_INT, 0, kNotice, MPI_COMM_WORLD);
      // The next one after rank 0 looked.
      MPI_Recv(nullptr, 0, MPI_INT, 0, kNotice, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  } else {
    std::vector<long> expected(static_cast<std::size_t>(size), 0);
    for (int round = 0; round < kRounds; ++round) {
      for (int origin = 1; origin < size; ++origin) {
        int noticed = -1;
        MPI_Recv(&noticed, 1, MPI_INT, origin, kNotice, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Win_sync(win);
        expected[static_cast<std::size_t>(origin)] += contribution(origin, noticed);
        const long seen = base[origin];
        check->expect(seen == expected[static_cast<std::size_t>(origin)],
                      where + ": after origin " + std::to_string(origin) + "'s request of round " +
                          std::to_string(noticed) + " completed, element " + std::to_string(origin) + " is " +
                          std::to_string(seen) + ", expected " +
                          std::to_string(expected[static_cast<std::size_t>(origin)]));
        MPI_Send(nullptr, 0, MPI_INT, origin, kNotice, MPI_COMM_WORLD);
      }
    }
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  shim::test::Checker checker("request_completion");
  check = &checker;
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (const char* path : {"native", "caller", "owner"})
    for (const bool create : {false, true}) run(path, create, rank, size);
  const int status = checker.finish();
  MPI_Finalize();
  return status;
}
