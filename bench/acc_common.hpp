// What the accumulate benchmarks (acc_latency, acc_busy_target,
// acc_server_idle, fock_build) share: one window per accumulate path, the
// path chosen by nothing but the info key "shim_accumulate" given to
// MPI_Win_allocate, and an OSU-style batch of accumulates from rank 0 (the
// origin) to the last rank (the target) that the target checks.
#ifndef SHIM_BENCH_ACC_COMMON_HPP
#define SHIM_BENCH_ACC_COMMON_HPP

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness.hpp"

namespace bench {

// The values of the info key shim_accumulate, in table order.
const std::vector<std::string> kAccumulatePaths = {"native", "caller", "owner", "auto"};

// How the windows get their memory: MPI_Win_allocate, or MPI_Win_create over
// page-aligned memory the benchmark allocated.
const std::vector<std::string> kWindowMemory = {"allocate", "create"};

// Collective over MPI_COMM_WORLD: one window of doubles per path, `bytes` on
// this rank, made by MPI_Win_allocate or MPI_Win_create (`memory`).
class PathWindows {
 public:
  PathWindows(const std::vector<std::string>& paths, std::int64_t bytes, const std::string& memory = "allocate");
  // The origin-to-target benchmarks' start: the paths of --paths over the
  // memory of --memory, as large as the largest of `sizes`; 2 ranks or more and
  // sizes of at least one double, or a usage error.
  PathWindows(const Args& args, const std::vector<std::int64_t>& sizes);
  ~PathWindows();
  PathWindows(const PathWindows&) = delete;
  PathWindows& operator=(const PathWindows&) = delete;
  const std::vector<std::string>& paths() const { return paths_; }
  MPI_Win window(int path) const { return windows_[static_cast<std::size_t>(path)]; }
  double* base(int path) const { return bases_[static_cast<std::size_t>(path)]; }
  std::int64_t elements() const { return elements_; }
  // "native -> native, auto -> owner": the path asked for and the one shim
  // took (shim_win_accumulate_path).
  std::string reported() const;
  // "MPI_Win_allocate" or "MPI_Win_create".
  std::string made_by() const;

 private:
  std::vector<std::string> paths_;
  std::vector<MPI_Win> windows_;
  std::vector<double*> bases_;
  std::vector<Buffer> memory_;  // MPI_Win_create's
  std::int64_t elements_;
};

// The origin is rank 0 and the target the last rank; any ranks between
// only wait (with 4 ranks on virtual nodes of one, rank 0's requests for
// rank 3 are forwarded by rank 2's server under SHIM_SERVER_CLUSTER=2).
constexpr int kOrigin = 0;
inline int target_rank() { return ranks() - 1; }

struct Batch {
  double seconds = 0;  // the origin's; 0 elsewhere
  int flushes = 0;     // done, on every rank
};

// How each group of accumulates completes: MPI_Win_flush inside one
// MPI_Win_lock epoch, or an epoch of its own (MPI_Win_lock ... MPI_Win_unlock,
// as ARMCI-MPI does per call).
enum class Completion { flush, unlock };

// How the ranks other than the origin wait for a batch's end: inside MPI
// (MPI_Wait, driving MPI's progress as OSU's target does in MPI_Barrier), or
// asleep, testing every millisecond, so that on an oversubscribed machine
// they leave the cores to the origin and the server threads. Only a path
// served by a server thread can be timed with sleeping ranks: MPI's own
// passive target progresses when the target calls MPI.
enum class Bystanders { in_mpi, asleep };

// Collective. Under MPI_Win_lock(MPI_LOCK_SHARED) the origin runs up to
// `flushes` times `per_flush` MPI_Accumulate(MPI_SUM) of `elements` doubles
// then MPI_Win_flush, or each group in its own epoch (stopping after `cap`
// seconds if cap > 0). The target waits as `bystanders` says, or computes
// in `busy`-second stretches without MPI calls, then checks its window:
// element i holds accumulates x (1 + i % 7).
Batch accumulate_batch(const PathWindows& w, int path, std::int64_t elements, int flushes, int per_flush,
                       double cap = 0, double busy = 0, Completion completion = Completion::flush,
                       Bystanders bystanders = Bystanders::in_mpi);

// Collective: some accumulates on every window, small and large, so that
// first-use costs (connections, a server's start, lazy locks) fall outside
// any batch that is timed or sizes the timed ones.
void first_use(const PathWindows& w);

// The origin's data, element i = 1 + i % 7, page-aligned; shared by all
// batches.
const double* origin_data(std::int64_t elements);

}  // namespace bench

#endif  // SHIM_BENCH_ACC_COMMON_HPP
