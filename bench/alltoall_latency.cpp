// alltoall_latency: OSU-style MPI_Alltoall latency of native MPI and of each
// shim algorithm, measured in one run and alternating, beside the inter-node
// traffic each one sends as shim counts it. `--help` lists the flags.
//
// Alternating matters on a shared machine: load changes over a run, so
// measuring algorithm A for a minute and then B would compare A's minute with
// B's. Here every round runs one batch of each algorithm back to back, and
// the median over rounds is reported, so one disturbed batch decides nothing.
#include <mpi.h>
#include <shim/shim.h>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "bench_common.hpp"

namespace {

using bench::Buffer;
using bench::check;
using bench::fail;
using bench::format_bytes;
using bench::format_number;
using bench::median;
using bench::page_aligned;
using bench::parse_count;
using bench::parse_int;
using bench::parse_power_of_two_bytes;
using bench::UsageError;

constexpr std::string_view kUsage =
    "usage: alltoall_latency [options]\n"
    "  --min BYTES        smallest block (bytes each process sends to each process), a power of two; default 1\n"
    "  --max BYTES        largest block, a power of two; default 1M (K, M and G suffixes are accepted)\n"
    "  --iters N|small    calls per batch up to 8 KiB blocks, fewer above (at least min(N, 20)); default 1000.\n"
    "                     'small' = 4 calls, 1 warm-up and 3 rounds, for oversubscribed runs that want counts\n"
    "  --warmup N         untimed calls per algorithm and size before the rounds; default 10\n"
    "  --rounds R         rounds per size; each round runs one batch of every algorithm; default 7\n"
    "  --algorithms LIST  comma-separated from native,auto,sa,rd,leader; default all of them (native is required:\n"
    "                     it is the baseline of the shim/native ratios)\n"
    "  --nodes N          nodes for the per-node traffic figures; default from SHIM_NODE_SIZE and the number of\n"
    "                     ranks, else the number of hosts (MPI_COMM_TYPE_SHARED)\n"
    "  --csv              print CSV (one row per size and algorithm) instead of the tables; '#' lines are comments\n"
    "  --help             print this and exit\n";

struct Algorithm {
  std::string_view name;
  shim_alltoall_algorithm id;
};

// Table order. shim_get_alltoall_counters has no "auto" bucket of its own:
// auto's calls land in whichever algorithm the policy picked.
constexpr std::array<Algorithm, 5> kAlgorithms = {{{"native", SHIM_ALLTOALL_NATIVE},
                                                   {"auto", SHIM_ALLTOALL_AUTO},
                                                   {"sa", SHIM_ALLTOALL_SA},
                                                   {"rd", SHIM_ALLTOALL_RD},
                                                   {"leader", SHIM_ALLTOALL_LEADER}}};

// The algorithms shim keeps counters for; auto's calls are found here.
constexpr std::array<Algorithm, 4> kCounted = {{{"native", SHIM_ALLTOALL_NATIVE},
                                                {"sa", SHIM_ALLTOALL_SA},
                                                {"rd", SHIM_ALLTOALL_RD},
                                                {"leader", SHIM_ALLTOALL_LEADER}}};

enum Field : int {
  calls,
  collective_calls,
  payload_bytes,
  inter_messages,
  inter_bytes,
  intra_messages,
  intra_bytes,
  flat_inter_messages,
  flat_inter_bytes,
  kFields
};
// kCounted.size() x kFields counters, algorithm-major.
using Counters = std::array<std::uint64_t, kCounted.size() * kFields>;

constexpr std::int64_t kFullBatchMaxBytes = 8192;

struct Options {
  std::int64_t min_bytes = 1;
  std::int64_t max_bytes = std::int64_t{1} << 20;
  int iters = 1000;
  int warmup = 10;
  int rounds = 7;
  int nodes = 0;  // 0: derive
  std::vector<Algorithm> algorithms;
  bool csv = false;
  bool help = false;
};

std::vector<Algorithm> parse_algorithms(std::string_view text) {
  std::array<bool, kAlgorithms.size()> wanted{};
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    const auto known = std::find_if(kAlgorithms.begin(), kAlgorithms.end(),
                                    [&](const Algorithm& a) { return a.name == item; });
    if (known == kAlgorithms.end()) {
      throw UsageError("--algorithms: unknown algorithm '" + std::string(item) +
                       "' (accepted: native, auto, sa, rd, leader)");
    }
    wanted[static_cast<std::size_t>(known - kAlgorithms.begin())] = true;
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  if (!wanted[0]) throw UsageError("--algorithms: native is required (it is the baseline of the shim/native ratios)");
  std::vector<Algorithm> chosen;
  for (std::size_t a = 0; a < kAlgorithms.size(); ++a) {
    if (wanted[a]) chosen.push_back(kAlgorithms[a]);
  }
  return chosen;
}

Options parse_options(int argc, char** argv) {
  Options options;
  options.algorithms.assign(kAlgorithms.begin(), kAlgorithms.end());
  bool small = false;
  bool warmup_given = false;
  bool rounds_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      options.help = true;
      continue;
    }
    if (arg == "--csv") {
      options.csv = true;
      continue;
    }
    // Both "--flag value" and "--flag=value".
    std::string_view value;
    const std::size_t equals = arg.find('=');
    if (equals != std::string_view::npos) {
      value = arg.substr(equals + 1);
      arg = arg.substr(0, equals);
    }
    const bool known = arg == "--min" || arg == "--max" || arg == "--iters" || arg == "--warmup" ||
                       arg == "--rounds" || arg == "--algorithms" || arg == "--nodes";
    if (!known) throw UsageError("unknown option '" + std::string(argv[i]) + "'");
    if (equals == std::string_view::npos) {
      if (i + 1 >= argc) throw UsageError(std::string(arg) + " needs a value");
      value = argv[++i];
    }
    if (arg == "--min") {
      options.min_bytes = parse_power_of_two_bytes(arg, value);
    } else if (arg == "--max") {
      options.max_bytes = parse_power_of_two_bytes(arg, value);
    } else if (arg == "--iters") {
      small = value == "small";
      if (!small) {
        const auto iters = parse_int(value);
        if (!iters || *iters < 1 || *iters > std::numeric_limits<int>::max()) {
          throw UsageError("--iters '" + std::string(value) + "': expected an integer >= 1 or 'small'");
        }
        options.iters = static_cast<int>(*iters);
      }
    } else if (arg == "--warmup") {
      options.warmup = parse_count(arg, value, 0);
      warmup_given = true;
    } else if (arg == "--rounds") {
      options.rounds = parse_count(arg, value, 1);
      rounds_given = true;
    } else if (arg == "--algorithms") {
      options.algorithms = parse_algorithms(value);
    } else {
      options.nodes = parse_count(arg, value, 1);
    }
  }
  if (small) {
    options.iters = 4;
    if (!warmup_given) options.warmup = 1;
    if (!rounds_given) options.rounds = 3;
  }
  if (options.min_bytes > options.max_bytes) {
    throw UsageError("--min " + std::to_string(options.min_bytes) + " is larger than --max " +
                     std::to_string(options.max_bytes));
  }
  return options;
}

