#include "harness.hpp"

#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>

namespace bench {

namespace {

std::string g_program = "bench";

std::optional<std::int64_t> parse_int(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::int64_t parse_bytes(std::string_view flag, std::string_view text) {
  std::string_view digits = text;
  int shift = 0;
  if (!digits.empty()) {
    const char suffix = static_cast<char>(std::toupper(static_cast<unsigned char>(digits.back())));
    shift = suffix == 'K' ? 10 : suffix == 'M' ? 20 : suffix == 'G' ? 30 : 0;
  }
  if (shift != 0) digits.remove_suffix(1);
  const auto value = parse_int(digits);
  // 1 GiB keeps buffers inside int counts, also alltoall's ranks x block in
  // small jobs.
  constexpr std::int64_t kLimit = std::int64_t{1} << 30;
  if (!value || *value < 1 || *value > (kLimit >> shift) || !std::has_single_bit(static_cast<std::uint64_t>(*value)))
    throw UsageError(std::string(flag) + " '" + std::string(text) +
                     "': expected a power of two from 1 to 1G bytes (K, M and G suffixes accepted)");
  return *value << shift;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> items;
  while (true) {
    const std::size_t at = text.find(separator);
    items.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return items;
    text.remove_prefix(at + 1);
  }
}

constexpr std::string_view kCommonOptions =
    "  --csv              CSV rows and '# ' header lines instead of a markdown table\n"
    "  --help             print this and exit\n";

// Every rank's string (at most 63 bytes), on every rank.
std::vector<std::string> all_strings(const std::string& mine) {
  constexpr std::size_t kBytes = 64;
  std::array<char, kBytes> text{};
  mine.copy(text.data(), kBytes - 1);
  std::vector<char> all(kBytes * static_cast<std::size_t>(ranks()));
  MPI_Allgather(text.data(), kBytes, MPI_CHAR, all.data(), kBytes, MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (int r = 0; r < ranks(); ++r) out.emplace_back(&all[static_cast<std::size_t>(r) * kBytes]);
  return out;
}

std::string first_word(const char* path, const std::string& fallback) {
  std::ifstream file(path);
  std::string word;
  return file >> word ? word : fallback;
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  // x86 calls it "model name"; some arm64 kernels have only "Model", or none.
  while (std::getline(cpuinfo, line)) {
    const std::size_t colon = line.find(':');
    if ((line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0) && colon != std::string::npos)
      return line.substr(std::min(line.size(), colon + 2));
  }
  return "unknown (no model name in /proc/cpuinfo)";
}

std::string host_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
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

// Like nproc: the CPUs this process may run on, not all of the machine's.
int usable_cores() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  return sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus)
                                                       : static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : std::string(separator)) + item;
  return text;
}

}  // namespace

Args::Args(std::string_view usage, int argc, char** argv) {
  std::map<std::string, bool, std::less<>> takes_value;
  for (const std::string_view line : split(usage, '\n')) {
    if (line.rfind("  --", 0) != 0) continue;
    const std::size_t end = std::min(line.find(' ', 2), line.size());
    const std::string_view rest = line.substr(end);
    takes_value[std::string(line.substr(2, end - 2))] =
        rest.size() > 1 && std::isupper(static_cast<unsigned char>(rest[1]));
  }
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "-h") arg = "--help";
    const std::size_t equals = arg.find('=');
    const auto known = takes_value.find(arg.substr(0, equals));
    if (known == takes_value.end() || (!known->second && equals != std::string_view::npos))
      throw UsageError("unknown option '" + std::string(argv[i]) + "'");
    const std::string name = known->first;
    if (!known->second) {
      flags_.push_back(name);
    } else if (given(name)) {
      throw UsageError(name + " given twice");
    } else if (equals != std::string_view::npos) {
      values_.emplace_back(name, arg.substr(equals + 1));
    } else if (i + 1 < argc) {
      values_.emplace_back(name, argv[++i]);
    } else {
      throw UsageError(name + " needs a value");
    }
  }
}

bool Args::flag(std::string_view name) const { return std::find(flags_.begin(), flags_.end(), name) != flags_.end(); }

std::optional<std::string> Args::value(std::string_view name) const {
  for (const auto& [key, value] : values_)
    if (key == name) return value;
  return std::nullopt;
}

std::string Args::text(std::string_view name, std::string_view fallback) const {
  return value(name).value_or(std::string(fallback));
}

int Args::count(std::string_view name, int fallback, int minimum) const {
  const auto text = value(name);
  if (!text) return fallback;
  const auto parsed = parse_int(*text);
  if (!parsed || *parsed < minimum || *parsed > std::numeric_limits<int>::max())
    throw UsageError(std::string(name) + " '" + *text + "': expected an integer >= " + std::to_string(minimum));
  return static_cast<int>(*parsed);
}

std::int64_t Args::bytes(std::string_view name, std::int64_t fallback) const {
  const auto text = value(name);
  return text ? parse_bytes(name, *text) : fallback;
}

