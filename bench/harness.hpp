// The harness every benchmark in bench/ runs on: one way to read the command
// line, native and shim variants alternating round by round, the max over
// ranks, medians of same-round ratios, the machine described once, and the
// results as a markdown table or CSV. A benchmark program then says only
// what it measures.
#ifndef SHIM_BENCH_HARNESS_HPP
#define SHIM_BENCH_HARNESS_HPP

#include <mpi.h>
#include <shim/shim.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace bench {

// A bad command line or a job that cannot run (too few ranks): all ranks
// throw it alike, before any collective resource exists; run() prints it
// with the usage.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The options a program declared in its usage text: a line "  --name VALUE
// help" takes a value, "  --name  help" is a flag. --csv and --help are
// every program's.
class Args {
 public:
  Args(std::string_view usage, int argc, char** argv);
  bool flag(std::string_view name) const;
  bool given(std::string_view name) const { return flag(name) || value(name).has_value(); }
  std::optional<std::string> value(std::string_view name) const;
  std::string text(std::string_view name, std::string_view fallback) const;
  int count(std::string_view name, int fallback, int minimum = 0) const;
  // A power of two from 1 byte to 1 GiB, with an optional K, M or G suffix.
  std::int64_t bytes(std::string_view name, std::int64_t fallback) const;
  double real(std::string_view name, double fallback, double minimum, double maximum) const;
  // Powers of two from --min to --max (defaults given), or the list --sizes
  // where the program declares it.
  std::vector<std::int64_t> sizes(std::int64_t min, std::int64_t max) const;
  // The named ones of `choices` (comma-separated, in choices' order).
  std::vector<std::string> choose(std::string_view name, const std::vector<std::string>& choices,
                                  std::string_view fallback) const;
  bool csv() const { return flag("--csv"); }

 private:
  std::vector<std::string> flags_;
  std::vector<std::pair<std::string, std::string>> values_;
};

// MPI_Init, the command line, body, MPI_Finalize. Returns the exit status:
// 0, also after --help; 2 after a UsageError, printed with the usage.
int run(std::string_view program, std::string_view usage, int argc, char** argv,
        const std::function<void(const Args&)>& body);

int rank();
int ranks();

// Prints "<program>: message" and aborts the whole job.
[[noreturn]] void fail(const std::string& message);
void check(int rc, const char* what);

// Facts that decide whether timings mean anything: cores, and ranks per
// host and per machine (emulated hosts share a kernel, told apart by its
// boot id).
struct Machine {
  int cores = 0;
  int hosts = 0;
  int machines = 0;
  int max_ranks_per_machine = 0;
};

// Rank 0's output: header lines, then one table, as plain lines and a
// markdown table, or with --csv as '# ' lines and CSV (what bench/*.py read).
// Rows print as they are added. Other ranks print nothing.
class Report {
 public:
  // Collective: "<program> (shim <version>): <title>", then the machine:
  // host, cores, CPU, load, MPI library, ranks per host and per machine,
  // the SHIM_* and UCX_* settings, and whether timings are scheduler-bound.
  Report(const Args& args, const std::string& title);
  void line(const std::string& text) const;
  void columns(const std::vector<std::string>& names, const std::string& title) const;
  void row(const std::vector<std::string>& cells) const;
  const Machine& machine() const { return machine_; }

 private:
  bool csv_;
  Machine machine_;
};

// values[variant][round][field], as measured by one rank, or after
// max_over_ranks() the slowest rank's.
class Samples {
 public:
  Samples(int variants, int rounds, int fields)
      : variants_(variants),
        rounds_(rounds),
        fields_(fields),
        values_(static_cast<std::size_t>(variants * rounds * fields)) {}
  double& at(int variant, int round, int field = 0);
  std::vector<double> series(int variant, int field = 0) const;
  double median(int variant, int field = 0) const;
  double min(int variant, int field = 0) const;
  double max(int variant, int field = 0) const;
  // Median over rounds of variant's value / base's in the same round: load
  // that changes between rounds cancels.
  double ratio(int variant, int base, int field = 0) const;
  void max_over_ranks();  // collective

 private:
  int variants_, rounds_, fields_;
  std::vector<double> values_;
};

// Collective: `rounds` rounds, each running batch(variant, round) once for
// every variant, in an order rotating by round, so that none always runs
// first or after the same neighbour; batch returns this rank's `fields`
// values. Returns the max over ranks of each.
Samples alternate(int variants, int rounds, int fields,
                  const std::function<std::vector<double>(int variant, int round)>& batch);

// Operations per batch for a batch of about `seconds` when one takes
// `per_op` seconds: at least 1, at most `most`.
int batch_size(double per_op, double seconds, int most);

double median(std::vector<double> values);
std::vector<double> max_over_ranks(std::vector<double> values);  // collective
double max_over_ranks(double value);                             // collective

std::string format_bytes(std::int64_t bytes);  // "64 KiB", "1 MiB", "3 B"
std::string format_number(double value);       // counts without decimals, else 2 decimals
std::string fixed(double value, int digits);
std::string us(double value);  // 3 significant-ish digits: "0.042", "23.3", "1234"

// A well-mixed 64-bit hash of x (splitmix64's finalizer): test patterns.
std::uint64_t mix(std::uint64_t x);

// splitmix64: the same sequence on every rank for the same seed.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::int64_t between(std::int64_t lo, std::int64_t hi);  // uniform in [lo, hi]

 private:
  std::uint64_t state_;
};

struct FreeDeleter {
  void operator()(unsigned char* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<unsigned char[], FreeDeleter>;

// Page-aligned, as OSU's buffers are. Where malloc puts them is otherwise
// luck, and it matters: with two 64 KiB heap buffers 16 bytes apart, native
// MPICH's 32 KiB alltoall took 34 us instead of 12 here.
Buffer page_aligned(std::size_t bytes);

}  // namespace bench

#endif  // SHIM_BENCH_HARNESS_HPP
