// The node servers in cooperative clusters: whatever path a request takes
// (straight to the target node's server, or through another server of its
// cluster that forwards it), the accumulate family gives the results a
// plain C++ reference computes, in program order. Each origin works in its
// own region of every target's window, so every fetched value is
// determined, and an Accumulate followed at once by a fetch must be seen by
// the fetch. Rounds run under lock_all/flush and under fence. Afterwards
// each server's request buffers are what the model (rma/server_map) gives
// for the layout and settings, no more buffers were ever in use than it
// has, and forwarding happened exactly when the layout has clusters wider
// than one node whose origins are not all assigned to the target.
//
// --storm: many-to-one with whatever credits the environment sets
// (SHIM_SERVER_CREDITS=1 in the suite): every other node floods world rank
// 0 with small and chunked accumulates before one flush.
#include <mpi.h>
#include <shim/shim.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "rma/server_map.hpp"
#include "shim/config.hpp"
#include "tests/mpi/checker.hpp"

namespace {

using Element = std::int64_t;
constexpr int kRegion = 700;  // elements per origin: 5600 bytes, several messages at 1 KiB buffers

shim::test::Checker* g_check = nullptr;
int g_rank = 0;
int g_size = 1;

struct Job {
  MPI_Win win = MPI_WIN_NULL;
  Element* base = nullptr;
  // reference[t][r * kRegion + i]: what target t's element i of origin r's region holds.
  std::vector<std::vector<Element>> reference;
};

Element start_value(int target, int origin, int i) { return Element{target} * 1000000 + origin * 1000 + i; }

void expect_equal(Element expected, Element actual, const std::string& what) {
  g_check->expect(expected == actual,
                  what + ": expected " + std::to_string(expected) + ", got " + std::to_string(actual));
}

void expect_region(const std::vector<Element>& expected, const Element* actual, std::size_t n,
                   const std::string& what) {
  g_check->expect_elements(
      n, [&](std::size_t k) { return expected[k] == actual[k]; },
      [&](std::size_t k) {
        return "element " + std::to_string(k) + " expected " + std::to_string(expected[k]) + ", got " +
               std::to_string(actual[k]);
      },
      what);
}

// What a round fetched, checked once its epoch has completed it.
struct Fetched {
  std::string where;
  std::vector<Element> before, old, expected_read, read;
  Element before_fop = 0, fetched = 0, before_cas = 0, swapped_out = 0, swap_in = 0, unswapped = 0;

  void check() const {
    expect_region(before, old.data(), before.size(), where + " MPI_Get_accumulate's old values");
    expect_equal(before_fop, fetched, where + " MPI_Fetch_and_op's old value");
    expect_equal(before_cas, swapped_out, where + " MPI_Compare_and_swap's old value");
    expect_equal(swap_in, unswapped, where + " MPI_Compare_and_swap's old value (no match)");
    expect_region(expected_read, read.data(), read.size(), where + " MPI_Rget_accumulate's read");
  }
};

// One round from this origin on target t, its own region; flushed unless
// the round runs in a fence epoch.
void round_on(Job& job, int t, int round, bool flush, Fetched& f) {
  const std::string where = "round " + std::to_string(round) + " target " + std::to_string(t);
  std::vector<Element>& ref = job.reference[static_cast<std::size_t>(t)];
  const std::size_t first = static_cast<std::size_t>(g_rank) * kRegion;
  const MPI_Aint disp = static_cast<MPI_Aint>(first);

  // Accumulate (chunked over several buffers), then at once a fetch of all
  // of it: program order says the fetch sees the sum.
  std::vector<Element> add(kRegion);
  for (int i = 0; i < kRegion; ++i) add[static_cast<std::size_t>(i)] = round * 7 + i + t;
  g_check->expect_success(
      MPI_Accumulate(add.data(), kRegion, MPI_INT64_T, t, disp, kRegion, MPI_INT64_T, MPI_SUM, job.win),
      where + " MPI_Accumulate");
  for (int i = 0; i < kRegion; ++i) ref[first + static_cast<std::size_t>(i)] += add[static_cast<std::size_t>(i)];

  std::vector<Element> more(kRegion);
  f.where = where;
  f.old.assign(kRegion, 0);
  for (int i = 0; i < kRegion; ++i) more[static_cast<std::size_t>(i)] = i % 5 - 2;
  g_check->expect_success(MPI_Get_accumulate(more.data(), kRegion, MPI_INT64_T, f.old.data(), kRegion, MPI_INT64_T, t,
                                             disp, kRegion, MPI_INT64_T, MPI_SUM, job.win),
                          where + " MPI_Get_accumulate");
  f.before.assign(ref.begin() + static_cast<std::ptrdiff_t>(first),
                  ref.begin() + static_cast<std::ptrdiff_t>(first) + kRegion);
  for (int i = 0; i < kRegion; ++i) ref[first + static_cast<std::size_t>(i)] += more[static_cast<std::size_t>(i)];

  // Element 0: fetch-and-op; element 1: compare-and-swap, once matching and once not.
  const Element ticket = 3;
  g_check->expect_success(MPI_Fetch_and_op(&ticket, &f.fetched, MPI_INT64_T, t, disp, MPI_SUM, job.win),
                          where + " MPI_Fetch_and_op");
  f.before_fop = ref[first];
  ref[first] += ticket;
  f.swap_in = 424242 + round;
  const Element compare = ref[first + 1];
  g_check->expect_success(MPI_Compare_and_swap(&f.swap_in, &compare, &f.swapped_out, MPI_INT64_T, t, disp + 1, job.win),
                          where + " MPI_Compare_and_swap");
  f.before_cas = ref[first + 1];
  ref[first + 1] = f.swap_in;
  const Element not_compare = -1;
  g_check->expect_success(MPI_Compare_and_swap(&ticket, &not_compare, &f.unswapped, MPI_INT64_T, t, disp + 1, job.win),
                          where + " MPI_Compare_and_swap (no match)");

  // Request-based and large-count variants, a read of the whole region last.
  MPI_Request requests[2];
  std::vector<Element> replace(kRegion / 2);
  for (std::size_t i = 0; i < replace.size(); ++i) replace[i] = -static_cast<Element>(i) - round;
  g_check->expect_success(MPI_Raccumulate(replace.data(), kRegion / 2, MPI_INT64_T, t, disp + kRegion / 2, kRegion / 2,
                                          MPI_INT64_T, MPI_REPLACE, job.win, &requests[0]),
                          where + " MPI_Raccumulate");
  for (std::size_t i = 0; i < replace.size(); ++i) ref[first + kRegion / 2 + i] = replace[i];
  const Element one = 1;
  g_check->expect_success(MPI_Accumulate_c(&one, 1, MPI_INT64_T, t, disp + 2, 1, MPI_INT64_T, MPI_SUM, job.win),
                          where + " MPI_Accumulate_c");
  ref[first + 2] += 1;
  f.read.assign(kRegion, 0);
  g_check->expect_success(MPI_Rget_accumulate(nullptr, 0, MPI_INT64_T, f.read.data(), kRegion, MPI_INT64_T, t, disp,
                                              kRegion, MPI_INT64_T, MPI_NO_OP, job.win, &requests[1]),
                          where + " MPI_Rget_accumulate");
  g_check->expect_success(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE), where + " MPI_Waitall");
  f.expected_read.assign(ref.begin() + static_cast<std::ptrdiff_t>(first),
                         ref.begin() + static_cast<std::ptrdiff_t>(first) + kRegion);
  if (flush) g_check->expect_success(MPI_Win_flush(t, job.win), where + " MPI_Win_flush");
}