int iterations_for(const Options& options, std::int64_t bytes) {
  if (bytes <= kFullBatchMaxBytes) return options.iters;
  const std::int64_t scaled = options.iters * kFullBatchMaxBytes / bytes;
  return static_cast<int>(std::max<std::int64_t>(std::min(options.iters, 20), scaled));
}

// The byte rank `from` sends to rank `to` at offset i of its block in batch
// `salt`. A new salt per batch makes a buffer left over from an earlier
// batch fail the check; mixing from and to exposes misplaced blocks.
unsigned char expected_byte(int from, int to, std::int64_t i, std::uint32_t salt) {
  std::uint64_t x = (static_cast<std::uint64_t>(from) << 40) ^ (static_cast<std::uint64_t>(to) << 20) ^
                    static_cast<std::uint64_t>(i) ^ (static_cast<std::uint64_t>(salt) << 48);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return static_cast<unsigned char>(x);
}

Counters read_counters() {
  Counters out{};
  for (std::size_t a = 0; a < kCounted.size(); ++a) {
    shim_counters c{};
    check(shim_get_alltoall_counters(kCounted[a].id, &c), "shim_get_alltoall_counters");
    const std::array<std::uint64_t, kFields> fields = {c.calls,
                                                       c.collective_calls,
                                                       c.payload_bytes,
                                                       c.inter_node_messages,
                                                       c.inter_node_bytes,
                                                       c.intra_node_messages,
                                                       c.intra_node_bytes,
                                                       c.flat_inter_node_messages,
                                                       c.flat_inter_node_bytes};
    std::copy(fields.begin(), fields.end(), out.begin() + static_cast<std::ptrdiff_t>(a * kFields));
  }
  return out;
}