double Args::real(std::string_view name, double fallback, double minimum, double maximum) const {
  const auto text = value(name);
  if (!text) return fallback;
  char* end = nullptr;
  const double parsed = std::strtod(text->c_str(), &end);
  if (text->empty() || end != text->c_str() + text->size() || !(parsed >= minimum && parsed <= maximum))
    throw UsageError(std::string(name) + " '" + *text + "': expected a number from " + format_number(minimum) + " to " +
                     format_number(maximum));
  return parsed;
}

std::vector<std::int64_t> Args::sizes(std::int64_t min, std::int64_t max) const {
  std::vector<std::int64_t> sizes;
  if (const auto list = value("--sizes")) {
    if (given("--min") || given("--max")) throw UsageError("--sizes replaces --min and --max");
    for (const std::string_view item : split(*list, ',')) sizes.push_back(parse_bytes("--sizes", item));
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    return sizes;
  }
  min = bytes("--min", min);
  max = bytes("--max", max);
  if (min > max) throw UsageError("--min " + format_bytes(min) + " is larger than --max " + format_bytes(max));
  for (std::int64_t size = min; size <= max; size *= 2) sizes.push_back(size);
  return sizes;
}

std::vector<std::string> Args::choose(std::string_view name, const std::vector<std::string>& choices,
                                      std::string_view fallback) const {
  const std::string list = text(name, fallback);
  const std::vector<std::string_view> named = split(list, ',');
  for (const std::string_view item : named)
    if (std::find(choices.begin(), choices.end(), item) == choices.end())
      throw UsageError(std::string(name) + ": unknown choice '" + std::string(item) +
                       "' (accepted: " + join(choices, ", ") + ")");
  std::vector<std::string> chosen;
  for (const std::string& choice : choices)
    if (std::find(named.begin(), named.end(), choice) != named.end()) chosen.push_back(choice);
  return chosen;
}

int run(std::string_view program, std::string_view usage, int argc, char** argv,
        const std::function<void(const Args&)>& body) {
  g_program = program;
  MPI_Init(&argc, &argv);
  const std::string full = "usage: " + g_program + " [options]" + std::string(usage) + std::string(kCommonOptions);
  int status = 0;
  try {
    const Args args(full, argc, argv);
    if (args.flag("--help")) {
      if (rank() == 0) std::fputs(full.c_str(), stdout);
    } else {
      body(args);
    }
  } catch (const UsageError& error) {
    if (rank() == 0) std::fprintf(stderr, "%s: %s\n%s", g_program.c_str(), error.what(), full.c_str());
    status = 2;
  }
  MPI_Finalize();
  return status;
}

int rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int ranks() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

void fail(const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", g_program.c_str(), message.c_str());
  MPI_Abort(MPI_COMM_WORLD, 3);
  std::abort();  // MPI_Abort does not return; this tells the compiler so
}

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) fail(std::string(what) + " failed with MPI error " + std::to_string(rc));
}

void Report::line(const std::string& text) const {
  if (rank() != 0) return;
  std::printf("%s%s\n", csv_ ? "# " : "", text.c_str());
  std::fflush(stdout);
}

void Report::columns(const std::vector<std::string>& names, const std::string& title) const {
  if (rank() != 0) return;
  if (csv_) {
    std::printf("%s\n", join(names, ",").c_str());
  } else {
    std::string rule = "|";
    for (std::size_t c = 0; c < names.size(); ++c) rule += "---|";
    std::printf("\n%s\n\n| %s |\n%s\n", title.c_str(), join(names, " | ").c_str(), rule.c_str());
  }
  std::fflush(stdout);
}

void Report::row(const std::vector<std::string>& cells) const {
  if (rank() != 0) return;
  if (csv_) {
    std::printf("%s\n", join(cells, ",").c_str());
  } else {
    std::printf("| %s |\n", join(cells, " | ").c_str());
  }
  std::fflush(stdout);
}

