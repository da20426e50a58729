// MPI_Win_create windows take the owner-computes path only where the kernel
// lets a node's processes reach each other's memory (process_vm_readv needs
// ptrace permission: Yama's ptrace_scope, a seccomp filter or a container
// can refuse it). This program plays the refusing kernel: it defines
// process_vm_readv and process_vm_writev, which the executable exports, so
// that they take the place of libc's for libshim too, and fail with EPERM
// while `g_refuse` is set. Then:
// - a window created while the kernel allows it takes shim's owner path;
// - one created (on a new communicator) while it refuses stays native, on
//   every process of the communicator, even those whose node has no peer;
// - both add up right, element by element;
// - MPI_Win_allocate windows do not need the kernel and keep shim's path.
#include <dlfcn.h>
#include <mpi.h>
#include <shim/shim.h>
#include <sys/uio.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/mpi/checker.hpp"

namespace {

std::atomic<bool> g_refuse{false};
shim::test::Checker* g_check = nullptr;

using CrossMemoryCall = ssize_t (*)(pid_t, const iovec*, unsigned long, const iovec*, unsigned long, unsigned long);

CrossMemoryCall libc(const char* name) {
  void* symbol = dlsym(RTLD_NEXT, name);
  if (symbol == nullptr) {
    std::fprintf(stderr, "cross_memory_refused: %s not found in libc\n", name);
    std::abort();
  }
  return reinterpret_cast<CrossMemoryCall>(symbol);
}

std::string path_of(MPI_Win win) {
  char path[32] = {};
  shim_win_accumulate_path(win, path, sizeof path);
  return path;
}

constexpr int kElements = 5;

// Every rank adds (its rank + 1) * (k + 1) to element k of every rank.
void expect_sums(MPI_Comm comm, MPI_Win win, const long* base, const std::string& what) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<long> mine(kElements);
  for (int k = 0; k < kElements; ++k) mine[k] = static_cast<long>(rank + 1) * (k + 1);
  g_check->expect_success(MPI_Win_lock_all(0, win), what + ": lock_all");
  for (int target = 0; target < size; ++target) {
    g_check->expect_success(
        MPI_Accumulate(mine.data(), kElements, MPI_LONG, target, 0, kElements, MPI_LONG, MPI_SUM, win),
        what + ": accumulate");
  }
  g_check->expect_success(MPI_Win_unlock_all(win), what + ": unlock_all");
  MPI_Barrier(comm);
  g_check->expect_success(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win), what + ": lock self");
  const long ranks_sum = static_cast<long>(size) * (size + 1) / 2;
  g_check->expect_elements(
      kElements, [&](std::size_t k) { return base[k] == ranks_sum * static_cast<long>(k + 1); },
      [&](std::size_t k) {
        return "element " + std::to_string(k) + " is " + std::to_string(base[k]) + ", expected " +
               std::to_string(ranks_sum * static_cast<long>(k + 1));
      },
      what);
  g_check->expect_success(MPI_Win_unlock(rank, win), what + ": unlock self");
}

// A window over the caller's memory, on a communicator of its own, so that
// shim asks the kernel afresh.
void created_window(bool refuse, const std::string& expected_path) {
  const std::string what = refuse ? "MPI_Win_create, kernel refuses" : "MPI_Win_create, kernel allows";
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  std::vector<long> memory(kElements, 0);
  MPI_Info info = MPI_INFO_NULL;
  MPI_Info_create(&info);
  MPI_Info_set(info, "shim_accumulate", "owner");
  g_refuse = refuse;
  MPI_Win win = MPI_WIN_NULL;
  g_check->expect_success(MPI_Win_create(memory.data(), kElements * sizeof(long), sizeof(long), info, comm, &win),
                          what);
  MPI_Info_free(&info);
  g_check->expect(path_of(win) == expected_path, what + ": path is " + path_of(win) + ", expected " + expected_path);
  expect_sums(comm, win, memory.data(), what);
  g_refuse = false;
  MPI_Win_free(&win);
  MPI_Comm_free(&comm);
}

void allocated_window_while_refused() {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  g_refuse = true;
  long* base = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  g_check->expect_success(MPI_Win_allocate(kElements * sizeof(long), sizeof(long), MPI_INFO_NULL, comm, &base, &win),
                          "MPI_Win_allocate, kernel refuses");
  for (int k = 0; k < kElements; ++k) base[k] = 0;
  MPI_Barrier(comm);
  g_check->expect(path_of(win) == "owner", "MPI_Win_allocate keeps shim's path (" + path_of(win) + ")");
  expect_sums(comm, win, base, "MPI_Win_allocate, kernel refuses");
  g_refuse = false;
  MPI_Win_free(&win);
  MPI_Comm_free(&comm);
}

}  // namespace

extern "C" ssize_t process_vm_readv(pid_t pid, const iovec* local, unsigned long local_count, const iovec* remote,
                                    unsigned long remote_count, unsigned long flags) {
  static const CrossMemoryCall forward = libc("process_vm_readv");
  if (g_refuse) {
    errno = EPERM;
    return -1;
  }
  return forward(pid, local, local_count, remote, remote_count, flags);
}

extern "C" ssize_t process_vm_writev(pid_t pid, const iovec* local, unsigned long local_count, const iovec* remote,
                                     unsigned long remote_count, unsigned long flags) {
  static const CrossMemoryCall forward = libc("process_vm_writev");
  if (g_refuse) {
    errno = EPERM;
    return -1;
  }
  return forward(pid, local, local_count, remote, remote_count, flags);
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  shim::test::Checker check("cross_memory_refused");
  g_check = &check;
  created_window(false, "owner");
  created_window(true, "native");
  allocated_window_while_refused();
  const int status = check.finish();
  MPI_Finalize();
  return status;
}