// What the counters say ran: one algorithm's name, or "a+b" if the calls
// were split (the policy table never does that for one size).
std::string ran_from(const Counters& c) {
  std::string ran;
  for (std::size_t a = 0; a < kCounted.size(); ++a) {
    if (c[a * kFields + calls] == 0) continue;
    if (!ran.empty()) ran += "+";
    ran += kCounted[a].name;
  }
  // No counter moved: the call went straight to MPI (shim's single-node fast
  // path, which keeps no counts) or was the PMPI baseline.
  return ran.empty() ? "pass-through" : ran;
}

struct Machine {
  std::string host;
  int cores = 0;
  std::string cpu;
  std::string load;
  std::string mpi;
  int ranks = 0;
  int max_ranks_per_host = 0;
  std::string node_size_setting;
  int nodes = 0;
  std::string nodes_source;
  std::string other_settings;
};

// Collective. The node count for the per-node figures: --nodes, else
// SHIM_NODE_SIZE as shim reads it (rank 0's value), else the hosts.
Machine describe_machine(const Options& options, int rank, int size) {
  Machine m;
  m.ranks = size;
  MPI_Comm host_comm = MPI_COMM_NULL;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host_comm),
        "MPI_Comm_split_type");
  int host_rank = 0;
  int host_size = 0;
  MPI_Comm_rank(host_comm, &host_rank);
  MPI_Comm_size(host_comm, &host_size);
  MPI_Comm_free(&host_comm);
  int host_leader = host_rank == 0 ? 1 : 0;
  int hosts = 0;
  MPI_Allreduce(&host_leader, &hosts, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&host_size, &m.max_ranks_per_host, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);

  const char* node_size_env = std::getenv("SHIM_NODE_SIZE");
  m.node_size_setting = node_size_env == nullptr ? "unset" : node_size_env;
  int node_size = 0;
  if (rank == 0 && node_size_env != nullptr) {
    const auto parsed = parse_int(node_size_env);
    if (parsed && *parsed >= 1 && *parsed <= std::numeric_limits<int>::max()) node_size = static_cast<int>(*parsed);
  }
  MPI_Bcast(&node_size, 1, MPI_INT, 0, MPI_COMM_WORLD);

  if (options.nodes > 0) {
    m.nodes = options.nodes;
    m.nodes_source = "--nodes";
  } else if (node_size > 0) {
    m.nodes = (size + node_size - 1) / node_size;
    m.nodes_source = std::to_string(size) + " ranks in blocks of SHIM_NODE_SIZE=" + std::to_string(node_size);
  } else {
    m.nodes = hosts;
    m.nodes_source = node_size_env == nullptr ? "hosts found by MPI_COMM_TYPE_SHARED"
                                              : "hosts found by MPI_COMM_TYPE_SHARED; SHIM_NODE_SIZE is not valid";
  }

  m.host = bench::host_name();
  m.cores = bench::usable_cores();
  m.cpu = bench::cpu_model();
  m.load = bench::load_average();
  m.mpi = bench::mpi_library();
  for (const char* name : {"SHIM_ENABLE", "SHIM_ALLTOALL", "SHIM_NIC", "SHIM_ALLTOALL_SA_MAX",
                           "SHIM_ALLTOALL_LEADER_MAX"}) {
    if (const char* value = std::getenv(name)) m.other_settings += std::string(" ") + name + "=" + value;
  }
  if (m.other_settings.empty()) m.other_settings = " none";
  return m;
}

