// acc_cluster: what a node's communication server holds as the job grows,
// with cooperative server clustering (SHIM_SERVER_CLUSTER) and without (1).
// Every process accumulates into every other process's window (so every
// route of the server map is used), then each server process reports its
// request buffers (shim_get_server_counters), the peers that sent to it, its
// VmHWM and resident anonymous and shared memory, its open file descriptors
// and sockets (/proc/self), beside the model
// (rma/server_map) for the same layout and settings. Counts, not timings:
// it may run with more ranks than cores. --model prints the model alone for
// a large job without running one.
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "harness.hpp"
#include "rma/server_map.hpp"
#include "shim/config.hpp"

namespace {

constexpr std::string_view kUsage = R"(      (any number of ranks; SHIM_NODE_SIZE gives virtual nodes)
  --elements N   doubles each process accumulates into each other process; default 4096
  --rounds R     accumulate rounds (lock_all, all targets, unlock_all); default 3
  --quiet-servers  the lowest rank of each node, where its server runs, does not accumulate, so its VmHWM
                 holds the server's buffers but no messages of its own in flight
  --model N      print the model only, for N processes at --ppn per node, unclustered and clustered
  --ppn P        processes per node for --model; default 12
)";

// A "Name:   N kB" line of /proc/self/status, in KiB; -1 if absent.
std::int64_t status_kib(std::string_view field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with(field) && line.size() > field.size() && line[field.size()] == ':') {
      return std::atoll(line.c_str() + field.size() + 1);
    }
  }
  return -1;
}

struct Descriptors {
  std::int64_t open = 0;
  std::int64_t sockets = 0;
};

Descriptors open_descriptors() {
  Descriptors d;
  if (DIR* fds = opendir("/proc/self/fd")) {
    while (const dirent* entry = readdir(fds)) {
      if (entry->d_name[0] == '.') continue;
      ++d.open;
      char target[64] = {};
      const std::string link = std::string("/proc/self/fd/") + entry->d_name;
      if (readlink(link.c_str(), target, sizeof target - 1) > 0 && std::string_view(target).starts_with("socket:")) {
        ++d.sockets;
      }
    }
    closedir(fds);
  }
  --d.open;  // the directory stream's own
  return d;
}

