// bcast_latency: OSU-style MPI_Bcast latency of native MPI and of each shim
// algorithm, measured in one run and alternating, beside the inter-node
// traffic each one sends as shim counts it. `--help` lists the flags.
//
// The method is alltoall_latency's: load changes over a run on a shared
// machine, so every round runs one batch of each algorithm back to back and
// the median over rounds is reported. `--single` runs one algorithm alone,
// with exactly --fixed-iters calls per batch if given, so that a tool outside
// (bench/bcast_links.py) can attribute interface byte counters to it.
#include <mpi.h>
#include <shim/shim.h>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
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
using bench::parse_count;
using bench::parse_power_of_two_bytes;
using bench::UsageError;

constexpr std::string_view kUsage =
    "usage: bcast_latency [options]\n"
    "  --min BYTES        smallest message, a power of two; default 1\n"
    "  --max BYTES        largest message, a power of two; default 4M (K, M and G suffixes are accepted)\n"
    "  --iters N          calls per batch; default 1000. Fewer for large messages: at most as many as move\n"
    "                     about 0.5 s of data over a 100 Mbit/s link (6.25 MB / message size), at least 1\n"
    "  --fixed-iters N    exactly N calls per batch at every size (instead of --iters)\n"
    "  --warmup N         untimed calls per algorithm and size before the rounds; default 10 (at most one\n"
    "                     batch's calls)\n"
    "  --rounds R         rounds per size; each round runs one batch of every algorithm; default 7\n"
    "  --root R           the broadcasting rank; default 0\n"
    "  --algorithms LIST  comma-separated from native,auto,eco,twolevel; default all of them (native is\n"
    "                     required: it is the baseline of the shim/native ratios)\n"
    "  --single ALG       run only ALG (one of native,auto,eco,twolevel): no baseline, no ratios; for\n"
    "                     counting its traffic from outside, e.g. on network interfaces\n"
    "  --csv              print CSV (one row per size and algorithm) instead of the tables; '#' lines are comments\n"
    "  --help             print this and exit\n";

struct Algorithm {
  std::string_view name;
  shim_bcast_algorithm id;
};

// Table order. shim_get_bcast_counters has no "auto" bucket of its own:
// auto's calls land in whichever algorithm the policy picked.
constexpr std::array<Algorithm, 4> kAlgorithms = {{{"native", SHIM_BCAST_NATIVE},
                                                   {"auto", SHIM_BCAST_AUTO},
                                                   {"eco", SHIM_BCAST_ECO},
                                                   {"twolevel", SHIM_BCAST_TWOLEVEL}}};

// The algorithms shim keeps counters for; auto's calls are found here.
constexpr std::array<Algorithm, 3> kCounted = {
    {{"native", SHIM_BCAST_NATIVE}, {"eco", SHIM_BCAST_ECO}, {"twolevel", SHIM_BCAST_TWOLEVEL}}};

enum Field : int { calls, collective_calls, inter_messages, inter_bytes, kFields };
// kCounted.size() x kFields counters, algorithm-major.
using Counters = std::array<std::uint64_t, kCounted.size() * kFields>;

// Large broadcasts are bound by the slowest link they cross, and the
// emulated cluster's router links run at 100 Mbit/s: a batch that moves at
// most this much over such a link takes about half a second.
constexpr double kBatchLinkBytes = 0.5 * 100e6 / 8;

struct Options {
  std::int64_t min_bytes = 1;
  std::int64_t max_bytes = std::int64_t{4} << 20;
  int iters = 1000;
  bool fixed_iters = false;
  int warmup = 10;
  int rounds = 7;
  int root = 0;
  std::vector<Algorithm> algorithms;
  bool single = false;  // algorithms holds the one algorithm; no native baseline
  bool csv = false;
  bool help = false;
};

const Algorithm& find_algorithm(std::string_view flag, std::string_view name) {
  const auto known =
      std::find_if(kAlgorithms.begin(), kAlgorithms.end(), [&](const Algorithm& a) { return a.name == name; });
  if (known == kAlgorithms.end()) {
    throw UsageError(std::string(flag) + ": unknown algorithm '" + std::string(name) +
                     "' (accepted: native, auto, eco, twolevel)");
  }
  return *known;
}