void print_header(const Options& options, const Machine& m, bool csv) {
  const char* c = csv ? "# " : "";
  std::printf("%salltoall_latency (shim %s): MPI_Alltoall of MPI_BYTE blocks on MPI_COMM_WORLD, native MPI vs shim "
              "algorithms, alternating in one run\n",
              c, shim_version());
  std::printf("%smachine: host %s, nproc %d, CPU %s, load average %s at start\n", c, m.host.c_str(), m.cores,
              m.cpu.c_str(), m.load.c_str());
  std::printf("%sMPI: %s\n", c, m.mpi.c_str());
  std::printf("%sranks %d, SHIM_NODE_SIZE=%s, nodes %d (%s); other SHIM_* settings:%s\n", c, m.ranks,
              m.node_size_setting.c_str(), m.nodes, m.nodes_source.c_str(), m.other_settings.c_str());
  if (m.max_ranks_per_host > m.cores) {
    std::printf("%sTIMINGS ARE SCHEDULER-BOUND: %d ranks share %d cores on a host, and MPICH busy-polls, so each "
                "collective waits for the OS to run every rank; the times say nothing about the algorithms. The "
                "message and byte counts are the real result (only runs with at most %d ranks per host give real "
                "timings)\n",
                c, m.max_ranks_per_host, m.cores, m.cores);
  } else {
    std::printf("%stimings: %d ranks on %d cores, one core each: timings are real (runs with more ranks than cores, "
                "here more than %d, are scheduler-bound)\n",
                c, m.max_ranks_per_host, m.cores, m.cores);
  }
  std::printf("%smethod: per size, %d warm-up call(s) per algorithm, then %d rounds; each round runs one batch of every "
              "algorithm (rotating order), MPI_Barrier between batches. latency = median over rounds of the max over "
              "ranks of the per-rank mean time per call; x/native = median over rounds of the same-round ratio. native "
              "calls PMPI_Alltoall directly, so the ratios hold all of shim's added time. Every batch's result is "
              "checked element-wise\n",
              c, options.warmup, options.rounds);
}

struct Row {
  Algorithm algorithm;
  std::string ran;
  double median_us = 0;
  double min_us = 0;
  double max_us = 0;
  // Median over rounds of this round's time over native's time in the same
  // round: paired, so load that changes between rounds cancels out.
  double ratio_to_native = 1;
  bool counted = false;   // false: shim ran native and cannot see MPICH's messages
  bool observed = false;  // shim's counters saw these calls at all
  double inter_msgs = 0, inter_bytes = 0, intra_msgs = 0, intra_bytes = 0;
  double flat_msgs = 0, flat_bytes = 0;
};

// Rank 0: turn the reduced times and counter sums of one size into rows.
std::vector<Row> summarize(const Options& options, const std::vector<double>& max_seconds,
                           const std::vector<Counters>& sums, int nodes) {
  const auto rounds = static_cast<std::size_t>(options.rounds);
  std::size_t native = 0;
  while (options.algorithms[native].id != SHIM_ALLTOALL_NATIVE) ++native;
  std::vector<Row> rows;
  for (std::size_t s = 0; s < options.algorithms.size(); ++s) {
    Row row;
    row.algorithm = options.algorithms[s];
    std::vector<double> us(max_seconds.begin() + static_cast<std::ptrdiff_t>(s * options.rounds),
                           max_seconds.begin() + static_cast<std::ptrdiff_t>((s + 1) * options.rounds));
    for (double& t : us) t *= 1e6;
    row.median_us = median(us);
    row.min_us = *std::min_element(us.begin(), us.end());
    row.max_us = *std::max_element(us.begin(), us.end());
    std::vector<double> ratios(rounds);
    for (std::size_t round = 0; round < rounds; ++round) {
      ratios[round] = max_seconds[s * rounds + round] / max_seconds[native * rounds + round];
    }
    row.ratio_to_native = median(ratios);

    const Counters& c = sums[s];
    row.ran = ran_from(c);
    Counters total{};
    std::uint64_t ops = 0;
    for (std::size_t a = 0; a < kCounted.size(); ++a) {
      ops += c[a * kFields + collective_calls];
      for (int f = 0; f < kFields; ++f) total[f] += c[a * kFields + f];
    }
    row.counted = row.ran != "native" && row.ran != "pass-through";
    const double per = ops == 0 ? 0.0 : 1.0 / (static_cast<double>(ops) * nodes);
    row.inter_msgs = static_cast<double>(total[inter_messages]) * per;
    row.inter_bytes = static_cast<double>(total[inter_bytes]) * per;
    row.intra_msgs = static_cast<double>(total[intra_messages]) * per;
    row.intra_bytes = static_cast<double>(total[intra_bytes]) * per;
    row.flat_msgs = static_cast<double>(total[flat_inter_messages]) * per;
    row.flat_bytes = static_cast<double>(total[flat_inter_bytes]) * per;
    row.observed = ops > 0;
    rows.push_back(row);
  }
  // A flat exchange's figures are the same whoever ran the call; rows shim
  // did not see (the PMPI baseline, fast-path calls) borrow them.
  const auto seen = std::find_if(rows.begin(), rows.end(), [](const Row& r) { return r.observed; });
  if (seen != rows.end()) {
    for (Row& row : rows) {
      if (row.observed) continue;
      row.flat_msgs = seen->flat_msgs;
      row.flat_bytes = seen->flat_bytes;
    }
  }
  return rows;
}

