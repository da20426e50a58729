// shim-probe: measures the network between the nodes of a job once (Lowekamp and
// Beguelin, "ECO: Efficient Collective Operations for Communication on
// Heterogeneous Networks", Sections 3-4) and writes the profile shim loads with SHIM_PROFILE.
//
//   mpiexec -n <ranks> shim-probe [--output FILE] [--sizes LIST] [--reps N]
//                                 [--partition-size BYTES] [--stream BYTES]
//
// Nodes are told apart by processor name. Rank 0 coordinates: each
// measurement runs on the ranks it needs while every other rank sleeps on a
// test-and-nanosleep loop instead of MPICH's busy poll, because emulated
// hosts share cores and a spinning bystander would distort the timing.
//   1. one-way time between every pair of nodes for each size (min of
//      ping-pong round trips / 2: the minimum reflects the link, not the
//      ambient traffic, as ECO argues), one node leader pair at a time;
//   1b. the send cost of a small message to another node: a stream of 64
//      from one leader to another, per node pair (what the alltoall policy
//      weighs message counts with);
//   2. bidirectional throughput between every pair of nodes with 1..ppn
//      concurrent sender pairs: growing throughput means an onload NIC,
//      flat throughput an offload one (Kumar, Mamidala, Panda,
//      "Scaling Alltoall Collective on Multi-core Systems", Figures 2-4);
//   3. the fan-out of broadcast trees: whether one host feeding two peers
//      at once gets more through than feeding one (else k = 1, a chain);
//   4. ECO's partition of the largest size's costs into subnets.
#include <mpi.h>
#include <shim/version.h>
#include <time.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/message_tags.hpp"
#include "shim/config.hpp"
#include "topology/network_profile.hpp"
#include "topology/subnet_partition.hpp"