std::vector<Algorithm> parse_algorithms(std::string_view text) {
  std::array<bool, kAlgorithms.size()> wanted{};
  while (true) {
    const std::size_t comma = text.find(',');
    const Algorithm& known = find_algorithm("--algorithms", text.substr(0, comma));
    wanted[static_cast<std::size_t>(&known - kAlgorithms.data())] = true;
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
  bool algorithms_given = false;
  bool iters_given = false;
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
    const bool known = arg == "--min" || arg == "--max" || arg == "--iters" || arg == "--fixed-iters" ||
                       arg == "--warmup" || arg == "--rounds" || arg == "--root" || arg == "--algorithms" ||
                       arg == "--single";
    if (!known) throw UsageError("unknown option '" + std::string(argv[i]) + "'");
    if (equals == std::string_view::npos) {
      if (i + 1 >= argc) throw UsageError(std::string(arg) + " needs a value");
      value = argv[++i];
    }
    if (arg == "--min") {
      options.min_bytes = parse_power_of_two_bytes(arg, value);
    } else if (arg == "--max") {
      options.max_bytes = parse_power_of_two_bytes(arg, value);
    } else if (arg == "--iters" || arg == "--fixed-iters") {
      // Both set the batch size; the later one silently winning would hide a mistake.
      if (iters_given) throw UsageError("give one of --iters and --fixed-iters, once");
      options.iters = parse_count(arg, value, 1);
      options.fixed_iters = arg == "--fixed-iters";
      iters_given = true;
    } else if (arg == "--warmup") {
      options.warmup = parse_count(arg, value, 0);
    } else if (arg == "--rounds") {
      options.rounds = parse_count(arg, value, 1);
    } else if (arg == "--root") {
      options.root = parse_count(arg, value, 0);
    } else if (arg == "--algorithms") {
      if (options.single) throw UsageError("--algorithms and --single exclude each other");
      options.algorithms = parse_algorithms(value);
      algorithms_given = true;
    } else {
      if (algorithms_given || options.single) throw UsageError("--single takes one algorithm, once, without --algorithms");
      options.algorithms = {find_algorithm(arg, value)};
      options.single = true;
    }
  }
  if (options.min_bytes > options.max_bytes) {
    throw UsageError("--min " + std::to_string(options.min_bytes) + " is larger than --max " +
                     std::to_string(options.max_bytes));
  }
  return options;
}

int iterations_for(const Options& options, std::int64_t bytes) {
  if (options.fixed_iters) return options.iters;
  const auto budget = static_cast<std::int64_t>(kBatchLinkBytes / static_cast<double>(bytes));
  return static_cast<int>(std::clamp<std::int64_t>(budget, 1, options.iters));
}

// Byte i of the message root sends in batch `salt`: 8 bytes per hash, so
// checking 4 MiB on every rank stays cheap. A new salt per batch makes a
// buffer left over from an earlier batch fail the check.
unsigned char expected_byte(std::int64_t i, int root, std::uint32_t salt) {
  std::uint64_t x = static_cast<std::uint64_t>(i >> 3) ^ (static_cast<std::uint64_t>(root) << 40) ^
                    (static_cast<std::uint64_t>(salt) << 48);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return static_cast<unsigned char>(x >> ((i & 7) * 8));
}