// Every origin's regions on this process, after all rounds: the sum of what
// each origin did, as that origin computed it (gathered from every origin).
void check_own_window(const Job& job, const std::string& after) {
  std::vector<Element> mine(static_cast<std::size_t>(g_size) * kRegion);
  std::vector<Element> sent(static_cast<std::size_t>(g_size) * kRegion);
  for (int t = 0; t < g_size; ++t) {
    std::memcpy(sent.data() + static_cast<std::size_t>(t) * kRegion,
                job.reference[static_cast<std::size_t>(t)].data() + static_cast<std::size_t>(g_rank) * kRegion,
                kRegion * sizeof(Element));
  }
  // Origin r's reference for this target arrives as block r.
  MPI_Alltoall(sent.data(), kRegion, MPI_INT64_T, mine.data(), kRegion, MPI_INT64_T, MPI_COMM_WORLD);
  expect_region(mine, job.base, mine.size(), after + ": the target's window");
}

shim::Config settings() {
  return shim::parse_config([](const char* name) -> const char* { return std::getenv(name); }).config;
}

// The server's buffers against the model, and forwarding where the map
// says there is some.
void check_server(const shim::Config& config) {
  shim_server_counters counters;
  int runs = 0;
  g_check->expect_success(shim_get_server_counters(&counters, &runs), "shim_get_server_counters");
  std::vector<int> node_of(static_cast<std::size_t>(g_size));
  const int node_size = config.node_size > 0 ? config.node_size : g_size;
  for (int r = 0; r < g_size; ++r) node_of[static_cast<std::size_t>(r)] = r / node_size;
  const int nodes = node_of.back() + 1;
  const shim::rma::ServerMap map(
      node_of, shim::rma::resolve_cluster_size(config.server_cluster, nodes, g_size,
                                               std::int64_t{config.server_credits} * config.server_buffer_bytes));
  const int my_node = map.node_of(g_rank);
  g_check->expect((runs != 0) == (map.server_of_node(my_node) == g_rank), "the node's lowest rank runs its server");
  if (runs != 0) {
    const auto model = shim::rma::footprint(map, my_node, config.server_credits, config.server_buffer_bytes);
    expect_equal(model.direct_bytes, counters.direct_buffer_bytes, "direct request buffer bytes (model)");
    expect_equal(model.forward_bytes, counters.forward_buffer_bytes, "forwarding buffer bytes (model)");
    g_check->expect(counters.peak_buffers_in_use * config.server_buffer_bytes <=
                        counters.direct_buffer_bytes + counters.forward_buffer_bytes,
                    "peak buffers in use (" + std::to_string(counters.peak_buffers_in_use) + ") within the pools");
    g_check->expect(counters.distinct_peers <= model.peers, "peers within the model's " + std::to_string(model.peers));
  }
  // Some origin's first hop towards some node is another server of its cluster.
  bool forwarding_expected = false;
  for (int r = 0; r < g_size; ++r) {
    for (int t = 0; t < map.nodes(); ++t) {
      if (t != map.node_of(r) && map.first_hop(r, t) != map.server_of_node(t)) forwarding_expected = true;
    }
  }
  std::int64_t forwarded = 0, received = 0;
  MPI_Allreduce(&counters.messages_forwarded, &forwarded, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&counters.messages_from_servers, &received, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  g_check->expect((forwarded > 0) == forwarding_expected,
                  std::string("messages forwarded: ") + std::to_string(forwarded) +
                      (forwarding_expected ? ", some expected" : ", none expected"));
  expect_equal(forwarded, received, "forwarded messages all arrived at their target server");
}

void family(Job& job) {
  std::vector<Fetched> fetched(static_cast<std::size_t>(g_size));
  for (int round = 0; round < 2; ++round) {
    MPI_Win_lock_all(0, job.win);
    for (int step = 1; step < g_size; ++step) {
      Fetched& f = fetched[static_cast<std::size_t>(step)];
      round_on(job, (g_rank + step) % g_size, round, true, f);
      f.check();
    }
    MPI_Win_unlock_all(job.win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  check_own_window(job, "lock_all and flush");
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_fence(0, job.win);
  for (int step = 1; step < g_size; ++step) {
    round_on(job, (g_rank + step) % g_size, 2, false, fetched[static_cast<std::size_t>(step)]);
  }
  MPI_Win_fence(0, job.win);
  for (int step = 1; step < g_size; ++step) fetched[static_cast<std::size_t>(step)].check();
  check_own_window(job, "fence");
}

// Many to one: small accumulates by the hundred and chunked ones, then one
// flush.
void storm(Job& job) {
  constexpr int kSmall = 400;
  const int node_size = settings().node_size > 0 ? settings().node_size : g_size;
  const bool sends = g_rank / node_size != 0;
  std::vector<Element>& ref = job.reference[0];
  const std::size_t first = static_cast<std::size_t>(g_rank) * kRegion;
  MPI_Win_lock_all(0, job.win);
  if (sends) {
    for (int k = 0; k < kSmall; ++k) {
      const Element value = k + 1;
      MPI_Accumulate(&value, 1, MPI_INT64_T, 0, static_cast<MPI_Aint>(first) + k % kRegion, 1, MPI_INT64_T, MPI_SUM,
                     job.win);
      ref[first + static_cast<std::size_t>(k % kRegion)] += value;
      if (k % 100 == 0) {
        std::vector<Element> block(kRegion, k);
        MPI_Accumulate(block.data(), kRegion, MPI_INT64_T, 0, static_cast<MPI_Aint>(first), kRegion, MPI_INT64_T,
                       MPI_SUM, job.win);
        for (int i = 0; i < kRegion; ++i) ref[first + static_cast<std::size_t>(i)] += k;
      }
    }
    g_check->expect_success(MPI_Win_flush(0, job.win), "storm: MPI_Win_flush");
  }
  MPI_Win_unlock_all(job.win);
  MPI_Barrier(MPI_COMM_WORLD);
  check_own_window(job, "storm");
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  shim::test::Checker check("server_clusters");
  g_check = &check;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  Job job;
  const MPI_Aint bytes = static_cast<MPI_Aint>(g_size) * kRegion * static_cast<MPI_Aint>(sizeof(Element));
  check.expect_success(MPI_Win_allocate(bytes, sizeof(Element), MPI_INFO_NULL, MPI_COMM_WORLD, &job.base, &job.win),
                       "MPI_Win_allocate");
  char path[16] = {};
  shim_win_accumulate_path(job.win, path, sizeof path);
  check.expect(std::string(path) == "owner", std::string("owner-computes window (path ") + path + ")");
  job.reference.resize(static_cast<std::size_t>(g_size));
  for (int t = 0; t < g_size; ++t) {
    auto& ref = job.reference[static_cast<std::size_t>(t)];
    ref.resize(static_cast<std::size_t>(g_size) * kRegion);
    for (int r = 0; r < g_size; ++r) {
      for (int i = 0; i < kRegion; ++i) ref[static_cast<std::size_t>(r) * kRegion + i] = start_value(t, r, i);
    }
  }
  for (int r = 0; r < g_size; ++r) {
    for (int i = 0; i < kRegion; ++i) job.base[static_cast<std::size_t>(r) * kRegion + i] = start_value(g_rank, r, i);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const bool storming = argc > 1 && std::string(argv[1]) == "--storm";
  storming ? storm(job) : family(job);
  MPI_Win_free(&job.win);
  check_server(settings());
  const int status = check.finish();
  MPI_Finalize();
  return status;
}
