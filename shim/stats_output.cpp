#include "shim/stats_output.hpp"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/log.hpp"
#include "rma/rma_runtime.hpp"
#include "rma/server_counters.hpp"
#include "shim/comm_state.hpp"
#include "shim/runtime.hpp"
#include "shim/stats_report.hpp"

namespace shim::stats {

namespace {

constexpr int kJobIdBytes = 64;
constexpr std::size_t kCommandShown = 160;

// What the batch system or launcher calls the job; Hydra (MPICH's mpiexec)
// names none, and then it is this process's id.
std::string local_job_id() {
  std::string id = std::to_string(getpid());
  for (const char* name : {"SLURM_JOB_ID", "PBS_JOBID", "PMIX_NAMESPACE", "PMI_JOBID"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') {
      id = value;
      break;
    }
  }
  if (id.size() >= kJobIdBytes) id.resize(kJobIdBytes - 1);
  for (char& c : id) {
    if (c == '/') c = '_';  // it goes into a file name
  }
  return id;
}

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && text.back() == '\0') text.pop_back();
  for (char& c : text) {
    if (c == '\0') c = ' ';
  }
  if (text.size() > kCommandShown) text = text.substr(0, kCommandShown) + " ...";
  return text.empty() ? "unknown" : text;
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

std::string mpi_library() {
  std::string text = mpi_library_version();
  if (text.empty()) return "unknown";
  text = text.substr(0, text.find('\n'));
  std::replace(text.begin(), text.end(), '\t', ' ');  // MPICH's "Version:\t4.0.2"
  return text;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  char text[64] = {};
  if (gmtime_r(&now, &utc) == nullptr || std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &utc) == 0) {
    return "unknown";
  }
  return text;
}

// The world's nodes, where shim knows them: in a job-wide report every
// process asks, since building the hierarchy may be collective.
const topo::Layout* world_layout(bool job_wide) {
  if (!job_wide || !config().enabled) return nullptr;
  CommState* state = nullptr;
  const topo::Hierarchy* hierarchy = nullptr;
  if (comm_state(MPI_COMM_WORLD, state) != MPI_SUCCESS ||
      state->hierarchy(MPI_COMM_WORLD, config().node_size, hierarchy) != MPI_SUCCESS) {
    return nullptr;
  }
  return &hierarchy->layout();
}

// This process's server, if it hosts one: fields of ServerRow in order,
// the first saying whether there is one.
using ServerRecord = std::array<std::int64_t, 15>;
ServerRecord local_server(int world_rank, const topo::Layout* layout) {
  const rma::ServerCounters::Reading r = rma::server_counters().read();
  const rma::ServerPoolCounters pool = rma::local_server_pool_counters().value_or(rma::ServerPoolCounters{});
  return {r.started ? 1 : 0,
          layout != nullptr ? layout->node_of(world_rank) : -1,
          world_rank,
          static_cast<std::int64_t>(r.requests),
          static_cast<std::int64_t>(r.bytes),
          pool.busy_ns,
          static_cast<std::int64_t>(r.wall_ns),
          static_cast<std::int64_t>(r.cpu_ns),
          pool.direct_buffer_bytes,
          pool.forward_buffer_bytes,
          pool.peak_buffers_in_use,
          pool.messages_direct,
          pool.messages_forwarded,
          pool.messages_from_servers,
          pool.distinct_peers};
}

void add_server(std::vector<ServerRow>& rows, const ServerRecord& record) {
  if (record[0] == 0) return;
  const auto count = [&record](std::size_t field) { return static_cast<std::uint64_t>(record[field]); };
  rows.push_back({record[1], record[2], count(3), count(4), count(5), count(6), count(7), count(8), count(9), count(10),
                  count(11), count(12), count(13), count(14)});
}

// Collective: the job's sums on rank 0. False if MPI failed.
bool sum_over_job(ReportInput& input, const ServerRecord& mine, int rank, int size) {
  static_assert(sizeof(Table) % sizeof(std::uint64_t) == 0 &&
                sizeof(RmaTable) ==
                    sizeof(std::uint64_t) * kRmaFieldCount * (kAccumulateOps * kAccumulatePaths + kMirrorOps));
  const Table table = input.collectives;
  const RmaTable rma = input.sums;
  std::vector<ServerRecord> servers(static_cast<std::size_t>(rank == 0 ? size : 0));
  const int table_words = static_cast<int>(sizeof(Table) / sizeof(std::uint64_t));
  const int rma_words = static_cast<int>(sizeof(RmaTable) / sizeof(std::uint64_t));
  if (PMPI_Reduce(&table, &input.collectives, table_words, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD) != MPI_SUCCESS ||
      PMPI_Reduce(&rma, &input.sums, rma_words, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD) != MPI_SUCCESS ||
      PMPI_Reduce(&rma, &input.maxima, rma_words, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD) != MPI_SUCCESS ||
      PMPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_INT64_T, servers.data(),
                  static_cast<int>(mine.size()), MPI_INT64_T, 0, MPI_COMM_WORLD) != MPI_SUCCESS) {
    return false;
  }
  for (const ServerRecord& record : servers) add_server(input.servers, record);
  input.processes = size;
  return true;
}

