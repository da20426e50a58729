// The simulated benchmark: MPI_Alltoall or MPI_Bcast through shim (linked
// in statically, so every simulated rank has its own copy of shim's state)
// on an SMPI platform. Which algorithm runs is the environment's business:
// SHIM_ALLTOALL / SHIM_BCAST for shim's, SHIM_ENABLE=0 with SMPI's
// --cfg=smpi/alltoall:... or smpi/bcast:... for the built-in ones.
//
// Each size is timed once: simulated time is deterministic, so repeating a
// call would only repeat the number. All ranks start the call at the same
// simulated instant (they sleep until an agreed time, so the skew of the
// barrier before is not part of the figure); time = latest end - that start.
// --iters N runs N calls back to back instead and reports the max over ranks
// of the mean per call, as the OSU-style benchmarks on real machines do
// (bench/alltoall_latency, bench/bcast_latency): for comparing with them.
//
//   --check     private buffers with a pattern, results compared byte by byte;
//               otherwise SMPI shared buffers (no data, no memory per rank).
//   --node-costs OS/OIS/OR  per-message CPU costs of messages within a node
//               (message_cost_model.hpp); others keep the platform's.
//   --count ALG print what shim's in-memory executor counts as inter-node
//               messages for ALG's schedule on this layout (alltoall only),
//               and keep every call alone in a one-second window of
//               simulated time, so that a trace of the run (smpirun -trace,
//               tracing/smpi/internals) shows which messages belong to it.
//
// Output (rank 0): one CSV line per size: op,bytes,seconds,start,
// expected_inter_messages (-1 without --count).
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <simgrid/s4u/Actor.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/alltoall_algorithm.hpp"
#include "message_cost_model.hpp"
#include "tests/support/memory_executor.hpp"
#include "topology/layout.hpp"

namespace {

struct Options {
  std::string op = "alltoall";
  std::vector<std::int64_t> sizes;
  bool check = false;
  std::optional<shim::coll::AlltoallAlgorithm> count;
  int root = 0;
  int iters = 1;
  std::string node_costs;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "sim_collectives: %s\nusage: sim_collectives --op alltoall|bcast --sizes N[,N...] [--check] "
               "[--count sa|rd|leader|linear|node-pairs] [--root R] [--iters N] [--node-costs OS/OIS/OR]\n",
               why);
  std::exit(2);
}

std::vector<std::int64_t> parse_sizes(const char* text) {
  std::vector<std::int64_t> sizes;
  for (const char* p = text; *p != '\0';) {
    char* end = nullptr;
    const long long value = std::strtoll(p, &end, 10);
    if (end == p || value < 1) usage("sizes must be positive integers");
    sizes.push_back(value);
    p = *end == ',' ? end + 1 : end;
    if (*end != ',' && *end != '\0') usage("sizes are separated by commas");
  }
  return sizes;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--op" && has_value) {
      o.op = argv[++i];
    } else if (arg == "--sizes" && has_value) {
      o.sizes = parse_sizes(argv[++i]);
    } else if (arg == "--check") {
      o.check = true;
    } else if (arg == "--count" && has_value) {
      const std::string_view wanted = argv[++i];
      for (const shim::coll::AlltoallAlgorithm a : shim::coll::kAlltoallAlgorithms) {
        if (a != shim::coll::AlltoallAlgorithm::native && name(a) == wanted) o.count = a;
      }
      if (!o.count) usage("--count takes sa, rd, leader, linear or node-pairs");
    } else if (arg == "--root" && has_value) {
      o.root = std::atoi(argv[++i]);
    } else if (arg == "--iters" && has_value) {
      o.iters = std::atoi(argv[++i]);
      if (o.iters < 1) usage("--iters must be at least 1");
    } else if (arg == "--node-costs" && has_value) {
      o.node_costs = argv[++i];
    } else {
      usage("unknown or incomplete argument");
    }
  }
  if (o.op != "alltoall" && o.op != "bcast") usage("--op is alltoall or bcast");
  if (o.sizes.empty()) usage("--sizes is required");
  if (o.count && o.op != "alltoall") usage("--count applies to alltoall");
  if (o.count && o.iters != 1) usage("--count counts one call: no --iters");
  return o;
}