namespace {

constexpr int kCoordinator = 0;
constexpr int kMaxPeers = 8;
// Above this throughput gain from more concurrent senders, a NIC is onload.
constexpr double kOnloadGain = 1.3;
// Above this gain from feeding two peers instead of one, trees fan out.
constexpr double kFanoutGain = 1.2;
// The stream that measures a small message's send cost.
constexpr std::int64_t kSendCostBytes = 8;
constexpr int kSendCostMessages = 64;

struct Options {
  std::string output = "shim-profile.json";
  std::vector<std::int64_t> sizes = {8, 64 * 1024, 512 * 1024};
  int reps = 5;
  std::int64_t partition_size = 0;  // 0: the largest size
  std::int64_t stream_bytes = 1024 * 1024;
};

enum class Kind : int { done, ping, pong, exchange, send, receive };

// What one rank does in one measurement. Sent as bytes.
struct Task {
  Kind kind = Kind::done;
  int peer_count = 0;
  int peers[kMaxPeers] = {};
  std::int64_t bytes = 0;
  int messages = 1;  // per peer, for the streams
  int reps = 1;      // round trips, for ping
};

// --- waiting without spinning ------------------------------------------------

void sleepy_wait(MPI_Request& request) {
  const timespec pause{0, 200 * 1000};
  int done = 0;
  for (;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    nanosleep(&pause, nullptr);
  }
}

void sleepy_recv(void* data, int bytes, int from, int tag) {
  MPI_Request request;
  MPI_Irecv(data, bytes, MPI_BYTE, from, tag, MPI_COMM_WORLD, &request);
  sleepy_wait(request);
}

// --- what a participant does ---------------------------------------------------

double execute(const Task& task, std::vector<char>& buffer) {
  const auto bytes = static_cast<int>(task.bytes);
  if (static_cast<std::size_t>(task.bytes) * 2 > buffer.size()) buffer.resize(static_cast<std::size_t>(task.bytes) * 2);
  char* out = buffer.data();
  char* in = buffer.data() + task.bytes;
  switch (task.kind) {
    case Kind::ping: {
      double best = 1e30;
      for (int r = 0; r <= task.reps; ++r) {  // round 0 warms the connection up
        const double start = MPI_Wtime();
        MPI_Send(out, bytes, MPI_BYTE, task.peers[0], shim::tags::kProbeData, MPI_COMM_WORLD);
        MPI_Recv(in, bytes, MPI_BYTE, task.peers[0], shim::tags::kProbeData, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (r > 0) best = std::min(best, (MPI_Wtime() - start) / 2);
      }
      return best;
    }
    case Kind::pong:
      for (int r = 0; r <= task.reps; ++r) {
        MPI_Recv(in, bytes, MPI_BYTE, task.peers[0], shim::tags::kProbeData, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(out, bytes, MPI_BYTE, task.peers[0], shim::tags::kProbeData, MPI_COMM_WORLD);
      }
      return 0;
    case Kind::exchange:
    case Kind::send:
    case Kind::receive: {
      const double start = MPI_Wtime();
      std::vector<MPI_Request> requests;
      for (int p = 0; p < task.peer_count; ++p) {
        for (int m = 0; m < task.messages; ++m) {
          requests.emplace_back();
          if (task.kind != Kind::send) {
            MPI_Irecv(in, bytes, MPI_BYTE, task.peers[p], shim::tags::kProbeData, MPI_COMM_WORLD, &requests.back());
            requests.emplace_back();
          }
          if (task.kind != Kind::receive) {
            MPI_Isend(out, bytes, MPI_BYTE, task.peers[p], shim::tags::kProbeData, MPI_COMM_WORLD, &requests.back());
          } else {
            requests.pop_back();
          }
        }
      }
      MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
      return MPI_Wtime() - start;
    }
    case Kind::done:
      break;
  }
  return 0;
}

void serve(std::vector<char>& buffer) {
  for (;;) {
    Task task;
    sleepy_recv(&task, sizeof task, kCoordinator, shim::tags::kProbeTask);
    if (task.kind == Kind::done) return;
    char token = 0;
    MPI_Send(&token, 1, MPI_BYTE, kCoordinator, shim::tags::kProbeReady, MPI_COMM_WORLD);
    sleepy_recv(&token, 1, kCoordinator, shim::tags::kProbeGo);
    double seconds = execute(task, buffer);
    MPI_Send(&seconds, 1, MPI_DOUBLE, kCoordinator, shim::tags::kProbeReport, MPI_COMM_WORLD);
  }
}

// --- the coordinator -------------------------------------------------------------

// Runs one measurement: every (rank, task) pair starts on a common "go";
// returns each participant's reported seconds in the order given.
std::vector<double> measure(const std::vector<std::pair<int, Task>>& assignments, std::vector<char>& buffer) {
  const Task* own = nullptr;
  for (const auto& [rank, task] : assignments) {
    if (rank == kCoordinator) {
      own = &task;
    } else {
      MPI_Send(&task, sizeof task, MPI_BYTE, rank, shim::tags::kProbeTask, MPI_COMM_WORLD);
    }
  }
  char token = 0;
  for (const auto& [rank, task] : assignments) {
    if (rank != kCoordinator) sleepy_recv(&token, 1, rank, shim::tags::kProbeReady);
  }
  for (const auto& [rank, task] : assignments) {
    if (rank != kCoordinator) MPI_Send(&token, 1, MPI_BYTE, rank, shim::tags::kProbeGo, MPI_COMM_WORLD);
  }
  const double own_seconds = own ? execute(*own, buffer) : 0;
  std::vector<double> reports;
  for (const auto& [rank, task] : assignments) {
    double seconds = own_seconds;
    if (rank != kCoordinator) sleepy_recv(&seconds, sizeof seconds, rank, shim::tags::kProbeReport);
    reports.push_back(seconds);
  }
  return reports;
}

Task make(Kind kind, std::vector<int> peers, std::int64_t bytes, int messages = 1, int reps = 1) {
  Task t;
  t.kind = kind;
  t.peer_count = static_cast<int>(peers.size());
  std::copy(peers.begin(), peers.end(), t.peers);
  t.bytes = bytes;
  t.messages = messages;
  t.reps = reps;
  return t;
}

struct Nodes {
  std::vector<std::string> names;
  std::vector<std::vector<int>> ranks;  // per node, ascending
};

Nodes find_nodes(int size) {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  std::vector<char> all(static_cast<std::size_t>(size) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD);
  Nodes nodes;
  std::map<std::string, int> index;
  for (int r = 0; r < size; ++r) {
    const std::string host(&all[static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME]);
    const auto [it, inserted] = index.try_emplace(host, static_cast<int>(nodes.names.size()));
    if (inserted) {
      nodes.names.push_back(host);
      nodes.ranks.emplace_back();
    }
    nodes.ranks[it->second].push_back(r);
  }
  return nodes;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::string format_size(std::int64_t bytes) {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

shim::topo::NetworkProfile probe(const Options& options, const Nodes& nodes, std::vector<char>& buffer) {
  const int n = static_cast<int>(nodes.names.size());
  shim::topo::NetworkProfile profile;
  profile.hosts = nodes.names;
  profile.sizes = options.sizes;
  profile.created_by = std::string("shim-probe ") + SHIM_VERSION_STRING;
  profile.partition_size = options.partition_size ? options.partition_size : options.sizes.back();

  // 1. One-way times, one pair of node leaders at a time.
  for (std::int64_t bytes : options.sizes) {
    shim::topo::CostMatrix cost(n, std::vector<double>(n, 0.0));
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b) {
        const int ra = nodes.ranks[a][0];
        const int rb = nodes.ranks[b][0];
        const auto t = measure({{ra, make(Kind::ping, {rb}, bytes, 1, options.reps)},
                                {rb, make(Kind::pong, {ra}, bytes, 1, options.reps)}},
                               buffer);
        cost[a][b] = cost[b][a] = t[0];
      }
    }
    profile.cost.push_back(std::move(cost));
  }

  // 1b. What a core spends per small message it sends to another node: a
  // stream of small messages from one leader to another, the fastest of the
  // repeats per node pair, the median over pairs. The alltoall policy weighs
  // its algorithms' message counts with it.
  std::vector<double> send_costs;
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      const int ra = nodes.ranks[a][0];
      const int rb = nodes.ranks[b][0];
      double best = 1e30;
      for (int r = 0; r < options.reps; ++r) {
        const auto t = measure({{ra, make(Kind::send, {rb}, kSendCostBytes, kSendCostMessages)},
                                {rb, make(Kind::receive, {ra}, kSendCostBytes, kSendCostMessages)}},
                               buffer);
        best = std::min(best, t[0] / kSendCostMessages);
      }
      send_costs.push_back(best);
    }
  }
  if (!send_costs.empty()) profile.send_cost_s = median(send_costs);

  // 2. Bidirectional throughput with 1..ppn concurrent pairs, per node pair.
  std::size_t max_pairs = 1;
  for (const auto& ranks : nodes.ranks) max_pairs = std::max(max_pairs, ranks.size());
  std::vector<std::vector<double>> throughput(max_pairs);
  const std::int64_t message = std::min<std::int64_t>(options.stream_bytes, 256 * 1024);
  const int messages = static_cast<int>(std::max<std::int64_t>(1, options.stream_bytes / message));
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      const std::size_t pairs = std::min(nodes.ranks[a].size(), nodes.ranks[b].size());
      for (std::size_t k = 1; k <= pairs; ++k) {
        std::vector<std::pair<int, Task>> assignments;
        for (std::size_t j = 0; j < k; ++j) {
          assignments.push_back({nodes.ranks[a][j], make(Kind::exchange, {nodes.ranks[b][j]}, message, messages)});
          assignments.push_back({nodes.ranks[b][j], make(Kind::exchange, {nodes.ranks[a][j]}, message, messages)});
        }
        const auto t = measure(assignments, buffer);
        const double slowest = *std::max_element(t.begin(), t.end());
        throughput[k - 1].push_back(2.0 * static_cast<double>(k) * static_cast<double>(message * messages) / slowest);
      }
    }
  }
  for (const auto& per_pair : throughput) {
    if (!per_pair.empty()) profile.pair_throughput.push_back(median(per_pair));
  }
  // Without two concurrent pairs to compare, onload stays assumed, as
  // without a profile.
  const bool measured = profile.pair_throughput.size() >= 2;
  const double gain = measured ? profile.pair_throughput.back() / profile.pair_throughput.front() : 0.0;
  profile.nic = !measured || gain >= kOnloadGain ? shim::topo::NicClass::onload : shim::topo::NicClass::offload;

  // 4 before 3: the fan-out test feeds the sender's nearest peers.
  profile.subnet_of_host = shim::topo::partition_subnets(profile.partition_cost());

  // 3. Fan-out: node 0 feeding its two nearest nodes at once, against one.
  profile.bcast_k = 2;
  if (n >= 3) {
    std::vector<int> others;
    for (int b = 1; b < n; ++b) others.push_back(b);
    const auto& cost = profile.partition_cost();
    std::stable_sort(others.begin(), others.end(), [&](int x, int y) { return cost[0][x] < cost[0][y]; });
    const int sender = nodes.ranks[0][0];
    const int near1 = nodes.ranks[others[0]][0];
    const int near2 = nodes.ranks[others[1]][0];
    const auto one = measure({{sender, make(Kind::send, {near1}, message, messages)},
                              {near1, make(Kind::receive, {sender}, message, messages)}},
                             buffer);
    const auto two = measure({{sender, make(Kind::send, {near1, near2}, message, messages)},
                              {near1, make(Kind::receive, {sender}, message, messages)},
                              {near2, make(Kind::receive, {sender}, message, messages)}},
                             buffer);
    const double rate_one = static_cast<double>(message * messages) / *std::max_element(one.begin(), one.end());
    const double rate_two = 2.0 * static_cast<double>(message * messages) / *std::max_element(two.begin(), two.end());
    profile.bcast_k = rate_two / rate_one >= kFanoutGain ? 2 : 1;
    std::printf("shim-probe: fan-out from %s: 1 peer %.1f MB/s, 2 peers %.1f MB/s -> bcast k %d\n",
                nodes.names[0].c_str(), rate_one / 1e6, rate_two / 1e6, profile.bcast_k);
  }
  if (!send_costs.empty()) {
    std::printf("shim-probe: send cost of a %lld B message to another node (median over node pairs): %.3f us\n",
                static_cast<long long>(kSendCostBytes), profile.send_cost_s * 1e6);
  }
  if (measured) {
    std::printf("shim-probe: bidirectional throughput between nodes (median over node pairs):");
    for (std::size_t k = 0; k < profile.pair_throughput.size(); ++k) {
      std::printf(" %zu pair%s %.1f MB/s%s", k + 1, k ? "s" : "", profile.pair_throughput[k] / 1e6,
                  k + 1 < profile.pair_throughput.size() ? "," : "");
    }
    std::printf(" -> gain %.2f: %s NIC\n", gain, std::string(shim::topo::name(profile.nic)).c_str());
  } else {
    std::printf(
        "shim-probe: %s, so concurrent pairs cannot be compared: NIC class %s assumed (run on 2 or more "
        "nodes with 2 or more ranks each to measure it)\n",
        n < 2 ? "one node" : "one rank per node", std::string(shim::topo::name(profile.nic)).c_str());
  }
  return profile;
}