Counters read_counters() {
  Counters out{};
  for (std::size_t a = 0; a < kCounted.size(); ++a) {
    shim_counters c{};
    check(shim_get_bcast_counters(kCounted[a].id, &c), "shim_get_bcast_counters");
    const std::array<std::uint64_t, kFields> fields = {c.calls, c.collective_calls, c.inter_node_messages,
                                                       c.inter_node_bytes};
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
  // No counter moved: the call went straight to MPI (shim's fast path when
  // the policy can only pick native, which keeps no counts) or was the PMPI
  // baseline.
  return ran.empty() ? "pass-through" : ran;
}

struct Machine {
  std::string host;
  int cores = 0;
  std::string cpu;
  std::string load;
  std::string mpi;
  int ranks = 0;
  int hosts = 0;
  int max_ranks_per_host = 0;
  int machines = 0;
  int max_ranks_per_machine = 0;
  std::string settings;
};

// Emulated hosts (network namespaces, containers) share one kernel and its
// cores, which MPI_COMM_TYPE_SHARED cannot see; the kernel's boot id tells
// machines apart. The host name stands in where it cannot be read.
std::string machine_id() {
  std::ifstream boot_id("/proc/sys/kernel/random/boot_id");
  std::string id;
  return boot_id >> id ? id : "host " + bench::host_name();
}

// Collective. Ranks per host and per machine, and the settings that shape
// shim's broadcasts.
Machine describe_machine(int rank, int size) {
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
  MPI_Allreduce(&host_leader, &m.hosts, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&host_size, &m.max_ranks_per_host, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);

  constexpr std::size_t kIdBytes = 64;
  std::array<char, kIdBytes> id{};
  machine_id().copy(id.data(), kIdBytes - 1);
  std::vector<char> ids(kIdBytes * static_cast<std::size_t>(size));
  MPI_Gather(id.data(), kIdBytes, MPI_CHAR, ids.data(), kIdBytes, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::map<std::string, int> ranks_of;
    for (int r = 0; r < size; ++r) ++ranks_of[std::string(&ids[static_cast<std::size_t>(r) * kIdBytes])];
    m.machines = static_cast<int>(ranks_of.size());
    for (const auto& [machine, ranks] : ranks_of) m.max_ranks_per_machine = std::max(m.max_ranks_per_machine, ranks);
  }

  m.host = bench::host_name();
  m.cores = bench::usable_cores();
  m.cpu = bench::cpu_model();
  m.load = bench::load_average();
  m.mpi = bench::mpi_library();
  for (const char* name :
       {"SHIM_ENABLE", "SHIM_BCAST", "SHIM_PROFILE", "SHIM_NODE_SIZE", "SHIM_BCAST_K", "SHIM_BCAST_SEGMENT"}) {
    if (const char* value = std::getenv(name)) m.settings += std::string(" ") + name + "=" + value;
  }
  if (m.settings.empty()) m.settings = " none";
  return m;
}

void print_header(const Options& options, const Machine& m) {
  const char* c = options.csv ? "# " : "";
  std::printf("%sbcast_latency (shim %s): MPI_Bcast of MPI_BYTE messages from root %d on MPI_COMM_WORLD, %s\n", c,
              shim_version(), options.root,
              options.single ? ("only " + std::string(options.algorithms.front().name)).c_str()
                             : "native MPI vs shim algorithms, alternating in one run");
  std::printf("%smachine: host %s, nproc %d, CPU %s, load average %s at start\n", c, m.host.c_str(), m.cores,
              m.cpu.c_str(), m.load.c_str());
  std::printf("%sMPI: %s\n", c, m.mpi.c_str());
  std::printf("%sranks %d on %d host%s (MPI_COMM_TYPE_SHARED, at most %d per host) and %d machine%s (kernel boot "
              "id, at most %d per machine); SHIM_* settings:%s\n",
              c, m.ranks, m.hosts, m.hosts == 1 ? "" : "s", m.max_ranks_per_host, m.machines,
              m.machines == 1 ? "" : "s", m.max_ranks_per_machine, m.settings.c_str());
  if (m.max_ranks_per_machine > m.cores) {
    std::printf("%sTIMINGS ARE SCHEDULER-BOUND for small messages: %d ranks share %d cores on one machine (emulated "
                "hosts share its kernel), and MPICH busy-polls, so each collective waits for the OS to run every "
                "rank. Where the links are far slower than that, as on the rate-limited emulated network (100 "
                "Mbit/s router links: messages of 256 KiB and more), a broadcast is link-bound and its time does "
                "compare the algorithms; below that read the traffic, not the times\n",
                c, m.max_ranks_per_machine, m.cores);
  } else {
    std::printf("%stimings: at most %d ranks on %d cores per machine, one core each: timings are real (runs with "
                "more ranks than cores, here more than %d, are scheduler-bound)\n",
                c, m.max_ranks_per_machine, m.cores, m.cores);
  }
  std::printf("%smethod: per size, up to %d warm-up call(s) per algorithm, then %d rounds; each round runs one batch "
              "of every algorithm (rotating order), MPI_Barrier between batches. latency = median over rounds of the "
              "max over ranks of the per-rank mean time per call%s. Every batch's result is checked on every rank "
              "against the root's pattern, computed independently\n",
              c, options.warmup, options.rounds,
              options.single ? ""
                             : "; x/native = median over rounds of the same-round ratio. native calls PMPI_Bcast "
                               "directly, so the ratios hold all of shim's added time");
}

struct Row {
  Algorithm algorithm;
  std::string ran;
  double median_us = 0;
  double min_us = 0;
  double max_us = 0;
  // Median over rounds of this round's time over native's time in the same
  // round: paired, so load that changes between rounds cancels out.
  std::optional<double> ratio_to_native;
  // Empty where shim ran no tree of its own: MPICH's messages are not
  // visible to shim.
  std::optional<double> inter_msgs;
  std::optional<double> inter_bytes;
};

// Rank 0: turn the reduced times and counter sums of one size into rows.
std::vector<Row> summarize(const Options& options, const std::vector<double>& max_seconds,
                           const std::vector<Counters>& sums) {
  const auto rounds = static_cast<std::size_t>(options.rounds);
  const auto native = std::find_if(options.algorithms.begin(), options.algorithms.end(),
                                   [](const Algorithm& a) { return a.id == SHIM_BCAST_NATIVE; });
  const auto baseline = static_cast<std::size_t>(native - options.algorithms.begin());
  std::vector<Row> rows;
  for (std::size_t s = 0; s < options.algorithms.size(); ++s) {
    Row row;
    row.algorithm = options.algorithms[s];
    std::vector<double> us(max_seconds.begin() + static_cast<std::ptrdiff_t>(s * rounds),
                           max_seconds.begin() + static_cast<std::ptrdiff_t>((s + 1) * rounds));
    for (double& t : us) t *= 1e6;
    row.median_us = median(us);
    row.min_us = *std::min_element(us.begin(), us.end());
    row.max_us = *std::max_element(us.begin(), us.end());
    if (!options.single) {
      std::vector<double> ratios(rounds);
      for (std::size_t round = 0; round < rounds; ++round) {
        ratios[round] = max_seconds[s * rounds + round] / max_seconds[baseline * rounds + round];
      }
      row.ratio_to_native = median(ratios);
    }

    const Counters& c = sums[s];
    row.ran = ran_from(c);
    std::uint64_t ops = 0;
    std::uint64_t msgs = 0;
    std::uint64_t bytes = 0;
    for (std::size_t a = 0; a < kCounted.size(); ++a) {
      ops += c[a * kFields + collective_calls];
      msgs += c[a * kFields + inter_messages];
      bytes += c[a * kFields + inter_bytes];
    }
    if (row.ran != "native" && row.ran != "pass-through" && ops > 0) {
      row.inter_msgs = static_cast<double>(msgs) / static_cast<double>(ops);
      row.inter_bytes = static_cast<double>(bytes) / static_cast<double>(ops);
    }
    rows.push_back(row);
  }
  return rows;
}

std::string or_na(const std::optional<double>& value) { return value ? format_number(*value) : "n/a"; }

constexpr const char* kCsvColumns =
    "bytes,algorithm,ran,iterations,rounds,latency_us,min_us,max_us,shim_over_native,inter_msgs_per_call,"
    "inter_bytes_per_call\n";

void print_csv(const Options& options, std::int64_t bytes, int iterations, const std::vector<Row>& rows) {
  for (const Row& r : rows) {
    char ratio[32] = "";
    if (r.ratio_to_native) std::snprintf(ratio, sizeof ratio, "%.4f", *r.ratio_to_native);
    std::printf("%" PRId64 ",%s,%s,%d,%d,%.3f,%.3f,%.3f,%s,%s,%s\n", bytes, std::string(r.algorithm.name).c_str(),
                r.ran.c_str(), iterations, options.rounds, r.median_us, r.min_us, r.max_us, ratio,
                or_na(r.inter_msgs).c_str(), or_na(r.inter_bytes).c_str());
  }
  std::fflush(stdout);
}

struct SizeResult {
  std::int64_t bytes;
  int iterations;
  std::vector<Row> rows;
};

void print_tables(const Options& options, const std::vector<SizeResult>& results, int ranks) {
  const bool show_auto = std::any_of(options.algorithms.begin(), options.algorithms.end(),
                                     [](const Algorithm& a) { return a.id == SHIM_BCAST_AUTO; });
  std::printf("\nLatency, us per call (median over %d rounds of the max over ranks)%s\n", options.rounds,
              options.single ? "" : ", and shim/native ratios (median of per-round ratios)");
  std::printf("%9s %6s", "size", "iters");
  for (const Algorithm& a : options.algorithms) std::printf(" %12s", std::string(a.name).c_str());
  if (!options.single) {
    for (const Algorithm& a : options.algorithms) {
      if (a.id != SHIM_BCAST_NATIVE) std::printf(" %15s", (std::string(a.name) + "/native").c_str());
    }
  }
  if (show_auto) std::printf("  auto ran");
  std::printf("\n");
  for (const SizeResult& r : results) {
    std::printf("%9s %6d", format_bytes(r.bytes).c_str(), r.iterations);
    for (const Row& row : r.rows) std::printf(" %12.2f", row.median_us);
    for (const Row& row : r.rows) {
      if (row.ratio_to_native && row.algorithm.id != SHIM_BCAST_NATIVE) {
        std::printf(" %15.2f", *row.ratio_to_native);
      }
    }
    for (const Row& row : r.rows) {
      if (row.algorithm.id == SHIM_BCAST_AUTO) std::printf("  %s", row.ran.c_str());
    }
    std::printf("\n");
  }

  std::printf("\nInter-node traffic per call (sum over %d ranks / calls): messages (pipelined segments) and bytes as "
              "shim's trees send them\n",
              ranks);
  constexpr int kGroup = 22;
  std::printf("%9s", "");
  for (const Algorithm& a : options.algorithms) std::printf("  %*s", kGroup, std::string(a.name).c_str());
  std::printf("\n%9s", "size");
  for (std::size_t a = 0; a < options.algorithms.size(); ++a) std::printf("  %9s %12s", "msgs", "bytes");
  std::printf("\n");
  bool any_na = false;
  for (const SizeResult& r : results) {
    std::printf("%9s", format_bytes(r.bytes).c_str());
    for (const Row& row : r.rows) {
      any_na = any_na || !row.inter_msgs;
      std::printf("  %9s %12s", or_na(row.inter_msgs).c_str(), or_na(row.inter_bytes).c_str());
    }
    std::printf("\n");
  }
  if (any_na) {
    std::printf("n/a: native MPI_Bcast (the baseline, or where shim ran native): MPICH's own messages are not "
                "visible to shim\n");
  }
  std::fflush(stdout);
}

// The native baseline calls PMPI_Bcast itself, so it includes nothing of
// shim, not even the interposer: shim/native is shim's whole added time.
int bcast(const Algorithm& algorithm, unsigned char* buffer, int count, int root) {
  if (algorithm.id == SHIM_BCAST_NATIVE) return PMPI_Bcast(buffer, count, MPI_BYTE, root, MPI_COMM_WORLD);
  return MPI_Bcast(buffer, count, MPI_BYTE, root, MPI_COMM_WORLD);
}

// Runs `iterations` calls; returns this rank's mean seconds per call.
double timed_batch(const Algorithm& algorithm, unsigned char* buffer, int count, int root, int iterations) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < iterations; ++i) bcast(algorithm, buffer, count, root);
  return (MPI_Wtime() - start) / iterations;
}

