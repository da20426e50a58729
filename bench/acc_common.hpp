// What the accumulate benchmarks (bench/acc_latency.cpp, bench/fock_build.cpp)
// share: the accumulate paths and the windows that select them, and the
// description of the machine in their headers. MPI only through the MPI_*
// API: which path a window takes is the info key "shim_accumulate" given to
// MPI_Win_allocate, nothing else.
#ifndef SHIM_BENCH_ACC_COMMON_HPP
#define SHIM_BENCH_ACC_COMMON_HPP

#include <mpi.h>

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace abench {

// Table order; the values of the info key "shim_accumulate".
enum Path : int { native, caller, owner, automatic, kPaths };
constexpr std::array<const char*, kPaths> kPathNames = {"native", "caller", "owner", "auto"};

// A comma-separated list of path names, in table order without repeats;
// bench::UsageError naming the flag otherwise.
std::vector<Path> parse_paths(std::string_view flag, std::string_view text);
// "native,caller,owner".
std::string join_paths(const std::vector<Path>& paths);

// Collective over comm: MPI_Win_allocate of `bytes` on this rank with the
// info key shim_accumulate = the path's name; *base is this rank's memory.
MPI_Win allocate_window(Path path, MPI_Aint bytes, int disp_unit, MPI_Comm comm, void** base);
// What MPI_Win_get_info says of shim_accumulate: the value, or "(not reported)".
std::string reported_path(MPI_Win window);

struct Machine {
  std::string host;     // rank 0's hostname (an emulated host's in a vcluster)
  int cores = 0;        // like nproc
  std::string kernel;   // uname -r
  std::string cpu;
  std::string load;
  std::string mpi;
  int ranks = 0;
  std::string rank_hosts;    // "0:h0 1:h1"
  int hosts = 0;             // MPI_COMM_TYPE_SHARED groups
  int machines = 0;          // kernel boot ids: emulated hosts share one
  int max_ranks_per_machine = 0;
  std::string settings;      // SHIM_*, UCX_* variables that are set
};

// Collective over MPI_COMM_WORLD.
Machine describe_machine();
// Header lines, each prefixed with "# " in CSV mode.
void print_machine(const Machine& m, bool csv);

// Median over rounds of a[r] / b[r] (same-round ratios, so load that changes
// between rounds cancels).
double paired_ratio(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace abench

#endif  // SHIM_BENCH_ACC_COMMON_HPP