void print_summary(const shim::topo::NetworkProfile& p) {
  const auto& cost = p.partition_cost();
  std::printf("shim-probe: one-way time at %s, ms:\n%10s", format_size(p.partition_size).c_str(), "");
  for (const auto& host : p.hosts) std::printf(" %9s", host.c_str());
  std::printf("\n");
  for (std::size_t a = 0; a < p.hosts.size(); ++a) {
    std::printf("%10s", p.hosts[a].c_str());
    for (std::size_t b = 0; b < p.hosts.size(); ++b) {
      if (a == b) {
        std::printf(" %9s", "-");
      } else {
        std::printf(" %9.3f", cost[a][b] * 1e3);
      }
    }
    std::printf("\n");
  }
  std::printf("shim-probe: %d subnet%s:", p.subnets(), p.subnets() == 1 ? "" : "s");
  for (int s = 0; s < p.subnets(); ++s) {
    std::printf(" {");
    bool first = true;
    for (std::size_t h = 0; h < p.hosts.size(); ++h) {
      if (p.subnet_of_host[h] != s) continue;
      std::printf("%s%s", first ? "" : ",", p.hosts[h].c_str());
      first = false;
    }
    std::printf("}");
  }
  std::printf("\n");
}

std::vector<std::int64_t> parse_sizes(std::string_view text) {
  std::vector<std::int64_t> sizes;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    std::int64_t bytes = 0;
    if (!shim::parse_byte_size(text.substr(0, comma), bytes) || bytes < 1) {
      throw std::invalid_argument("--sizes: '" + std::string(text.substr(0, comma)) + "' is not a byte size");
    }
    sizes.push_back(bytes);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  if (sizes.empty()) throw std::invalid_argument("--sizes: no sizes given");
  std::sort(sizes.begin(), sizes.end());
  return sizes;
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(std::string(flag) + ": needs a value");
    const std::string_view value = argv[++i];
    std::int64_t bytes = 0;
    if (flag == "--output") {
      o.output = value;
    } else if (flag == "--sizes") {
      o.sizes = parse_sizes(value);
    } else if (flag == "--reps") {
      const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), o.reps);
      if (error != std::errc() || end != value.data() + value.size() || o.reps < 1) {
        throw std::invalid_argument("--reps: expected an integer >= 1");
      }
    } else if (flag == "--partition-size" && shim::parse_byte_size(value, bytes)) {
      o.partition_size = bytes;
    } else if (flag == "--stream" && shim::parse_byte_size(value, bytes) && bytes >= 1) {
      o.stream_bytes = bytes;
    } else {
      throw std::invalid_argument("unknown option or bad value: " + std::string(flag) + " " + std::string(value));
    }
  }
  if (o.partition_size && std::find(o.sizes.begin(), o.sizes.end(), o.partition_size) == o.sizes.end()) {
    throw std::invalid_argument("--partition-size must be one of --sizes");
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Options options;
  try {
    options = parse_options(argc, argv);
  } catch (const std::invalid_argument& error) {
    if (rank == 0) {
      std::fprintf(stderr,
                   "shim-probe: %s\nusage: shim-probe [--output FILE] [--sizes 8,64K,512K] [--reps N] "
                   "[--partition-size BYTES] [--stream BYTES]\n",
                   error.what());
    }
    MPI_Finalize();
    return 2;
  }
  const Nodes nodes = find_nodes(size);
  std::vector<char> buffer;
  int status = 0;
  if (rank == kCoordinator) {
    std::printf("shim-probe %s: %zu nodes, %d ranks; sizes", SHIM_VERSION_STRING, nodes.names.size(), size);
    for (std::int64_t s : options.sizes) std::printf(" %s", format_size(s).c_str());
    std::printf("\n");
    std::fflush(stdout);
    const shim::topo::NetworkProfile profile = probe(options, nodes, buffer);
    for (int r = 1; r < size; ++r) {
      const Task done;
      MPI_Send(&done, sizeof done, MPI_BYTE, r, shim::tags::kProbeTask, MPI_COMM_WORLD);
    }
    print_summary(profile);
    std::ofstream out(options.output);
    out << shim::topo::profile_to_json(profile);
    if (out) {
      std::printf("shim-probe: profile written to %s (load it with SHIM_PROFILE=%s)\n", options.output.c_str(),
                  options.output.c_str());
    } else {
      std::fprintf(stderr, "shim-probe: cannot write %s\n", options.output.c_str());
      status = 1;
    }
  } else {
    serve(buffer);
  }
  MPI_Bcast(&status, 1, MPI_INT, kCoordinator, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}