// The node (0 .. nodes - 1, in the order of their lowest world rank, as
// shim numbers them) of every world rank: virtual nodes of SHIM_NODE_SIZE,
// else the nodes MPI sees.
std::vector<int> node_of_ranks(int node_size) {
  const int me = bench::rank(), size = bench::ranks();
  std::vector<int> lowest_of(static_cast<std::size_t>(size));
  if (node_size > 0) {
    for (int r = 0; r < size; ++r) lowest_of[static_cast<std::size_t>(r)] = r / node_size * node_size;
  } else {
    MPI_Comm node = MPI_COMM_NULL;
    bench::check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
                 "MPI_Comm_split_type");
    int lowest = me;
    bench::check(MPI_Allreduce(&me, &lowest, 1, MPI_INT, MPI_MIN, node), "MPI_Allreduce");
    bench::check(MPI_Comm_free(&node), "MPI_Comm_free");
    bench::check(MPI_Allgather(&lowest, 1, MPI_INT, lowest_of.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
  }
  std::vector<int> index(static_cast<std::size_t>(size), -1), node_of(static_cast<std::size_t>(size));
  int nodes = 0;
  for (int r = 0; r < size; ++r) {
    int& node = index[static_cast<std::size_t>(lowest_of[static_cast<std::size_t>(r)])];
    if (node < 0) node = nodes++;
    node_of[static_cast<std::size_t>(r)] = node;
  }
  return node_of;
}

shim::Config settings() {
  return shim::parse_config([](const char* name) -> const char* { return std::getenv(name); }).config;
}

void model_only(const bench::Args& args) {
  const std::int64_t processes = args.count("--model", 9600, 1);
  const int ppn = args.count("--ppn", 12, 1);
  const shim::Config config = settings();
  const bench::Report report(args, "per-server request buffers and peers from the model (rma/server_map)");
  report.columns({"processes", "ppn", "nodes", "g", "credits", "buffer_bytes", "direct_origins", "direct_bytes",
                  "forward_bytes", "peers"},
                 "largest server");
  const std::int64_t nodes = (processes + ppn - 1) / ppn;
  // Unclustered, then clustered: SHIM_SERVER_CLUSTER if it asks for
  // clusters, else ceil(sqrt(nodes)) (auto).
  const int clustered = config.server_cluster > 1 ? config.server_cluster : shim::rma::kClusterSquareRoot;
  const std::int64_t bytes_per_origin = std::int64_t{config.server_credits} * config.server_buffer_bytes;
  for (const int g :
       {1, shim::rma::resolve_cluster_size(clustered, static_cast<int>(nodes), processes, bytes_per_origin)}) {
    const auto f =
        shim::rma::model_largest_footprint(processes, ppn, g, config.server_credits, config.server_buffer_bytes);
    report.row({std::to_string(processes), std::to_string(ppn), std::to_string(nodes), std::to_string(g),
                std::to_string(config.server_credits), std::to_string(config.server_buffer_bytes),
                std::to_string(f.direct_origins), std::to_string(f.direct_bytes), std::to_string(f.forward_bytes),
                std::to_string(f.peers)});
  }
}

void measure(const bench::Args& args) {
  const int elements = args.count("--elements", 4096, 1);
  const int rounds = args.count("--rounds", 3, 1);
  const int me = bench::rank(), size = bench::ranks();
  const shim::Config config = settings();
  const bench::Report report(args,
                             "per-server request buffers, peers, VmHWM and descriptors after every process "
                             "accumulated into every other");
  double* base = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  bench::check(MPI_Win_allocate(static_cast<MPI_Aint>(elements) * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win),
               "MPI_Win_allocate");
  std::vector<double> ones(static_cast<std::size_t>(elements), 1.0);
  const std::vector<int> node_of = node_of_ranks(config.node_size);
  const shim::rma::ServerMap map(
      node_of,
      shim::rma::resolve_cluster_size(config.server_cluster, *std::max_element(node_of.begin(), node_of.end()) + 1,
                                      size, std::int64_t{config.server_credits} * config.server_buffer_bytes));
  const auto originates = [&](int rank) {
    return !args.given("--quiet-servers") || map.server_of_node(map.node_of(rank)) != rank;
  };
  int origins_into_me = 0;
  for (int r = 0; r < size; ++r) origins_into_me += r != me && originates(r) ? 1 : 0;
  for (int round = 0; round < rounds && originates(me); ++round) {
    bench::check(MPI_Win_lock_all(0, win), "MPI_Win_lock_all");
    for (int step = 1; step < size; ++step) {
      bench::check(
          MPI_Accumulate(ones.data(), elements, MPI_DOUBLE, (me + step) % size, 0, elements, MPI_DOUBLE, MPI_SUM, win),
          "MPI_Accumulate");
    }
    bench::check(MPI_Win_unlock_all(win), "MPI_Win_unlock_all");
  }
  bench::check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  for (int i = 0; i < elements; ++i) {
    if (base[i] != origins_into_me * rounds) bench::fail("the window holds " + std::to_string(base[i]));
  }
  bench::check(MPI_Win_free(&win), "MPI_Win_free");

  shim_server_counters counters;
  int runs = 0;
  bench::check(shim_get_server_counters(&counters, &runs), "shim_get_server_counters");
  const auto model = shim::rma::footprint(map, map.node_of(me), config.server_credits, config.server_buffer_bytes);
  const Descriptors descriptors = open_descriptors();
  const std::vector<std::int64_t> mine = {runs,
                                          counters.direct_buffer_bytes,
                                          counters.forward_buffer_bytes,
                                          model.direct_bytes,
                                          model.forward_bytes,
                                          counters.distinct_peers,
                                          model.peers,
                                          counters.peak_buffers_in_use,
                                          counters.messages_forwarded,
                                          status_kib("VmHWM"),
                                          status_kib("RssAnon"),
                                          status_kib("RssShmem"),
                                          descriptors.open,
                                          descriptors.sockets};
  std::vector<std::int64_t> all(mine.size() * static_cast<std::size_t>(size));
  bench::check(MPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_INT64_T, all.data(),
                          static_cast<int>(mine.size()), MPI_INT64_T, 0, MPI_COMM_WORLD),
               "MPI_Gather");
  report.line(
      "layout: " + std::to_string(size) + " processes on " + std::to_string(map.nodes()) + " nodes, clusters of " +
      std::to_string(map.cluster_size()) + "; " + std::to_string(config.server_credits) + " credits of " +
      std::to_string(config.server_buffer_bytes) + " bytes; " +
      (args.given("--quiet-servers") ? "servers' own processes do not accumulate" : "every process accumulates"));
  report.columns({"processes", "g", "server_rank", "direct_bytes", "forward_bytes", "model_direct_bytes",
                  "model_forward_bytes", "peers", "model_peers", "peak_buffers_in_use", "forwarded", "vm_hwm_kib",
                  "rss_anon_kib", "rss_shmem_kib", "open_fds", "open_sockets"},
                 "one row per server");
  for (int r = 0; r < size; ++r) {
    const std::int64_t* v = all.data() + static_cast<std::size_t>(r) * mine.size();
    if (v[0] == 0) continue;
    std::vector<std::string> cells = {std::to_string(size), std::to_string(map.cluster_size()), std::to_string(r)};
    for (std::size_t k = 1; k < mine.size(); ++k) cells.push_back(std::to_string(v[k]));
    report.row(cells);
  }
}

}  // namespace

int main(int argc, char** argv) {
  return bench::run("acc_cluster", kUsage, argc, argv,
                    [](const bench::Args& args) { args.given("--model") ? model_only(args) : measure(args); });
}
