// acc_server_idle: how much CPU do the threads other than the main one (a
// shim accumulate server, MPI's own) take while every rank sleeps without
// calling MPI, before any window exists and after accumulate windows were
// allocated and used? CPU time from /proc/self/task/*/stat (utime + stime)
// and schedstat, as percent of one core.
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "acc_common.hpp"

namespace {

constexpr std::string_view kUsage = R"(      (2 ranks or more; accumulates go from rank 0 to rank 1)
  --seconds S    sleep per phase; default 5
  --paths LIST   windows allocated and used, from native,caller,owner,auto; default native,caller,owner
)";

struct ThreadTime {
  std::string name;
  double ticks = 0;  // utime + stime, clock ticks
  double ns = -1;    // schedstat's time on a CPU; -1: unavailable
};

std::map<int, ThreadTime> read_threads() {
  std::map<int, ThreadTime> threads;
  DIR* dir = opendir("/proc/self/task");
  while (const dirent* entry = dir == nullptr ? nullptr : readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const std::string root = std::string("/proc/self/task/") + entry->d_name;
    std::ifstream stat(root + "/stat");
    std::string line;
    const std::size_t open = std::getline(stat, line) ? line.find('(') : std::string::npos;
    const std::size_t close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;  // the thread ended meanwhile
    ThreadTime t;
    t.name = line.substr(open + 1, close - open - 1);
    for (char& c : t.name)
      if (c == ',' || c == ' ') c = '_';
    // After the name: field 3 (state) on; utime is field 14, stime 15.
    std::istringstream fields(line.substr(close + 2));
    std::string field;
    for (int f = 3; f <= 15 && fields >> field; ++f) t.ticks += f >= 14 ? std::atof(field.c_str()) : 0;
    std::ifstream schedstat(root + "/schedstat");
    if (!(schedstat >> t.ns)) t.ns = -1;
    threads[std::atoi(entry->d_name)] = t;
  }
  if (dir != nullptr) closedir(dir);
  return threads;
}

// Collective: every rank sleeps `seconds` between two readings. Returns the
// cells of this rank's row and the other threads' percent of one core.
std::pair<std::vector<std::string>, double> sample(const std::string& phase, double seconds) {
  MPI_Barrier(MPI_COMM_WORLD);
  const auto before = read_threads();
  const double start = MPI_Wtime();
  timespec sleep{static_cast<time_t>(seconds), static_cast<long>((seconds - std::floor(seconds)) * 1e9)};
  while (nanosleep(&sleep, &sleep) != 0) {
  }
  const double wall = MPI_Wtime() - start;
  const auto after = read_threads();
  MPI_Barrier(MPI_COMM_WORLD);
  const double tick = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  double main_pct = 0, others_pct = 0, exact_pct = 0;
  bool exact = true;
  std::string list;
  for (const auto& [tid, t] : after) {
    const ThreadTime old = before.count(tid) ? before.at(tid) : ThreadTime{t.name, 0, 0};
    const double pct = (t.ticks - old.ticks) * tick / wall * 100;
    const double ns_pct = t.ns >= 0 && old.ns >= 0 ? (t.ns - old.ns) * 1e-9 / wall * 100 : -1;
    exact = exact && ns_pct >= 0;
    if (tid == static_cast<int>(getpid())) {
      main_pct = ns_pct >= 0 ? ns_pct : pct;
      continue;
    }
    others_pct += pct;
    exact_pct += std::max(ns_pct, 0.0);
    list += (list.empty() ? "" : " ") + t.name + "[" + std::to_string(tid) +
            "]=" + bench::fixed(ns_pct >= 0 ? ns_pct : pct, 2) + "%";
  }
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return {{phase, std::to_string(bench::rank()), host, bench::fixed(wall, 3), bench::fixed(main_pct, 3),
           bench::fixed(others_pct, 3), exact ? bench::fixed(exact_pct, 3) : "", list.empty() ? "(none)" : list},
          exact ? exact_pct : others_pct};
}

// Collective: rank 0 reports every rank's row; returns the max over ranks
// of the other threads' percent.
double report_all(const bench::Report& report, const std::pair<std::vector<std::string>, double>& mine) {
  constexpr std::size_t kText = 1024;
  std::array<char, kText> text{};
  std::string joined;
  for (const std::string& cell : mine.first) joined += cell + '\t';
  joined.copy(text.data(), kText - 1);
  std::vector<char> all(kText * static_cast<std::size_t>(bench::ranks()));
  MPI_Gather(text.data(), kText, MPI_CHAR, all.data(), kText, MPI_CHAR, 0, MPI_COMM_WORLD);
  for (int r = 0; bench::rank() == 0 && r < bench::ranks(); ++r) {
    std::vector<std::string> cells;
    std::istringstream row(&all[static_cast<std::size_t>(r) * kText]);
    for (std::string cell; std::getline(row, cell, '\t');) cells.push_back(cell);
    report.row(cells);
  }
  return bench::max_over_ranks(mine.second);
}

void benchmark(const bench::Args& args) {
  const double seconds = args.real("--seconds", 5, 0.1, 3600);
  const auto paths = args.choose("--paths", bench::kAccumulatePaths, "native,caller,owner");
  if (bench::ranks() < 2) throw bench::UsageError("needs 2 ranks (accumulates go from rank 0 to rank 1)");
  const bench::Report report(
      args, "CPU time of threads other than the main one while every rank sleeps " + args.text("--seconds", "5") +
                " s in nanosleep (no MPI call): phase no-windows before any window exists "
                "(threads started at MPI_Init, such as a shim server, run in both: compare with SHIM_SERVER=0 for "
                "MPI's own); phase windows with the " +
                std::to_string(paths.size()) + " windows allocated and a few accumulates done on each");
  report.line("method: utime + stime from /proc/self/task/*/stat (ticks of 1/" + std::to_string(sysconf(_SC_CLK_TCK)) +
              " s) and the first field of schedstat (ns on a CPU) before and after the sleep; percent of one core "
              "= CPU time / wall time; main thread apart");
  const auto idle = sample("no-windows", seconds);
  const bench::PathWindows windows(paths, 65536);
  report.line("windows (MPI_Win_allocate, 64 KiB per rank, info shim_accumulate -> the path shim took): " +
              windows.reported());
  bench::first_use(windows);  // any server has started, served and gone idle again
  const auto used = sample("windows", seconds);
  report.columns({"phase", "rank", "host", "seconds", "main_thread_pct", "other_threads_pct", "other_threads_exact_pct",
                  "threads"},
                 "CPU of the threads, percent of one core (exact: schedstat)");
  const double before = report_all(report, idle), with = report_all(report, used);
  report.line("summary: threads other than main, max over ranks: " + bench::fixed(before, 2) +
              "% of one core "
              "without windows, " +
              bench::fixed(with, 2) + "% with them");
}

}  // namespace

int main(int argc, char** argv) { return bench::run("acc_server_idle", kUsage, argc, argv, benchmark); }