// The root holds the message; everyone else starts from zeros, so a rank
// the broadcast missed fails the check.
void prepare(unsigned char* buffer, int rank, int root, std::int64_t bytes, std::uint32_t salt) {
  if (rank != root) {
    std::memset(buffer, 0, static_cast<std::size_t>(bytes));
    return;
  }
  for (std::int64_t i = 0; i < bytes; ++i) buffer[i] = expected_byte(i, root, salt);
}

void verify(const unsigned char* buffer, int rank, int root, std::int64_t bytes, std::uint32_t salt,
            const Algorithm& algorithm, const std::string& ran, int round) {
  for (std::int64_t i = 0; i < bytes; ++i) {
    const unsigned char want = expected_byte(i, root, salt);
    if (buffer[i] == want) continue;
    char detail[160];
    std::snprintf(detail, sizeof detail, "rank %d: byte %" PRId64 " is 0x%02x, expected 0x%02x", rank, i, buffer[i],
                  want);
    fail("WRONG RESULT with algorithm " + std::string(algorithm.name) + " (shim ran " + ran + "), message " +
         format_bytes(bytes) + " from root " + std::to_string(root) + ", round " + std::to_string(round + 1) + ": " +
         detail + "; aborting");
  }
}

void select_algorithm(const Algorithm& algorithm) {
  check(shim_set_bcast_algorithm(MPI_COMM_WORLD, algorithm.id), "shim_set_bcast_algorithm");
}

