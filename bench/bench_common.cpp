#include "bench_common.hpp"

#include <mpi.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

namespace bench {

namespace {

std::string g_program = "bench";

}  // namespace

void set_program_name(std::string_view name) { g_program = name; }

std::optional<std::int64_t> parse_int(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

int parse_count(std::string_view flag, std::string_view text, int minimum) {
  const auto value = parse_int(text);
  if (!value || *value < minimum || *value > std::numeric_limits<int>::max()) {
    throw UsageError(std::string(flag) + " '" + std::string(text) + "': expected an integer >= " +
                     std::to_string(minimum));
  }
  return static_cast<int>(*value);
}

std::int64_t parse_power_of_two_bytes(std::string_view flag, std::string_view text) {
  std::string_view digits = text;
  int shift = 0;
  if (!digits.empty() && (digits.back() == 'K' || digits.back() == 'k')) shift = 10;
  if (!digits.empty() && (digits.back() == 'M' || digits.back() == 'm')) shift = 20;
  if (!digits.empty() && (digits.back() == 'G' || digits.back() == 'g')) shift = 30;
  if (shift != 0) digits.remove_suffix(1);
  const auto value = parse_int(digits);
  // 1 GiB keeps buffers inside int counts, also alltoall's ranks x block in
  // small jobs.
  constexpr std::int64_t kLimit = std::int64_t{1} << 30;
  if (!value || *value < 1 || *value > (kLimit >> shift) || !std::has_single_bit(static_cast<std::uint64_t>(*value))) {
    throw UsageError(std::string(flag) + " '" + std::string(text) +
                     "': expected a power of two from 1 to 1G bytes (K, M and G suffixes accepted)");
  }
  return *value << shift;
}

std::string format_bytes(std::int64_t bytes) {
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1 << 10) && bytes % (1 << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

std::string format_number(double value) {
  char text[64];
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    std::snprintf(text, sizeof text, "%.0f", value);
  } else {
    std::snprintf(text, sizeof text, "%.2f", value);
  }
  return text;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

void fail(const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", g_program.c_str(), message.c_str());
  MPI_Abort(MPI_COMM_WORLD, 3);
  std::abort();  // MPI_Abort does not return; this tells the compiler so
}

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) fail(std::string(what) + " failed with MPI error " + std::to_string(rc));
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  // x86 calls it "model name"; some arm64 kernels have only "Model", or none.
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0) {
      const std::size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      const std::size_t value = line.find_first_not_of(" \t", colon + 1);
      if (value != std::string::npos) return line.substr(value);
    }
  }
  return "unknown (no model name in /proc/cpuinfo)";
}

// Other jobs on a 2-core machine distort timings; the reader should know.
std::string load_average() {
  std::ifstream loadavg("/proc/loadavg");
  std::string one_minute;
  return loadavg >> one_minute ? one_minute : "unknown";
}

std::string mpi_library() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  std::string text(version, static_cast<std::size_t>(length));
  text = text.substr(0, text.find('\n'));
  std::replace(text.begin(), text.end(), '\t', ' ');
  return text;
}

std::string host_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

int usable_cores() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  return sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus)
                                                       : static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
}

Buffer page_aligned(std::size_t bytes) {
  constexpr std::size_t kPage = 4096;
  void* p = std::aligned_alloc(kPage, (bytes + kPage - 1) / kPage * kPage);
  if (p == nullptr) fail("cannot allocate a buffer of " + std::to_string(bytes) + " bytes");
  return Buffer(static_cast<unsigned char*>(p));
}

}  // namespace bench