Report::Report(const Args& args, const std::string& title) : csv_(args.csv()) {
  line(g_program + " (shim " + shim_version() + "): " + title);
  Machine& m = machine_;
  MPI_Comm host = MPI_COMM_NULL;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host), "MPI_Comm_split_type");
  int host_rank = 0;
  MPI_Comm_rank(host, &host_rank);
  MPI_Comm_free(&host);
  int leader = host_rank == 0 ? 1 : 0;
  MPI_Allreduce(&leader, &m.hosts, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  // Emulated hosts (network namespaces) share one kernel and its cores,
  // which MPI_COMM_TYPE_SHARED cannot see; the kernel's boot id can.
  std::map<std::string, int> per_machine;
  for (const std::string& id : all_strings(first_word("/proc/sys/kernel/random/boot_id", "host " + host_name())))
    ++per_machine[id];
  m.machines = static_cast<int>(per_machine.size());
  for (const auto& entry : per_machine) m.max_ranks_per_machine = std::max(m.max_ranks_per_machine, entry.second);
  const std::vector<std::string> names = all_strings(host_name());
  m.cores = usable_cores();

  std::vector<std::string> rank_hosts, settings;
  for (std::size_t r = 0; r < names.size(); ++r) rank_hosts.push_back(std::to_string(r) + ":" + names[r]);
  for (char** variable = environ; *variable != nullptr; ++variable) {
    const std::string_view entry = *variable;
    if (entry.rfind("SHIM_", 0) == 0 || entry.rfind("UCX_", 0) == 0) settings.emplace_back(entry);
  }
  std::sort(settings.begin(), settings.end());
  struct utsname uts {};
  // Other jobs on a machine with few cores distort timings: the load says so.
  line("machine: host " + host_name() + ", nproc " + std::to_string(m.cores) + ", kernel " +
       (uname(&uts) == 0 ? uts.release : "unknown") + ", CPU " + cpu_model() + ", load average " +
       first_word("/proc/loadavg", "unknown") + " at start");
  line("MPI: " + mpi_library());
  line("ranks " + std::to_string(ranks()) + " on " + std::to_string(m.hosts) + " host(s) (MPI_COMM_TYPE_SHARED) and " +
       std::to_string(m.machines) + " machine(s) (kernel boot id, at most " + std::to_string(m.max_ranks_per_machine) +
       " ranks per machine); hostnames " + join(rank_hosts, " ") +
       "; settings: " + (settings.empty() ? "none" : join(settings, " ")));
  const std::string share =
      std::to_string(m.max_ranks_per_machine) + " ranks on " + std::to_string(m.cores) + " cores per machine";
  if (m.max_ranks_per_machine > m.cores) {
    line("SCHEDULER-BOUND: " + share +
         ", and MPICH busy-polls: times include waiting for the OS to run "
         "each rank (counts of messages and bytes are not affected)");
  } else {
    line("timings: " + share + ", one core each" +
         (m.max_ranks_per_machine == m.cores ? ", none spare for a shim server thread" : ""));
  }
}

double& Samples::at(int variant, int round, int field) {
  return values_[static_cast<std::size_t>((variant * rounds_ + round) * fields_ + field)];
}

std::vector<double> Samples::series(int variant, int field) const {
  std::vector<double> out;
  for (int round = 0; round < rounds_; ++round)
    out.push_back(values_[static_cast<std::size_t>((variant * rounds_ + round) * fields_ + field)]);
  return out;
}

double Samples::median(int variant, int field) const { return bench::median(series(variant, field)); }

double Samples::min(int variant, int field) const {
  const auto values = series(variant, field);
  return *std::min_element(values.begin(), values.end());
}

double Samples::max(int variant, int field) const {
  const auto values = series(variant, field);
  return *std::max_element(values.begin(), values.end());
}

double Samples::ratio(int variant, int base, int field) const {
  const auto mine = series(variant, field), theirs = series(base, field);
  std::vector<double> ratios;
  for (std::size_t r = 0; r < mine.size(); ++r)
    if (theirs[r] > 0) ratios.push_back(mine[r] / theirs[r]);
  return ratios.empty() ? 0.0 : bench::median(ratios);
}

void Samples::max_over_ranks() { values_ = bench::max_over_ranks(values_); }

Samples alternate(int variants, int rounds, int fields,
                  const std::function<std::vector<double>(int variant, int round)>& batch) {
  Samples samples(variants, rounds, fields);
  for (int round = 0; round < rounds; ++round) {
    for (int k = 0; k < variants; ++k) {
      const int variant = (k + round) % variants;
      const std::vector<double> values = batch(variant, round);
      for (int field = 0; field < fields; ++field)
        samples.at(variant, round, field) = values.at(static_cast<std::size_t>(field));
    }
  }
  samples.max_over_ranks();
  return samples;
}

int batch_size(double per_op, double seconds, int most) {
  return static_cast<int>(std::clamp(seconds / std::max(per_op, 1e-9), 1.0, static_cast<double>(most)));
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::vector<double> max_over_ranks(std::vector<double> values) {
  MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return values;
}

double max_over_ranks(double value) { return max_over_ranks(std::vector<double>{value}).front(); }

std::string format_bytes(std::int64_t bytes) {
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1 << 10) && bytes % (1 << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

std::string format_number(double value) {
  return fixed(value, value == std::floor(value) && std::fabs(value) < 1e15 ? 0 : 2);
}

std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

std::string us(double value) { return fixed(value, value < 1 ? 3 : value < 100 ? 2 : 0); }

std::uint64_t mix(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::int64_t Rng::between(std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(mix(state_ += 0x9e3779b97f4a7c15ULL) % static_cast<std::uint64_t>(hi - lo + 1));
}

Buffer page_aligned(std::size_t bytes) {
  constexpr std::size_t kPage = 4096;
  void* p = std::aligned_alloc(kPage, (bytes + kPage - 1) / kPage * kPage);
  if (p == nullptr) fail("cannot allocate a buffer of " + std::to_string(bytes) + " bytes");
  return Buffer(static_cast<unsigned char*>(p));
}

}  // namespace bench