SizeResult measure(const Options& options, std::int64_t bytes, int rank, unsigned char* buffer, std::uint32_t& salt) {
  const int count = static_cast<int>(bytes);
  const int iterations = iterations_for(options, bytes);
  const int warmup = std::min(options.warmup, iterations);
  const std::size_t algorithms = options.algorithms.size();

  prepare(buffer, rank, options.root, bytes, salt);
  for (const Algorithm& a : options.algorithms) {
    select_algorithm(a);
    for (int i = 0; i < warmup; ++i) bcast(a, buffer, count, options.root);
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
      prepare(buffer, rank, options.root, bytes, salt);
      const Counters before = read_counters();
      seconds[s * static_cast<std::size_t>(options.rounds) + static_cast<std::size_t>(round)] =
          timed_batch(algorithm, buffer, count, options.root, iterations);
      const Counters after = read_counters();
      Counters delta{};
      for (std::size_t f = 0; f < delta.size(); ++f) delta[f] = after[f] - before[f];
      verify(buffer, rank, options.root, bytes, salt, algorithm, ran_from(delta), round);
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
  if (rank == 0) result.rows = summarize(options, max_seconds, sums);
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  bench::set_program_name("bcast_latency");
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
    if (rank == 0) std::fprintf(stderr, "bcast_latency: %s\n%s", error.what(), kUsage.data());
    MPI_Finalize();
    return 2;
  }
  if (options.help) {
    if (rank == 0) std::fputs(kUsage.data(), stdout);
    MPI_Finalize();
    return 0;
  }
  if (options.root >= size) {
    if (rank == 0) std::fprintf(stderr, "bcast_latency: --root %d: there are only %d ranks\n", options.root, size);
    MPI_Finalize();
    return 2;
  }
  const bool uses_shim = std::any_of(options.algorithms.begin(), options.algorithms.end(),
                                     [](const Algorithm& a) { return a.id != SHIM_BCAST_NATIVE; });
  int enabled = 0;
  check(shim_get_enabled(MPI_COMM_WORLD, &enabled), "shim_get_enabled");
  if (uses_shim && !enabled) {
    // Every shim column would silently be native MPI.
    if (rank == 0) std::fprintf(stderr, "bcast_latency: shim is switched off (SHIM_ENABLE=0); nothing to compare\n");
    MPI_Finalize();
    return 2;
  }

  const Machine machine = describe_machine(rank, size);
  if (rank == 0) {
    print_header(options, machine);
    if (options.csv) std::fputs(kCsvColumns, stdout);
    std::fflush(stdout);
  }

  const Buffer buffer = bench::page_aligned(static_cast<std::size_t>(options.max_bytes));
  // shim builds its node hierarchy and each algorithm's tree on first use;
  // this keeps those one-time costs out of every batch even with --warmup 0.
  for (const Algorithm& a : options.algorithms) {
    select_algorithm(a);
    bcast(a, buffer.get(), 1, options.root);
  }

  std::uint32_t salt = 0;
  std::vector<SizeResult> results;
  for (std::int64_t bytes = options.min_bytes; bytes <= options.max_bytes; bytes *= 2) {
    SizeResult result = measure(options, bytes, rank, buffer.get(), salt);
    if (rank == 0 && options.csv) print_csv(options, result.bytes, result.iterations, result.rows);
    results.push_back(std::move(result));
  }
  if (rank == 0 && !options.csv) print_tables(options, results, size);
  MPI_Finalize();
  return 0;
}