constexpr const char* kCsvColumns =
    "bytes,algorithm,ran,iterations,rounds,latency_us,min_us,max_us,shim_over_native,inter_msgs_per_node,"
    "inter_bytes_per_node,intra_msgs_per_node,intra_bytes_per_node,flat_inter_msgs_per_node,"
    "flat_inter_bytes_per_node,traffic\n";

void print_csv(const Options& options, std::int64_t bytes, int iterations, const std::vector<Row>& rows) {
  for (const Row& r : rows) {
    const double inter_msgs = r.counted ? r.inter_msgs : r.flat_msgs;
    const double inter_bytes = r.counted ? r.inter_bytes : r.flat_bytes;
    const std::string intra_msgs = r.counted ? format_number(r.intra_msgs) : "";
    const std::string intra_bytes = r.counted ? format_number(r.intra_bytes) : "";
    std::printf("%" PRId64 ",%s,%s,%d,%d,%.3f,%.3f,%.3f,%.4f,%s,%s,%s,%s,%s,%s,%s\n", bytes,
                std::string(r.algorithm.name).c_str(), r.ran.c_str(), iterations, options.rounds, r.median_us,
                r.min_us, r.max_us, r.ratio_to_native, format_number(inter_msgs).c_str(),
                format_number(inter_bytes).c_str(), intra_msgs.c_str(), intra_bytes.c_str(),
                format_number(r.flat_msgs).c_str(), format_number(r.flat_bytes).c_str(),
                r.counted ? "counted" : "flat (native: not visible to shim)");
  }
  std::fflush(stdout);
}

struct SizeResult {
  std::int64_t bytes;
  int iterations;
  std::vector<Row> rows;
};

bool has_auto(const Options& options) {
  return std::any_of(options.algorithms.begin(), options.algorithms.end(),
                     [](const Algorithm& a) { return a.id == SHIM_ALLTOALL_AUTO; });
}

void print_tables(const Options& options, const std::vector<SizeResult>& results, int ranks, int nodes) {
  const bool show_auto = has_auto(options);
  std::printf("\nLatency, us per call (median over %d rounds of the max over ranks), and shim/native ratios "
              "(median of per-round ratios)\n",
              options.rounds);
  std::printf("%9s %6s", "size", "iters");
  for (const Algorithm& a : options.algorithms) std::printf(" %10s", std::string(a.name).c_str());
  for (const Algorithm& a : options.algorithms) {
    if (a.id != SHIM_ALLTOALL_NATIVE) std::printf(" %13s", (std::string(a.name) + "/native").c_str());
  }
  if (show_auto) std::printf("  auto ran");
  std::printf("\n");
  for (const SizeResult& r : results) {
    std::printf("%9s %6d", format_bytes(r.bytes).c_str(), r.iterations);
    for (const Row& row : r.rows) std::printf(" %10.2f", row.median_us);
    for (const Row& row : r.rows) {
      if (row.algorithm.id != SHIM_ALLTOALL_NATIVE) std::printf(" %13.2f", row.ratio_to_native);
    }
    for (const Row& row : r.rows) {
      if (row.algorithm.id == SHIM_ALLTOALL_AUTO) std::printf("  %s", row.ran.c_str());
    }
    std::printf("\n");
  }

  std::printf("\nInter-node traffic per call per node (sum over %d ranks / calls / %d node%s): messages and bytes as "
              "shim's schedules send them\n",
              ranks, nodes, nodes == 1 ? "" : "s");
  constexpr int kGroup = 22;
  std::printf("%9s  %*s", "", kGroup, "flat exchange");
  for (const Algorithm& a : options.algorithms) std::printf("  %*s", kGroup, std::string(a.name).c_str());
  std::printf("\n%9s", "size");
  for (std::size_t g = 0; g <= options.algorithms.size(); ++g) std::printf("  %9s %12s", "msgs", "bytes");
  std::printf("\n");
  bool any_flat = false;
  for (const SizeResult& r : results) {
    std::printf("%9s  %9s %12s", format_bytes(r.bytes).c_str(), format_number(r.rows.front().flat_msgs).c_str(),
                format_number(r.rows.front().flat_bytes).c_str());
    for (const Row& row : r.rows) {
      // '*': shim ran native here, so these are the flat exchange's figures.
      const std::string mark = row.counted ? "" : "*";
      any_flat = any_flat || !row.counted;
      std::printf("  %9s %12s", (format_number(row.counted ? row.inter_msgs : row.flat_msgs) + mark).c_str(),
                  (format_number(row.counted ? row.inter_bytes : row.flat_bytes) + mark).c_str());
    }
    std::printf("\n");
  }
  if (any_flat) {
    std::printf("* native MPI_Alltoall (also where auto ran native): MPICH's own messages are not visible to shim; "
                "shown are a flat exchange's figures\n");
  }
  std::fflush(stdout);
}

