// What the mirrored-window benchmarks (bench/mirror_*.cpp) share beyond
// bench_common: their command lines, the description of the machine and of
// the mirror's nodes in their headers, reductions over ranks, distributed
// array helpers and a fixed-seed random generator.
#ifndef SHIM_BENCH_MIRROR_COMMON_HPP
#define SHIM_BENCH_MIRROR_COMMON_HPP

#include <mpi.h>
#include <shim/mirror.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mbench {

// "--name value", "--name=value" and bare "--flag"s; anything else is a
// bench::UsageError.
class Args {
 public:
  Args(int argc, char** argv, std::vector<std::string_view> valued, std::vector<std::string_view> flags);
  bool flag(std::string_view name) const { return flags_.count(std::string(name)) > 0; }
  std::optional<std::string> value(std::string_view name) const;
  int count(std::string_view name, int fallback, int minimum) const;
  std::int64_t bytes(std::string_view name, std::int64_t fallback) const;  // power of two, K/M/G
  double real(std::string_view name, double fallback, double minimum, double maximum) const;

 private:
  std::map<std::string, std::string> values_;
  std::map<std::string, bool> flags_;
};

// Parses with `parse`; on a usage error or --help prints (rank 0) and
// finalizes MPI; returns the exit status then, nullopt to go on.
template <typename Options, typename Parse>
std::optional<int> parse_or_exit(const char* program, std::string_view usage, int argc, char** argv, Options& out,
                                 Parse parse);

struct Machine {
  std::string host;
  int cores = 0;
  std::string cpu;
  std::string load;
  std::string mpi;
  int ranks = 0;
  int hosts = 0;                 // MPI_COMM_TYPE_SHARED groups
  int machines = 0;              // kernel boot ids: emulated hosts share one
  int max_ranks_per_machine = 0;
  int nodes = 0;                 // the mirror's nodes (SHIM_NODE_SIZE or hosts)
  int min_ppn = 0, max_ppn = 0;  // processes per mirror node
  std::string settings;          // SHIM_NODE_SIZE, UCX_TLS, ...
};

// Collective over MPI_COMM_WORLD (creates and frees a 1-element mirror).
Machine describe_machine();
// Header lines, each prefixed with "# " in CSV mode.
void print_machine(const Machine& m, bool csv);
void print_line(bool csv, const std::string& text);

// Collective: the maximum of each element over MPI_COMM_WORLD, on every rank.
std::vector<double> max_over_ranks(std::vector<double> values);
double max_over_ranks(double value);
// Collective: whether `ok` holds on every rank.
bool all_ranks(bool ok);

std::string format_us(double us);  // 3 significant-ish digits: "0.042", "23.3", "1234"
std::string format_rate(double bytes_per_us);  // MB/s (1e6 bytes/s)

// splitmix64: the same sequence on every rank for the same seed.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  // Uniform in [lo, hi].
  std::int64_t between(std::int64_t lo, std::int64_t hi);

 private:
  std::uint64_t state_;
};

// Whether this node's copy is one consecutive array (the header promises
// only each holder's range to be): then element pointers may be used
// across holders.
bool copy_is_contiguous(shim_mirror mirror);

// MPI_WIN_BASE of a distributed array's window: this rank's block.
double* local_block(shim_distributed array);
// The ranks a batch of RMA calls touched, to flush them one by one:
// MPICH 4.0.2's MPI_Win_flush_all returned here before every MPI_Get had
// landed (stale data in the first of a batch of gets; see bench/mirror_dft),
// while MPI_Win_flush on each target completes them all.
class Targets {
 public:
  explicit Targets(int ranks) : touched_(static_cast<std::size_t>(ranks), 0) {}
  void add(int rank);
  // MPI_Win_flush (or MPI_Win_flush_local) of every touched rank; clears.
  void flush(MPI_Win window, bool local = false);

 private:
  std::vector<char> touched_;
  std::vector<int> list_;
};

// [first, first + count) of the array into buffer with MPI_Get, one get per
// owner the range touches (added to `targets`); the caller flushes. Inside a
// passive epoch.
void get_range(shim_distributed array, MPI_Win window, std::int64_t first, std::int64_t count, double* buffer,
               Targets& targets);
// The same with MPI_Accumulate(MPI_SUM).
void accumulate_range(shim_distributed array, MPI_Win window, std::int64_t first, std::int64_t count,
                      const double* buffer, Targets& targets);

// A hash of the bits of doubles, for "bit-identical" checks.
std::uint64_t hash_bits(const double* data, std::int64_t count);

}  // namespace mbench

#include "bench_common.hpp"

namespace mbench {

template <typename Options, typename Parse>
std::optional<int> parse_or_exit(const char* program, std::string_view usage, int argc, char** argv, Options& out,
                                 Parse parse) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    bool help = false;
    out = parse(argc, argv, help);
    if (help) {
      if (rank == 0) std::fputs(usage.data(), stdout);
      MPI_Finalize();
      return 0;
    }
  } catch (const bench::UsageError& error) {
    if (rank == 0) std::fprintf(stderr, "%s: %s\n%s", program, error.what(), usage.data());
    MPI_Finalize();
    return 2;
  }
  return std::nullopt;
}

}  // namespace mbench

#endif  // SHIM_BENCH_MIRROR_COMMON_HPP
