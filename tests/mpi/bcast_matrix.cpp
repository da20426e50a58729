// Every broadcast algorithm, on every communicator shape, for every root and
// many datatypes and sizes (pipelined ones included: the test runs with a
// small SHIM_BCAST_SEGMENT), compared byte for byte with PMPI_Bcast on
// identically prepared buffers. The counters prove the requested algorithm
// ran, and auto's choice is checked against the policy table for the layout
// the test knows it runs on (virtual nodes, and the test profile's subnets).
#include <mpi.h>
#include <shim/shim.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "collectives/send_cost.hpp"
#include "tests/mpi/checker.hpp"
#include "tests/mpi/collective_setup.hpp"
#include "tests/mpi/typed_buffer.hpp"

namespace {

using shim::test::TypedBuffer;

shim::test::Checker* check = nullptr;

struct Case {
  std::string name;
  MPI_Datatype type;
  MPI_Count count;
  bool every_root = true;  // large cases run from two roots only, to keep the suite short
  bool large_count_api = false;
  // The same message as the odd ranks describe it, root or not (MPI asks for
  // equal type signatures, not equal datatypes); MPI_DATATYPE_NULL: as the
  // even ranks do.
  MPI_Datatype odd_type = MPI_DATATYPE_NULL;
  MPI_Count odd_count = 0;
  // Even ranks pass the buffer as MPI_BOTTOM, the message one element of
  // absolute addresses.
  bool bottom_on_even_ranks = false;
};

std::vector<Case> make_cases(shim::test::DerivedTypes& types) {
  std::vector<Case> cases;
  cases.push_back({"int x1", MPI_INT, 1});
  cases.push_back({"int x7", MPI_INT, 7});
  cases.push_back({"char x100003 (odd, pipelined)", MPI_CHAR, 100003, false});
  cases.push_back({"double x20000 (pipelined)", MPI_DOUBLE, 20000, false});
  const MPI_Datatype vector = types.strided_ints();
  cases.push_back({"vector(3,2,4) of int x3", vector, 3});
  cases.push_back({"vector(3,2,4) of int x2000 (pipelined)", vector, 2000, false});
  // 2-4 segments of 4 KiB: where ECO's subnet entries take turns.
  cases.push_back({"double x1500 (3 segments)", MPI_DOUBLE, 1500, false});
  cases.push_back({"vector(3,2,4) of int x500 (3 segments)", vector, 500, false});
  cases.push_back({"struct {int,double,char} x5", types.record(), 5});
  cases.push_back({"int resized to extent 12 x1000", types.spaced_int(), 1000, false});
  cases.push_back({"int resized lb -8 extent 16 x9", types.negative_lb_int(), 9});

  // One element far larger than a segment: shim packs it and pipelines bytes.
  MPI_Datatype big;
  PMPI_Type_vector(25000, 1, 2, MPI_INT, &big);
  cases.push_back({"vector(25000,1,2) x1 (one huge element, packed)", types.commit(big), 1, false});
  MPI_Datatype three_segments;
  PMPI_Type_vector(3000, 1, 2, MPI_INT, &three_segments);
  cases.push_back({"vector(3000,1,2) x1 (one element, 3 packed segments)", types.commit(three_segments), 1, false});

  cases.push_back({"MPI_DOUBLE_INT pair x4", MPI_DOUBLE_INT, 4});

  // Ranks that describe one message differently must still cut it into the
  // same segments: odd ranks' elements (28 and 24 bytes) fit no segment, the
  // even ranks' ints do.
  MPI_Datatype seven_ints;
  PMPI_Type_contiguous(7, MPI_INT, &seven_ints);
  seven_ints = types.commit(seven_ints);
  cases.push_back({"int x7, odd ranks contiguous(7,int) x1", MPI_INT, 7, true, false, seven_ints, 1});
  cases.push_back(
      {"int x70007, odd ranks contiguous(7,int) x10001 (pipelined)", MPI_INT, 70007, false, false, seven_ints, 10001});
  cases.push_back(
      {"int x12000, odd ranks vector(3,2,4) of int x2000 (pipelined)", MPI_INT, 12000, false, false, vector, 2000});
  cases.push_back({"int x7, even ranks from MPI_BOTTOM", MPI_INT, 7, true, false, MPI_DATATYPE_NULL, 0, true});
  cases.push_back({"double x20000 (pipelined), even ranks from MPI_BOTTOM", MPI_DOUBLE, 20000, false, false,
                   MPI_DATATYPE_NULL, 0, true});
  cases.push_back({"count 0", MPI_INT, 0});
  cases.push_back({"MPI_Bcast_c double x3", MPI_DOUBLE, 3, true, true});
  return cases;
}

// `reference` holds PMPI_Bcast's result for this case and root on `comm`:
// empty, the case computes it; the algorithms after the first compare
// against it (their inputs are the same), which halves the broadcasts a
// pass runs.
void run_case(const Case& c, int root, MPI_Comm comm, const std::string& where, std::vector<unsigned char>& reference) {
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  const bool odd = c.odd_type != MPI_DATATYPE_NULL && rank % 2 == 1;
  MPI_Datatype type = odd ? c.odd_type : c.type;
  MPI_Count count = odd ? c.odd_count : c.count;
  TypedBuffer got(type, count);
  TypedBuffer want(type, count);
  if (rank == root) {
    got.fill(root + 1);
    want.fill(root + 1);
  }
  void* got_at = got.data();
  void* want_at = want.data();
  MPI_Datatype want_type = type;
  shim::test::DerivedTypes absolute;
  if (c.bottom_on_even_ranks && rank % 2 == 0) {
    want_type = absolute.commit(shim::test::absolute_elements(want.data(), count, type));
    type = absolute.commit(shim::test::absolute_elements(got.data(), count, type));
    count = 1;
    got_at = want_at = MPI_BOTTOM;
  }
  const int rc = c.large_count_api ? MPI_Bcast_c(got_at, count, type, root, comm)
                                   : MPI_Bcast(got_at, static_cast<int>(count), type, root, comm);
  check->expect(rc == MPI_SUCCESS, where + " " + c.name + ": returned " + std::to_string(rc));
  if (reference.empty()) {
    PMPI_Bcast_c(want_at, count, want_type, root, comm);
    reference = want.bytes;
  }
  const auto mismatch = std::mismatch(got.bytes.begin(), got.bytes.end(), reference.begin());
  check->expect(mismatch.first == got.bytes.end(),
                where + " " + c.name + " root " + std::to_string(root) + ": differs from PMPI_Bcast at byte " +
                    std::to_string(mismatch.first - got.bytes.begin()) + " of " + std::to_string(got.bytes.size()));
}

shim_counters counters(shim_bcast_algorithm algorithm) {
  shim_counters c{};
  shim_get_bcast_counters(algorithm, &c);
  return c;
}

// --- what auto must choose -----------------------------------------------------

// The layout this test runs on, as shim sees it, when the test can know it:
// virtual nodes (SHIM_NODE_SIZE) with the test profile's subnets (virtual
// node i is in subnet i % SHIM_TEST_SUBNETS, default 3), or one host without
// a profile. On real hosts
// with a measured profile (the vcluster tests) auto's choice is not checked
// against a prediction, only that it ran and was correct.
struct Expected {
  bool known = true;
  int node_size = 0;
  bool profile = false;
  int subnets = 3;
  // What a small message costs its sender: SHIM_SEND_COST_NS, else the
  // reference cost (the test profiles carry none).
  long send_cost_ns = shim::coll::kReferenceSendCostNs;
  long long node_bandwidth = 0;  // SHIM_NODE_BANDWIDTH, in bytes per second without a suffix
  long long segment_bytes = 0;   // SHIM_BCAST_SEGMENT, in bytes or KiB ("4K"); 0: shim's default by size
  bool fan_out_set = false;      // SHIM_BCAST_K: no chain rules
};

Expected expected_setup() {
  Expected e;
  if (const char* k = std::getenv("SHIM_NODE_SIZE")) e.node_size = std::atoi(k);
  e.profile = std::getenv("SHIM_PROFILE") != nullptr;
  if (const char* s = std::getenv("SHIM_TEST_SUBNETS")) e.subnets = std::max(1, std::atoi(s));
  // A malformed setting leaves shim at the default, and so the prediction.
  if (const char* c = std::getenv("SHIM_SEND_COST_NS")) {
    char* end = nullptr;
    const long ns = std::strtol(c, &end, 10);
    if (end != c && *end == '\0' && ns >= 0 && ns <= 100'000'000) e.send_cost_ns = ns;
  }
  if (const char* b = std::getenv("SHIM_NODE_BANDWIDTH")) {
    char* end = nullptr;
    const long long bytes_per_second = std::strtoll(b, &end, 10);
    if (end != b && *end == '\0' && bytes_per_second >= 0) e.node_bandwidth = bytes_per_second;
  }
  if (const char* g = std::getenv("SHIM_BCAST_SEGMENT")) {
    char* end = nullptr;
    const long long bytes = std::strtoll(g, &end, 10);
    if (end != g && (*end == '\0' || std::string(end) == "K") && bytes > 0)
      e.segment_bytes = *end ? bytes << 10 : bytes;
  }
  e.fan_out_set = std::getenv("SHIM_BCAST_K") != nullptr;
  int size = 0;
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  int one_host = shim::test::processes_on_this_host() == size ? 1 : 0;
  PMPI_Allreduce(MPI_IN_PLACE, &one_host, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  e.known = one_host && (e.node_size > 0 || !e.profile);
  return e;
}

// What the policy looks at, for a communicator of this test's layout.
struct Shape {
  int ranks = 0;
  int nodes = 0;
  int subnets = 0;
  int ppn = 0;
  bool consecutive = false;  // every node the same size, its ranks one block
};

Shape shape_of(const Expected& e, MPI_Comm comm) {
  int size = 0;
  PMPI_Comm_size(comm, &size);
  std::vector<int> world(size);
  {
    int mine = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &mine);
    PMPI_Allgather(&mine, 1, MPI_INT, world.data(), 1, MPI_INT, comm);
  }
  std::vector<int> node_of_rank, subnets;
  for (int r : world) {
    const int node = e.node_size > 0 ? r / e.node_size : 0;
    node_of_rank.push_back(node);
    subnets.push_back(node % e.subnets);
  }
  Shape shape;
  shape.ranks = size;
  std::vector<int> sizes;
  for (int node : node_of_rank) {
    sizes.push_back(static_cast<int>(std::count(node_of_rank.begin(), node_of_rank.end(), node)));
    shape.ppn = std::max(shape.ppn, sizes.back());
  }
  // One block per node: a node never comes back once another has started.
  std::vector<int> runs(node_of_rank.begin(), node_of_rank.end());
  runs.erase(std::unique(runs.begin(), runs.end()), runs.end());
  std::vector<int> nodes = node_of_rank;
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  std::sort(subnets.begin(), subnets.end());
  shape.nodes = static_cast<int>(nodes.size());
  shape.subnets = static_cast<int>(std::unique(subnets.begin(), subnets.end()) - subnets.begin());
  shape.consecutive = runs.size() == nodes.size() && std::count(sizes.begin(), sizes.end(), shape.ppn) == size;
  return shape;
}

// Whether the two-level tree for `bytes` is a chain between nodes or one
// chain through every rank (coll::chain_between_nodes,
// coll::one_chain_through_ranks), restated: segments of SHIM_BCAST_SEGMENT,
// else 4 KiB up to 16 KiB and 8 KiB beyond; chained nodes from 8 segments
// per node after the first, one chain from 4 per rank on 3 or more nodes.
bool twolevel_chains(const Expected& e, const Shape& shape, std::int64_t bytes) {
  if (e.fan_out_set) return false;
  const std::int64_t segment = e.segment_bytes > 0 ? e.segment_bytes : bytes <= 16384 ? 4096 : 8192;
  const std::int64_t segments = bytes <= segment ? 1 : (bytes + segment - 1) / segment;
  const bool between_nodes = segments >= 8 && shape.nodes - 1 <= segments / 8;
  return between_nodes || (shape.nodes >= 3 && shape.ranks <= segments / 4);
}

// The policy table (collectives/bcast_policy), restated from its README rows.
shim_bcast_algorithm expected_auto(const Expected& e, const Shape& shape, std::int64_t bytes) {
  if (shape.nodes <= 1) return SHIM_BCAST_NATIVE;
  const bool measured_subnets = e.profile && e.node_size > 0 && shape.subnets >= 2;
  if (!measured_subnets && e.node_bandwidth > 0 && e.node_bandwidth <= 250'000'000 && shape.nodes >= 8 &&
      bytes >= 4096 && !twolevel_chains(e, shape, bytes)) {
    return SHIM_BCAST_SCATTER_ALLGATHER;
  }
  const std::int64_t nodes_per_subnet = measured_subnets ? (shape.nodes + shape.subnets - 1) / shape.subnets : 0;
  if (e.send_cost_ns >= 1000 && bytes <= (measured_subnets ? 1024 : 4096) && nodes_per_subnet * bytes <= 1024) {
    return SHIM_BCAST_NATIVE;
  }
  if (measured_subnets) return SHIM_BCAST_ECO;
  if (shape.ppn <= 1 && shape.nodes <= 2) return SHIM_BCAST_NATIVE;
  if (shape.consecutive && shape.nodes <= 4 && bytes >= 64 * 1024 && bytes < 96 * 1024) return SHIM_BCAST_NATIVE;
  return SHIM_BCAST_TWOLEVEL;
}

std::int64_t bytes_of(const Case& c) {
  MPI_Count type_size = 0;
  PMPI_Type_size_c(c.type, &type_size);
  return static_cast<std::int64_t>(type_size * c.count);
}

// Whole-job fast path: where auto says native at every size, its calls go
// straight to PMPI, uncounted.
bool job_takes_fast_path(const Expected& e) {
  if (!e.known) return false;
  const Shape world = shape_of(e, MPI_COMM_WORLD);
  for (std::int64_t bytes = 1; bytes <= (std::int64_t{1} << 24); bytes *= 2) {
    if (expected_auto(e, world, bytes) != SHIM_BCAST_NATIVE) return false;
  }
  return true;
}

constexpr shim_bcast_algorithm kAlgorithms[] = {SHIM_BCAST_NATIVE, SHIM_BCAST_ECO, SHIM_BCAST_TWOLEVEL,
                                                SHIM_BCAST_SCATTER_ALLGATHER, SHIM_BCAST_AUTO};
const char* const kNames[] = {"auto", "native", "eco", "twolevel", "scatter-allgather"};

void run_matrix(const std::vector<Case>& cases) {
  const Expected expected = expected_setup();
  const bool fast_path = job_takes_fast_path(expected);
  for (shim::test::NamedComm& named : shim::test::test_communicators(false)) {
    if (named.comm == MPI_COMM_NULL) continue;
    int size = 0;
    PMPI_Comm_size(named.comm, &size);
    const Shape shape = shape_of(expected, named.comm);
    std::map<std::pair<std::size_t, int>, std::vector<unsigned char>> references;  // per case and root
    for (shim_bcast_algorithm algorithm : kAlgorithms) {
      const std::string where = named.name + "/" + kNames[algorithm];
      check->expect(shim_set_bcast_algorithm(named.comm, algorithm) == MPI_SUCCESS, where + ": select");
      std::map<shim_bcast_algorithm, long> before, handled;
      for (shim_bcast_algorithm ran : kAlgorithms) before[ran] = static_cast<long>(counters(ran).calls);
      for (std::size_t i = 0; i < cases.size(); ++i) {
        const Case& c = cases[i];
        // Unknown layout: auto's calls are summed over whatever it chose.
        const shim_bcast_algorithm counted_as = algorithm != SHIM_BCAST_AUTO ? algorithm
                                                : expected.known ? expected_auto(expected, shape, bytes_of(c))
                                                                 : SHIM_BCAST_AUTO;
        for (int root = 0; root < size; ++root) {
          if (!c.every_root && root != 0 && root != size - 1) continue;
          run_case(c, root, named.comm, where, references[{i, root}]);
          const bool counted = !shim::test::no_data(c.type, c.count) && !(algorithm == SHIM_BCAST_AUTO && fast_path);
          handled[counted_as] += counted ? 1 : 0;
        }
      }
      for (const auto& [counted_as, calls] : handled) {
        const long got = static_cast<long>(counters(counted_as).calls) - before[counted_as];
        check->expect(got == calls, where + ": " + std::to_string(got) + " calls counted as " + kNames[counted_as] +
                                        ", expected " + std::to_string(calls));
      }
    }
    shim_set_bcast_algorithm(named.comm, SHIM_BCAST_AUTO);
    shim::test::free_test_communicator(named);
  }
}

// On exactly two virtual nodes without a profile (sends between nodes cost
// the default 25 ns), a short two-level broadcast enters the other node at
// two ranks when it has two or more: the root sends two messages between
// nodes instead of one (coll::two_level_entries).
void two_node_entries() {
  int rank = 0, size = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* node_size = std::getenv("SHIM_NODE_SIZE");
  if (node_size == nullptr || std::getenv("SHIM_PROFILE") != nullptr || std::getenv("SHIM_BCAST_K") != nullptr ||
      std::getenv("SHIM_SEND_COST_NS") != nullptr) {
    return;
  }
  const int per_node = std::atoi(node_size);
  if (per_node < 1 || size <= per_node || size > 2 * per_node || size - per_node < 2) return;
  shim_set_bcast_algorithm(MPI_COMM_WORLD, SHIM_BCAST_TWOLEVEL);
  std::vector<int> values(16, rank == 0 ? 0 : -1);
  if (rank == 0) std::iota(values.begin(), values.end(), 100);
  const shim_counters before = counters(SHIM_BCAST_TWOLEVEL);
  check->expect(MPI_Bcast(values.data(), 16, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "two nodes: bcast returned");
  const shim_counters after = counters(SHIM_BCAST_TWOLEVEL);
  for (int i = 0; i < 16; ++i) {
    check->expect(
        values[static_cast<std::size_t>(i)] == 100 + i,
        "two nodes: value " + std::to_string(i) + " is " + std::to_string(values[static_cast<std::size_t>(i)]));
  }
  if (rank == 0) {
    const auto sent = after.inter_node_messages - before.inter_node_messages;
    check->expect(sent == 2, "two nodes: the root sent " + std::to_string(sent) + " messages between nodes, not 2");
  }
  shim_set_bcast_algorithm(MPI_COMM_WORLD, SHIM_BCAST_AUTO);
}

void intercommunicator_goes_native() {
  int rank = 0, size = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) return;
  const shim::test::EvenOddIntercomm inter(6);
  const shim_counters before = counters(SHIM_BCAST_AUTO);
  int value = rank == 0 ? 4242 : -1;
  // Group 0's rank 0 broadcasts to group 1.
  const int root = rank % 2 == 0 ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  MPI_Bcast(&value, 1, MPI_INT, root, inter.comm());
  check->expect(rank % 2 == 0 || value == 4242, "intercommunicator bcast delivered " + std::to_string(value));
  check->expect(counters(SHIM_BCAST_AUTO).calls == before.calls, "intercommunicator bcast was not left to native");
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  shim::test::Checker checker("bcast_matrix");
  check = &checker;
  {
    shim::test::DerivedTypes types;
    run_matrix(make_cases(types));
    intercommunicator_goes_native();
    two_node_entries();
  }
  const int status = checker.finish();
  MPI_Finalize();
  return status;
}
