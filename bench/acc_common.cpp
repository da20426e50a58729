#include "acc_common.hpp"

#include <sys/utsname.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>

#include "bench_common.hpp"
#include "mirror_common.hpp"

namespace abench {

using bench::check;
using bench::UsageError;

std::vector<Path> parse_paths(std::string_view flag, std::string_view text) {
  std::array<bool, kPaths> wanted{};
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    const auto known = std::find(kPathNames.begin(), kPathNames.end(), item);
    if (known == kPathNames.end())
      throw UsageError(std::string(flag) + ": unknown path '" + std::string(item) +
                       "' (accepted: native, caller, owner, auto)");
    wanted[static_cast<std::size_t>(known - kPathNames.begin())] = true;
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  std::vector<Path> paths;
  for (int p = 0; p < kPaths; ++p)
    if (wanted[static_cast<std::size_t>(p)]) paths.push_back(static_cast<Path>(p));
  return paths;
}

std::string join_paths(const std::vector<Path>& paths) {
  std::string text;
  for (const Path p : paths) text += (text.empty() ? "" : ",") + std::string(kPathNames[p]);
  return text;
}

MPI_Win allocate_window(Path path, MPI_Aint bytes, int disp_unit, MPI_Comm comm, void** base) {
  MPI_Info info = MPI_INFO_NULL;
  check(MPI_Info_create(&info), "MPI_Info_create");
  check(MPI_Info_set(info, "shim_accumulate", kPathNames[path]), "MPI_Info_set");
  MPI_Win window = MPI_WIN_NULL;
  check(MPI_Win_allocate(bytes, disp_unit, info, comm, base, &window), "MPI_Win_allocate");
  MPI_Info_free(&info);
  return window;
}

std::string reported_path(MPI_Win window) {
  MPI_Info info = MPI_INFO_NULL;
  if (MPI_Win_get_info(window, &info) != MPI_SUCCESS || info == MPI_INFO_NULL) return "(not reported)";
  char value[MPI_MAX_INFO_VAL + 1] = {};
  int found = 0;
  MPI_Info_get(info, "shim_accumulate", MPI_MAX_INFO_VAL, value, &found);
  MPI_Info_free(&info);
  return found ? std::string(value) : "(not reported)";
}

namespace {

std::string machine_id() {
  std::ifstream boot_id("/proc/sys/kernel/random/boot_id");
  std::string id;
  return boot_id >> id ? id : "host " + bench::host_name();
}

// Every rank's string (at most 63 bytes), on every rank.
std::vector<std::string> all_strings(const std::string& mine) {
  constexpr std::size_t kBytes = 64;
  std::array<char, kBytes> text{};
  mine.copy(text.data(), kBytes - 1);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<char> all(kBytes * static_cast<std::size_t>(size));
  MPI_Allgather(text.data(), kBytes, MPI_CHAR, all.data(), kBytes, MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (int r = 0; r < size; ++r) out.emplace_back(&all[static_cast<std::size_t>(r) * kBytes]);
  return out;
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

  std::map<std::string, int> per_machine;
  for (const std::string& id : all_strings(machine_id())) ++per_machine[id];
  m.machines = static_cast<int>(per_machine.size());
  for (const auto& entry : per_machine) m.max_ranks_per_machine = std::max(m.max_ranks_per_machine, entry.second);
  const std::vector<std::string> names = all_strings(bench::host_name());
  for (std::size_t r = 0; r < names.size(); ++r)
    m.rank_hosts += (r == 0 ? "" : " ") + std::to_string(r) + ":" + names[r];

  m.host = bench::host_name();
  m.cores = bench::usable_cores();
  struct utsname uts {};
  m.kernel = uname(&uts) == 0 ? uts.release : "unknown";
  m.cpu = bench::cpu_model();
  m.load = bench::load_average();
  m.mpi = bench::mpi_library();
  for (const char* name : {"SHIM_ENABLE", "SHIM_ACCUMULATE", "SHIM_SERVER", "SHIM_SERVER_POLL", "SHIM_NODE_SIZE",
                           "UCX_TLS", "UCX_NET_DEVICES"})
    if (const char* value = std::getenv(name)) m.settings += std::string(" ") + name + "=" + value;
  if (m.settings.empty()) m.settings = " none";
  return m;
}

void print_machine(const Machine& m, bool csv) {
  char text[1024];
  std::snprintf(text, sizeof text, "machine: host %s, nproc %d, kernel %s, CPU %s, load average %s at start",
                m.host.c_str(), m.cores, m.kernel.c_str(), m.cpu.c_str(), m.load.c_str());
  mbench::print_line(csv, text);
  mbench::print_line(csv, "MPI: " + m.mpi);
  std::snprintf(text, sizeof text,
                "ranks %d on %d host%s (MPI_COMM_TYPE_SHARED) and %d machine%s (kernel boot id, at most %d ranks per "
                "machine); hostnames %s; settings:%s",
                m.ranks, m.hosts, m.hosts == 1 ? "" : "s", m.machines, m.machines == 1 ? "" : "s",
                m.max_ranks_per_machine, m.rank_hosts.c_str(), m.settings.c_str());
  mbench::print_line(csv, text);
  if (m.max_ranks_per_machine > m.cores) {
    std::snprintf(text, sizeof text,
                  "SCHEDULER-BOUND: %d ranks share %d cores of one machine (emulated hosts share its kernel) and "
                  "MPICH busy-polls: times include waiting for the OS to run each rank",
                  m.max_ranks_per_machine, m.cores);
  } else if (m.max_ranks_per_machine == m.cores) {
    std::snprintf(text, sizeof text,
                  "timings: %d ranks on %d cores per machine, one core each but none spare: a shim server thread "
                  "shares a core with a busy-polling rank",
                  m.max_ranks_per_machine, m.cores);
  } else {
    std::snprintf(text, sizeof text, "timings: %d ranks on %d cores per machine, one core each and a spare one",
                  m.max_ranks_per_machine, m.cores);
  }
  mbench::print_line(csv, text);
}

double paired_ratio(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> ratios;
  for (std::size_t r = 0; r < a.size() && r < b.size(); ++r)
    if (b[r] > 0) ratios.push_back(a[r] / b[r]);
  return ratios.empty() ? 0.0 : bench::median(ratios);
}

}  // namespace abench
