// What the OSU-style benchmarks in bench/ share: flag parsing, formatting,
// the machine description of their headers, error exits and buffers.
#ifndef SHIM_BENCH_COMMON_HPP
#define SHIM_BENCH_COMMON_HPP

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace bench {

// A bad command line; main prints it with the usage text.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The prefix of fail()'s message; call first thing in main.
void set_program_name(std::string_view name);

std::optional<std::int64_t> parse_int(std::string_view text);

// An int >= minimum, else UsageError naming the flag.
int parse_count(std::string_view flag, std::string_view text, int minimum);

// A power of two from 1 byte to 1 GiB, with an optional K, M or G suffix.
std::int64_t parse_power_of_two_bytes(std::string_view flag, std::string_view text);

// "64 KiB", "1 MiB", "3 B".
std::string format_bytes(std::int64_t bytes);

// Whole numbers without decimals, so message counts read as counts.
std::string format_number(double value);

double median(std::vector<double> values);

// Prints "<program>: message" and aborts the whole job.
[[noreturn]] void fail(const std::string& message);
void check(int rc, const char* what);

std::string cpu_model();
std::string load_average();
// The first line of MPI_Get_library_version.
std::string mpi_library();
std::string host_name();
// Like nproc: the CPUs this process may run on, not all of the machine's.
int usable_cores();

struct FreeDeleter {
  void operator()(unsigned char* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<unsigned char[], FreeDeleter>;

// Page-aligned, as OSU's buffers are. Where malloc puts them is otherwise
// luck, and it matters: with two 64 KiB heap buffers 16 bytes apart, native
// MPICH's 32 KiB alltoall took 34 us instead of 12 here.
Buffer page_aligned(std::size_t bytes);

}  // namespace bench

#endif  // SHIM_BENCH_COMMON_HPP