// The native baseline calls PMPI_Alltoall itself, so it includes nothing of
// shim, not even the interposer: shim/native is shim's whole added time.
int alltoall(const Algorithm& algorithm, const unsigned char* sendbuf, unsigned char* recvbuf, int count) {
  if (algorithm.id == SHIM_ALLTOALL_NATIVE) {
    return PMPI_Alltoall(sendbuf, count, MPI_BYTE, recvbuf, count, MPI_BYTE, MPI_COMM_WORLD);
  }
  return MPI_Alltoall(sendbuf, count, MPI_BYTE, recvbuf, count, MPI_BYTE, MPI_COMM_WORLD);
}

// Runs `iterations` calls; returns this rank's mean seconds per call.
double timed_batch(const Algorithm& algorithm, const unsigned char* sendbuf, unsigned char* recvbuf, int count,
                   int iterations) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < iterations; ++i) alltoall(algorithm, sendbuf, recvbuf, count);
  return (MPI_Wtime() - start) / iterations;
}

void fill(unsigned char* sendbuf, int rank, int size, std::int64_t bytes, std::uint32_t salt) {
  for (int to = 0; to < size; ++to) {
    for (std::int64_t i = 0; i < bytes; ++i) sendbuf[to * bytes + i] = expected_byte(rank, to, i, salt);
  }
}

void verify(const unsigned char* recvbuf, int rank, int size, std::int64_t bytes, std::uint32_t salt,
            const Algorithm& algorithm, const std::string& ran, int round) {
  for (int from = 0; from < size; ++from) {
    for (std::int64_t i = 0; i < bytes; ++i) {
      const unsigned char want = expected_byte(from, rank, i, salt);
      const unsigned char got = recvbuf[from * bytes + i];
      if (got == want) continue;
      char detail[256];
      std::snprintf(detail, sizeof detail, "rank %d: byte %" PRId64 " of the block from rank %d is 0x%02x, expected 0x%02x",
                    rank, i, from, got, want);
      fail("WRONG RESULT with algorithm " + std::string(algorithm.name) + " (shim ran " + ran + "), block " +
           format_bytes(bytes) + ", round " + std::to_string(round + 1) + ": " + detail + "; aborting");
    }
  }
}

void select_algorithm(const Algorithm& algorithm) {
  check(shim_set_alltoall_algorithm(MPI_COMM_WORLD, algorithm.id), "shim_set_alltoall_algorithm");
}

