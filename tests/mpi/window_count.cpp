// Codes that keep windows by the hundred (Global Arrays keeps one per live
// array) must not run out of MPI's communicator contexts under shim sooner
// than natively: MPICH has 2048, and a window from its own MPI_Win_allocate
// takes one. Here:
// - contexts per window, counted by duplicating MPI_COMM_WORLD until MPI
//   refuses, after 10 more windows of each path and natively;
// - 1000 windows alive at once (4000 bytes each, as MPICH's own
//   window-allocation tests make them, contiguous and with
//   alloc_shared_noncontig), each holding its own data, a few of them
//   used for accumulates, then freed.
#include <mpi.h>
#include <shim/shim.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/mpi/checker.hpp"

namespace {

shim::test::Checker* g_check = nullptr;

int free_contexts() {
  std::vector<MPI_Comm> comms;
  for (;;) {
    MPI_Comm comm = MPI_COMM_NULL;
    if (MPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) break;
    comms.push_back(comm);
  }
  for (MPI_Comm& comm : comms) MPI_Comm_free(&comm);
  int fewest = static_cast<int>(comms.size());
  MPI_Allreduce(MPI_IN_PLACE, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return fewest;
}

MPI_Info info_with(const char* key, const char* value) {
  MPI_Info info = MPI_INFO_NULL;
  MPI_Info_create(&info);
  MPI_Info_set(info, key, value);
  return info;
}

// Contexts 10 windows take, after a first window has made what a
// communicator's windows share.
double contexts_per_window(const std::string& what, MPI_Info info, bool native) {
  auto allocate = [&](MPI_Win* win) {
    void* base = nullptr;
    return native ? PMPI_Win_allocate(64, 8, info, MPI_COMM_WORLD, &base, win)
                  : MPI_Win_allocate(64, 8, info, MPI_COMM_WORLD, &base, win);
  };
  MPI_Win first = MPI_WIN_NULL;
  allocate(&first);
  const int before = free_contexts();
  std::vector<MPI_Win> windows(10, MPI_WIN_NULL);
  for (MPI_Win& win : windows) g_check->expect(allocate(&win) == MPI_SUCCESS, what + ": MPI_Win_allocate");
  const int after = free_contexts();
  for (MPI_Win& win : windows) native ? PMPI_Win_free(&win) : MPI_Win_free(&win);
  native ? PMPI_Win_free(&first) : MPI_Win_free(&first);
  return (before - after) / 10.0;
}

void count_contexts() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Info caller = info_with("shim_accumulate", "caller");
  MPI_Info native_path = info_with("shim_accumulate", "native");
  const double mpich = contexts_per_window("MPICH's own", MPI_INFO_NULL, true);
  const double owner = contexts_per_window("shim, default path", MPI_INFO_NULL, false);
  const double by_caller = contexts_per_window("shim, caller path", caller, false);
  const double by_native = contexts_per_window("shim, native path", native_path, false);
  MPI_Info_free(&caller);
  MPI_Info_free(&native_path);
  if (rank == 0) {
    std::printf("window_count: contexts per window: MPICH's own %.1f, shim default %.1f, caller %.1f, native %.1f\n",
                mpich, owner, by_caller, by_native);
  }
  g_check->expect(owner <= mpich, "a shim window takes no more contexts than MPICH's own");
  g_check->expect(by_native <= mpich, "a shim window on the native path takes no more contexts than MPICH's own");
  g_check->expect(by_caller <= 2, "a caller-computes window takes at most 2 contexts (its own and the lock window)");
}

void thousand_windows(const std::string& what, MPI_Info info) {
  constexpr int kWindows = 1000;
  constexpr MPI_Aint kBytes = 4000;
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<MPI_Win> windows(kWindows, MPI_WIN_NULL);
  std::vector<int*> bases(kWindows, nullptr);
  int created = 0;
  for (int i = 0; i < kWindows; ++i) {
    if (MPI_Win_allocate(kBytes, sizeof(int), info, MPI_COMM_WORLD, &bases[i], &windows[i]) != MPI_SUCCESS) break;
    for (MPI_Aint e = 0; e < kBytes / static_cast<MPI_Aint>(sizeof(int)); ++e) bases[i][e] = i * 7 + rank;
    ++created;
  }
  g_check->expect(created == kWindows, what + ": " + std::to_string(created) + " of 1000 windows created");
  // Every window still holds its own data: no two share memory.
  int intact = 0;
  for (int i = 0; i < created; ++i) intact += bases[i][0] == i * 7 + rank && bases[i][999] == i * 7 + rank;
  g_check->expect(intact == created, what + ": " + std::to_string(created - intact) + " windows overwritten");
  // A few of them used: every rank adds 1 to the next rank's last element.
  for (int i = 0; i < created; i += 97) {
    const int one = 1;
    MPI_Win_fence(0, windows[i]);
    MPI_Accumulate(&one, 1, MPI_INT, (rank + 1) % size, 999, 1, MPI_INT, MPI_SUM, windows[i]);
    MPI_Win_fence(0, windows[i]);
    g_check->expect(bases[i][999] == i * 7 + rank + 1 && bases[i][998] == i * 7 + rank,
                    what + ": window " + std::to_string(i) + " takes an accumulate");
  }
  for (int i = 0; i < created; ++i) MPI_Win_free(&windows[i]);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  shim::test::Checker check("window_count");
  g_check = &check;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  count_contexts();
  thousand_windows("1000 windows", MPI_INFO_NULL);
  MPI_Info noncontig = info_with("alloc_shared_noncontig", "true");
  thousand_windows("1000 windows, alloc_shared_noncontig", noncontig);
  MPI_Info_free(&noncontig);
  const int status = check.finish();
  MPI_Finalize();
  return status;
}