// The layout as shim's topology builds it for MPI_COMM_WORLD: one node per host.
shim::topo::Layout world_layout(int size) {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  std::vector<char> names(static_cast<std::size_t>(size) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> seen;
  std::vector<std::int64_t> keys;
  for (int r = 0; r < size; ++r) {
    const std::string host(&names[static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME]);
    std::size_t k = 0;
    while (k < seen.size() && seen[k] != host) ++k;
    if (k == seen.size()) seen.push_back(host);
    keys.push_back(static_cast<std::int64_t>(k));
  }
  return shim::topo::Layout::from_node_keys(keys);
}

std::int64_t expected_inter_messages(shim::coll::AlltoallAlgorithm algorithm, const shim::topo::Layout& layout) {
  const shim::test::SimulationResult result = shim::test::simulate_alltoall(algorithm, layout);
  if (!result.errors.empty()) return -2;
  std::int64_t sum = 0;
  for (const shim::coll::Traffic& t : result.traffic) sum += t.inter_messages;
  return sum;
}

// Sleeps every rank until the same simulated instant, after the slowest one
// has arrived; returns that instant.
double synchronized_start() {
  MPI_Barrier(MPI_COMM_WORLD);
  double latest = MPI_Wtime();
  MPI_Allreduce(MPI_IN_PLACE, &latest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  // Far longer than the allreduce above takes on any of the platforms.
  const double start = latest + 0.01;
  const double now = MPI_Wtime();
  if (now >= start) {
    std::fprintf(stderr, "sim_collectives: the start-up allreduce took longer than 10 ms\n");
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  simgrid::s4u::this_actor::sleep_for(start - now);
  return start;
}

// Keeps the call that started at `start` alone in its window: nobody sends
// anything else until the window is over.
void close_window(double start) {
  constexpr double kWindow = 1.0;
  const double now = MPI_Wtime();
  if (now >= start + kWindow) {
    std::fprintf(stderr, "sim_collectives: a counted call took longer than its %g s window\n", kWindow);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  simgrid::s4u::this_actor::sleep_for(start + kWindow - now);
}

unsigned char pattern(std::int64_t from, std::int64_t to, std::int64_t byte) {
  return static_cast<unsigned char>((from * 131 + to * 31 + byte * 7 + 1) % 251);
}

class Buffers {
 public:
  Buffers(bool check, std::size_t send_bytes, std::size_t recv_bytes) : check_(check) {
    send_ = allocate(send_bytes);
    recv_ = allocate(recv_bytes);
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  ~Buffers() {
    release(send_);
    release(recv_);
  }
  unsigned char* send() const { return send_; }
  unsigned char* recv() const { return recv_; }

 private:
  unsigned char* allocate(std::size_t bytes) const {
    void* p = check_ ? std::malloc(bytes) : SMPI_SHARED_MALLOC(bytes);
    if (p == nullptr) MPI_Abort(MPI_COMM_WORLD, 4);
    return static_cast<unsigned char*>(p);
  }
  void release(unsigned char* p) const {
    if (check_) {
      std::free(p);
    } else {
      SMPI_SHARED_FREE(p);
    }
  }
  bool check_;
  unsigned char* send_ = nullptr;
  unsigned char* recv_ = nullptr;
};

// Runs one call of `op` at `bytes` per block (alltoall) or message (bcast);
// returns the number of wrong bytes on this rank (0 unless checking).
std::int64_t run_once(const Options& o, std::int64_t bytes, int rank, int size, double& seconds, double& start) {
  const bool alltoall = o.op == "alltoall";
  const auto total = static_cast<std::size_t>(alltoall ? bytes * size : bytes);
  Buffers buffers(o.check, total, alltoall ? total : 1);
  if (o.check) {
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(total); ++i) {
      buffers.send()[i] = alltoall ? pattern(rank, i / bytes, i % bytes) : (rank == o.root ? pattern(o.root, 0, i) : 0);
    }
  }
  start = synchronized_start();
  for (int i = 0; i < o.iters; ++i) {
    if (alltoall) {
      MPI_Alltoall(buffers.send(), static_cast<int>(bytes), MPI_BYTE, buffers.recv(), static_cast<int>(bytes), MPI_BYTE,
                   MPI_COMM_WORLD);
    } else {
      MPI_Bcast(buffers.send(), static_cast<int>(bytes), MPI_BYTE, o.root, MPI_COMM_WORLD);
    }
  }
  double elapsed = (MPI_Wtime() - start) / o.iters;
  if (o.count) close_window(start);
  MPI_Reduce(&elapsed, &seconds, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  std::int64_t wrong = 0;
  if (o.check) {
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(total); ++i) {
      const unsigned char want = alltoall ? pattern(i / bytes, rank, i % bytes) : pattern(o.root, 0, i);
      const unsigned char got = alltoall ? buffers.recv()[i] : buffers.send()[i];
      if (got != want) ++wrong;
    }
  }
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const Options o = parse(argc, argv);
  if (o.root < 0 || o.root >= size) usage("--root must be a rank of the job");
  if (!o.node_costs.empty() && !shim::sim::use_node_costs(o.node_costs)) {
    usage("--node-costs takes three of SMPI's cost curves, OS/OIS/OR");
  }

  const shim::topo::Layout layout = world_layout(size);
  const std::int64_t expected = o.count && rank == 0 ? expected_inter_messages(*o.count, layout) : -1;

  // Warm-up: shim builds its schedules (and SMPI its communicators) on the
  // first call; the figures below are of calls that find them ready.
  double ignored_seconds = 0;
  double ignored_start = 0;
  run_once(Options{o.op, {}, false, std::nullopt, o.root, 1, {}}, 1, rank, size, ignored_seconds, ignored_start);

  std::int64_t failures = 0;
  for (const std::int64_t bytes : o.sizes) {
    double seconds = 0;
    double start = 0;
    const std::int64_t wrong = run_once(o, bytes, rank, size, seconds, start);
    std::int64_t wrong_total = 0;
    MPI_Reduce(&wrong, &wrong_total, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      std::printf("%s,%lld,%.9e,%.9f,%lld\n", o.op.c_str(), static_cast<long long>(bytes), seconds, start,
                  static_cast<long long>(expected));
      // A run stopped at the sweep's time-out keeps the sizes it finished.
      std::fflush(stdout);
      if (wrong_total != 0) {
        std::fprintf(stderr, "sim_collectives: %s of %lld bytes: %lld wrong bytes\n", o.op.c_str(),
                     static_cast<long long>(bytes), static_cast<long long>(wrong_total));
        ++failures;
      }
    }
  }
  MPI_Bcast(&failures, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