SizeResult measure(const Options& options, std::int64_t bytes, int rank, int size, int nodes, unsigned char* sendbuf,
                   unsigned char* recvbuf, std::uint32_t& salt) {
  const int count = static_cast<int>(bytes);
  const int iterations = iterations_for(options, bytes);
  const int warmup = std::min(options.warmup, iterations);
  const std::size_t algorithms = options.algorithms.size();

  fill(sendbuf, rank, size, bytes, salt);
  for (const Algorithm& a : options.algorithms) {
    select_algorithm(a);
    for (int i = 0; i < warmup; ++i) alltoall(a, sendbuf, recvbuf, count);
  }

  std::vector<double> seconds(algorithms * static_cast<std::size_t>(options.rounds));
  std::vector<Counters> deltas(algorithms);
  for (int round = 0; round < options.rounds; ++round) {
    for (std::size_t k = 0; k < algorithms; ++k) {
      // Rotating the order keeps any algorithm from always running first
      // after the warm-up or always after the same neighbour.
      const std::size_t s = (k + static_cast<std::size_t>(round)) % algorithms;
      const Algorithm& algorithm = options.algorithms[s];
      select_algorithm(algorithm);
      ++salt;
      fill(sendbuf, rank, size, bytes, salt);
      std::memset(recvbuf, 0, static_cast<std::size_t>(bytes) * static_cast<std::size_t>(size));
      const Counters before = read_counters();
      seconds[s * static_cast<std::size_t>(options.rounds) + static_cast<std::size_t>(round)] =
          timed_batch(algorithm, sendbuf, recvbuf, count, iterations);
      const Counters after = read_counters();
      Counters delta{};
      for (std::size_t f = 0; f < delta.size(); ++f) delta[f] = after[f] - before[f];
      verify(recvbuf, rank, size, bytes, salt, algorithm, ran_from(delta), round);
      for (std::size_t f = 0; f < delta.size(); ++f) deltas[s][f] += delta[f];
    }
  }

  std::vector<double> max_seconds(seconds.size());
  MPI_Reduce(seconds.data(), max_seconds.data(), static_cast<int>(seconds.size()), MPI_DOUBLE, MPI_MAX, 0,
             MPI_COMM_WORLD);
  std::vector<Counters> sums(algorithms);
  for (std::size_t s = 0; s < algorithms; ++s) {
    MPI_Reduce(deltas[s].data(), sums[s].data(), static_cast<int>(deltas[s].size()), MPI_UINT64_T, MPI_SUM, 0,
               MPI_COMM_WORLD);
  }
  SizeResult result{bytes, iterations, {}};
  if (rank == 0) result.rows = summarize(options, max_seconds, sums, nodes);
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  bench::set_program_name("alltoall_latency");
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  // Every rank parses the same argv, so all of them stop together.
  Options options;
  try {
    options = parse_options(argc, argv);
  } catch (const UsageError& error) {
    if (rank == 0) std::fprintf(stderr, "alltoall_latency: %s\n%s", error.what(), kUsage.data());
    MPI_Finalize();
    return 2;
  }
  if (options.help) {
    if (rank == 0) std::fputs(kUsage.data(), stdout);
    MPI_Finalize();
    return 0;
  }
  if (options.nodes > size) {
    if (rank == 0) std::fprintf(stderr, "alltoall_latency: --nodes %d: more nodes than the %d ranks\n", options.nodes, size);
    MPI_Finalize();
    return 2;
  }
  if (options.max_bytes * size > std::numeric_limits<int>::max()) {
    if (rank == 0) {
      std::fprintf(stderr, "alltoall_latency: --max %s: with %d ranks the buffers (ranks x block) would exceed 2 GiB each\n",
                   format_bytes(options.max_bytes).c_str(), size);
    }
    MPI_Finalize();
    return 2;
  }
  int enabled = 0;
  check(shim_get_enabled(MPI_COMM_WORLD, &enabled), "shim_get_enabled");
  if (!enabled) {
    // Every column would silently be native MPI.
    if (rank == 0) std::fprintf(stderr, "alltoall_latency: shim is switched off (SHIM_ENABLE=0); nothing to compare\n");
    MPI_Finalize();
    return 2;
  }

  const Machine machine = describe_machine(options, rank, size);
  if (rank == 0) {
    print_header(options, machine, options.csv);
    if (options.csv) std::fputs(kCsvColumns, stdout);
    std::fflush(stdout);
  }

  const auto buffer_bytes = static_cast<std::size_t>(options.max_bytes) * static_cast<std::size_t>(size);
  const Buffer sendbuf = page_aligned(buffer_bytes);
  const Buffer recvbuf = page_aligned(buffer_bytes);
  // shim builds its node hierarchy for a communicator on the first call;
  // this keeps that one-time cost out of every batch even with --warmup 0.
  MPI_Alltoall(sendbuf.get(), 1, MPI_BYTE, recvbuf.get(), 1, MPI_BYTE, MPI_COMM_WORLD);

  std::uint32_t salt = 0;
  std::vector<SizeResult> results;
  for (std::int64_t bytes = options.min_bytes; bytes <= options.max_bytes; bytes *= 2) {
    SizeResult result = measure(options, bytes, rank, size, machine.nodes, sendbuf.get(), recvbuf.get(), salt);
    if (rank == 0 && options.csv) print_csv(options, result.bytes, result.iterations, result.rows);
    results.push_back(std::move(result));
  }
  if (rank == 0 && !options.csv) print_tables(options, results, size, machine.nodes);
  MPI_Finalize();
  return 0;
}
