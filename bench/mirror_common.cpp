#include "mirror_common.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace mbench {

using bench::check;
using bench::UsageError;

Args::Args(int argc, char** argv, std::vector<std::string_view> valued, std::vector<std::string_view> flags) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "-h") arg = "--help";
    if (std::find(flags.begin(), flags.end(), arg) != flags.end() || arg == "--help") {
      flags_[std::string(arg)] = true;
      continue;
    }
    std::string_view value;
    const std::size_t equals = arg.find('=');
    if (equals != std::string_view::npos) {
      value = arg.substr(equals + 1);
      arg = arg.substr(0, equals);
    }
    if (std::find(valued.begin(), valued.end(), arg) == valued.end())
      throw UsageError("unknown option '" + std::string(argv[i]) + "'");
    if (equals == std::string_view::npos) {
      if (i + 1 >= argc) throw UsageError(std::string(arg) + " needs a value");
      value = argv[++i];
    }
    if (values_.count(std::string(arg)) > 0) throw UsageError(std::string(arg) + " given twice");
    values_[std::string(arg)] = std::string(value);
  }
}

std::optional<std::string> Args::value(std::string_view name) const {
  const auto found = values_.find(std::string(name));
  if (found == values_.end()) return std::nullopt;
  return found->second;
}

int Args::count(std::string_view name, int fallback, int minimum) const {
  const auto text = value(name);
  return text ? bench::parse_count(name, *text, minimum) : fallback;
}

std::int64_t Args::bytes(std::string_view name, std::int64_t fallback) const {
  const auto text = value(name);
  return text ? bench::parse_power_of_two_bytes(name, *text) : fallback;
}

double Args::real(std::string_view name, double fallback, double minimum, double maximum) const {
  const auto text = value(name);
  if (!text) return fallback;
  char* end = nullptr;
  const double parsed = std::strtod(text->c_str(), &end);
  if (text->empty() || end != text->c_str() + text->size() || !(parsed >= minimum && parsed <= maximum))
    throw UsageError(std::string(name) + " '" + *text + "': expected a number from " + bench::format_number(minimum) +
                     " to " + bench::format_number(maximum));
  return parsed;
}

namespace {

std::string machine_id() {
  std::ifstream boot_id("/proc/sys/kernel/random/boot_id");
  std::string id;
  return boot_id >> id ? id : "host " + bench::host_name();
}

int count_distinct(const std::string& mine, int* max_members) {
  constexpr std::size_t kBytes = 64;
  std::array<char, kBytes> id{};
  mine.copy(id.data(), kBytes - 1);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<char> ids(kBytes * static_cast<std::size_t>(size));
  MPI_Allgather(id.data(), kBytes, MPI_CHAR, ids.data(), kBytes, MPI_CHAR, MPI_COMM_WORLD);
  std::map<std::string, int> members;
  for (int r = 0; r < size; ++r) ++members[std::string(&ids[static_cast<std::size_t>(r) * kBytes])];
  if (max_members != nullptr) {
    *max_members = 0;
    for (const auto& entry : members) *max_members = std::max(*max_members, entry.second);
  }
  return static_cast<int>(members.size());
}

}  // namespace

Machine describe_machine() {
  Machine m;
  MPI_Comm_size(MPI_COMM_WORLD, &m.ranks);
  MPI_Comm host = MPI_COMM_NULL;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host), "MPI_Comm_split_type");
  int host_rank = 0;
  MPI_Comm_rank(host, &host_rank);
  MPI_Comm_free(&host);
  int leader = host_rank == 0 ? 1 : 0;
  MPI_Allreduce(&leader, &m.hosts, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  m.machines = count_distinct(machine_id(), &m.max_ranks_per_machine);

  shim_mirror probe = nullptr;
  check(shim_mirror_create(1, MPI_DOUBLE, MPI_COMM_WORLD, &probe), "shim_mirror_create");
  int node = 0, local_rank = 0, local_size = 0;
  check(shim_mirror_node(probe, &node, &m.nodes, &local_rank, &local_size), "shim_mirror_node");
  check(shim_mirror_free(&probe), "shim_mirror_free");
  MPI_Allreduce(&local_size, &m.min_ppn, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&local_size, &m.max_ppn, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);

  m.host = bench::host_name();
  m.cores = bench::usable_cores();
  m.cpu = bench::cpu_model();
  m.load = bench::load_average();
  m.mpi = bench::mpi_library();
  for (const char* name : {"SHIM_ENABLE", "SHIM_NODE_SIZE", "UCX_TLS", "UCX_NET_DEVICES"})
    if (const char* value = std::getenv(name)) m.settings += std::string(" ") + name + "=" + value;
  if (m.settings.empty()) m.settings = " none";
  return m;
}

void print_line(bool csv, const std::string& text) { std::printf("%s%s\n", csv ? "# " : "", text.c_str()); }