// To `path`, or to stderr if it is empty or cannot be written (one line
// says why).
void emit(const std::vector<std::string>& lines, const std::string& path, const std::string& stderr_prefix) {
  if (!path.empty()) {
    std::FILE* file = std::fopen(path.c_str(), "w");
    int error = file == nullptr ? errno : 0;
    for (std::size_t i = 0; error == 0 && i < lines.size(); ++i) {
      if (std::fputs(lines[i].c_str(), file) < 0 || std::fputc('\n', file) == EOF) error = errno;
    }
    if (file != nullptr && std::fclose(file) != 0 && error == 0) error = errno;
    if (error == 0) return;
    print_line("SHIM_STATS: cannot write the report to '" + path + "' (" + std::strerror(error) +
               "); it goes to stderr instead");
  }
  for (const std::string& line : lines) print_line(stderr_prefix + line);
}

// SHIM_STATS=FILE's pattern; none for stderr, or when it is malformed
// (rank 0 says so in one line).
std::optional<FilePattern> report_file_pattern(int rank) {
  const std::string text(config().stats_path.data());
  if (text.empty()) return std::nullopt;
  std::string error;
  std::optional<FilePattern> pattern = parse_file_pattern(text, error);
  if (!pattern && rank == 0) {
    print_line("SHIM_STATS='" + text + "': " + error +
               " (accepted: %r the rank, %j the job id, %% a percent sign); the report goes to stderr");
  }
  return pattern;
}

std::string job_description(int size, const topo::Layout* layout, const std::string& job) {
  std::string text = std::to_string(size) + (size == 1 ? " process" : " processes");
  if (layout != nullptr) {
    text += " on " + std::to_string(layout->nodes()) + (layout->nodes() == 1 ? " node" : " nodes") + " (at most " +
            std::to_string(layout->max_ppn()) + " per node" +
            (config().node_size > 0 ? ", SHIM_NODE_SIZE=" + std::to_string(config().node_size) : "") + ")";
  }
  return text + ", job " + job;
}

}  // namespace

void write_report(bool job_wide) {
  int rank = 0;
  int size = 1;
  // MPI_COMM_WORLD answers while MPI runs.
  static_cast<void>(PMPI_Comm_rank(MPI_COMM_WORLD, &rank));
  static_cast<void>(PMPI_Comm_size(MPI_COMM_WORLD, &size));

  const std::optional<FilePattern> pattern = report_file_pattern(rank);
  std::string job = local_job_id();
  if (job_wide) {
    char shared[kJobIdBytes] = {};
    job.copy(shared, job.size());
    if (PMPI_Bcast(shared, kJobIdBytes, MPI_CHAR, 0, MPI_COMM_WORLD) == MPI_SUCCESS) job = shared;
  }

  const topo::Layout* layout = world_layout(job_wide);
  ReportInput input;
  input.collectives = snapshot();
  input.sums = rma_snapshot();
  input.maxima = input.sums;
  const ServerRecord mine = local_server(rank, layout);
  const bool own = !job_wide || (pattern && pattern->per_rank);
  if (own) {
    add_server(input.servers, mine);
  } else {
    if (!sum_over_job(input, mine, rank, size)) {
      if (rank == 0) print_line("SHIM_STATS: the counters could not be summed over the job; no report");
      return;
    }
    if (rank != 0) return;
  }

  input.facts = {
      {"Command", command_line()},
      {"Job", job_description(size, layout, job)},
      {"Host", host_name() + " (rank " + std::to_string(rank) + ")"},
      {"MPI", mpi_library()},
      {"Written", utc_now() + ", at MPI_Finalize"},
      {"Counts", own ? "this process (rank " + std::to_string(rank) + ") only"
                     : "summed over " + std::to_string(size) + " processes; Max columns: the largest one process's"}};

  std::string path;
  if (pattern) {
    path = expand_file_pattern(*pattern, rank, job);
    if (own && !pattern->per_rank) path += "." + std::to_string(rank);
  }
  emit(report_text(input), path, job_wide ? "" : "[rank " + std::to_string(rank) + "] ");
}

}  // namespace shim::stats