void print_machine(const Machine& m, bool csv) {
  char text[1024];
  std::snprintf(text, sizeof text, "machine: host %s, nproc %d, CPU %s, load average %s at start", m.host.c_str(),
                m.cores, m.cpu.c_str(), m.load.c_str());
  print_line(csv, text);
  print_line(csv, "MPI: " + m.mpi);
  std::snprintf(text, sizeof text,
                "ranks %d on %d host%s (MPI_COMM_TYPE_SHARED) and %d machine%s (kernel boot id, at most %d ranks "
                "per machine); mirror nodes %d (%d..%d processes each); settings:%s",
                m.ranks, m.hosts, m.hosts == 1 ? "" : "s", m.machines, m.machines == 1 ? "" : "s",
                m.max_ranks_per_machine, m.nodes, m.min_ppn, m.max_ppn, m.settings.c_str());
  print_line(csv, text);
  if (m.max_ranks_per_machine > m.cores) {
    std::snprintf(text, sizeof text,
                  "SCHEDULER-BOUND: %d ranks share %d cores of one machine (emulated hosts share its kernel) and "
                  "MPICH busy-polls: times include waiting for the OS to run each rank",
                  m.max_ranks_per_machine, m.cores);
  } else {
    std::snprintf(text, sizeof text, "timings: at most %d ranks on %d cores per machine, one core each",
                  m.max_ranks_per_machine, m.cores);
  }
  print_line(csv, text);
}

std::vector<double> max_over_ranks(std::vector<double> values) {
  MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return values;
}

double max_over_ranks(double value) {
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return value;
}

bool all_ranks(bool ok) {
  int value = ok ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return value == 1;
}

std::string format_us(double us) {
  char text[32];
  if (us < 1) {
    std::snprintf(text, sizeof text, "%.3f", us);
  } else if (us < 100) {
    std::snprintf(text, sizeof text, "%.2f", us);
  } else {
    std::snprintf(text, sizeof text, "%.0f", us);
  }
  return text;
}

std::string format_rate(double bytes_per_us) {
  char text[32];
  std::snprintf(text, sizeof text, bytes_per_us < 10 ? "%.2f" : "%.0f", bytes_per_us);
  return text;
}

std::uint64_t Rng::next() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::int64_t Rng::between(std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(hi - lo + 1));
}

bool copy_is_contiguous(shim_mirror mirror) {
  MPI_Count count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  check(shim_mirror_size(mirror, &count, &type), "shim_mirror_size");
  if (count < 2) return true;
  int type_size = 0;
  MPI_Type_size(type, &type_size);
  void* first = nullptr;
  void* last = nullptr;
  check(shim_mirror_address(mirror, 0, &first), "shim_mirror_address");
  check(shim_mirror_address(mirror, count - 1, &last), "shim_mirror_address");
  return static_cast<char*>(last) - static_cast<char*>(first) == (count - 1) * type_size;
}

double* local_block(shim_distributed array) {
  MPI_Win window = MPI_WIN_NULL;
  check(shim_distributed_window(array, &window), "shim_distributed_window");
  void* base = nullptr;
  int found = 0;
  check(MPI_Win_get_attr(window, MPI_WIN_BASE, &base, &found), "MPI_Win_get_attr");
  return found ? static_cast<double*>(base) : nullptr;
}

namespace {

template <typename Op>
void for_each_owner(shim_distributed array, std::int64_t first, std::int64_t count, Op op) {
  std::int64_t index = first;
  const std::int64_t end = first + count;
  while (index < end) {
    int owner = 0;
    MPI_Aint displacement = 0;
    check(shim_distributed_locate(array, index, &owner, &displacement), "shim_distributed_locate");
    MPI_Count held_first = 0, held_count = 0;
    check(shim_distributed_range(array, owner, &held_first, &held_count), "shim_distributed_range");
    const std::int64_t n = std::min(end, static_cast<std::int64_t>(held_first + held_count)) - index;
    op(owner, displacement, index - first, n);
    index += n;
  }
}

}  // namespace

void Targets::add(int rank) {
  char& seen = touched_[static_cast<std::size_t>(rank)];
  if (!seen) list_.push_back(rank);
  seen = 1;
}

void Targets::flush(MPI_Win window, bool local) {
  for (const int rank : list_) {
    check(local ? MPI_Win_flush_local(rank, window) : MPI_Win_flush(rank, window), "MPI_Win_flush");
    touched_[static_cast<std::size_t>(rank)] = 0;
  }
  list_.clear();
}

void get_range(shim_distributed array, MPI_Win window, std::int64_t first, std::int64_t count, double* buffer,
               Targets& targets) {
  for_each_owner(array, first, count, [&](int owner, MPI_Aint displacement, std::int64_t offset, std::int64_t n) {
    check(MPI_Get(buffer + offset, static_cast<int>(n), MPI_DOUBLE, owner, displacement, static_cast<int>(n),
                  MPI_DOUBLE, window),
          "MPI_Get");
    targets.add(owner);
  });
}

void accumulate_range(shim_distributed array, MPI_Win window, std::int64_t first, std::int64_t count,
                      const double* buffer, Targets& targets) {
  for_each_owner(array, first, count, [&](int owner, MPI_Aint displacement, std::int64_t offset, std::int64_t n) {
    check(MPI_Accumulate(buffer + offset, static_cast<int>(n), MPI_DOUBLE, owner, displacement, static_cast<int>(n),
                         MPI_DOUBLE, MPI_SUM, window),
          "MPI_Accumulate");
    targets.add(owner);
  });
}

std::uint64_t hash_bits(const double* data, std::int64_t count) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::int64_t i = 0; i < count; ++i) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, data + i, sizeof bits);
    h = (h ^ bits) * 0x100000001b3ULL;
    h ^= h >> 29;
  }
  return h;
}

}  // namespace mbench
