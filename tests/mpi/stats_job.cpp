// A known sequence of the calls SHIM_STATS counts, for check_stats_report.py:
// the accumulate family on windows of each path (owner-computes, whose
// targets are same-node or other-node depending on SHIM_NODE_SIZE,
// caller-computes and native), mirrored-window accesses and collectives,
// one alltoall and one broadcast. Results are checked element by element;
// what was called is tallied as the program goes, and written to
// DIR/expected-RANK.txt (this process's) and DIR/expected-sum.txt (the
// job's sums, maxima and per-node server requests, with rank 0's process
// id, which names the job under Hydra) for the script to compare with the
// report shim writes at MPI_Finalize.
//
//   stats_job DIR
#include <mpi.h>
#include <shim/mirror.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "tests/mpi/checker.hpp"

namespace {

constexpr int kOps = 4;    // Accumulate, Get_accumulate, Fetch_and_op, Compare_and_swap
constexpr int kPaths = 4;  // same-node, server, caller, native
constexpr std::array<const char*, kOps> kOpNames = {"Accumulate", "Get_accumulate", "Fetch_and_op", "Compare_and_swap"};
constexpr std::array<const char*, kPaths> kPathNames = {"same-node", "server", "caller", "native"};
constexpr int kMirrorOps = 6;  // the ones this program calls
constexpr std::array<const char*, kMirrorOps> kMirrorNames = {"get", "put", "acc", "zero", "merge", "merge_patch"};
enum class MirrorCall { get, put, acc, zero, merge, merge_patch };

constexpr int kWindowElements = 16;  // int64 per rank: 128 bytes
constexpr int kAccumulateSpan = 8;   // elements [0, 8) take Accumulate
constexpr int kGetAccumulateAt = 8;  // [8, 10) Get_accumulate
constexpr int kFetchAt = 10;
constexpr int kSwapAt = 11;
constexpr int kRequestAt = 12;  // MPI_Raccumulate, which counts as Accumulate
constexpr MPI_Count kMirrorElements = 100;

// Every counter as one array of int64, so the job's sums and maxima are one
// reduction each: [ops][paths][ops, bytes], mirror [op][calls, ops, bytes],
// then requests and bytes per node's server.
struct Tally {
  explicit Tally(int node_count)
      : values(kOps * kPaths * 2 + kMirrorOps * 3 + 2 * static_cast<std::size_t>(node_count), 0), nodes(node_count) {}
  static std::size_t accumulate(int op, int path, int field) {
    return static_cast<std::size_t>((op * kPaths + path) * 2 + field);
  }
  static std::size_t mirror(int op, int field) { return static_cast<std::size_t>(kOps * kPaths * 2 + op * 3 + field); }
  static std::size_t server(int node, int field) {
    return static_cast<std::size_t>(kOps * kPaths * 2 + kMirrorOps * 3 + node * 2 + field);
  }
  std::vector<std::int64_t> values;
  int nodes;
};

struct Job {
  int rank = 0;
  int size = 1;
  int node_size = 1;
  shim::test::Checker* check = nullptr;
  Tally* tally = nullptr;
  int node_of(int rank_) const { return rank_ / node_size; }
};

MPI_Info path_info(const char* path) {
  MPI_Info info = MPI_INFO_NULL;
  MPI_Info_create(&info);
  MPI_Info_set(info, "shim_accumulate", path);
  return info;
}

// Every rank runs each operation once on every target, in one lock_all
// epoch, then checks its own window: Accumulate adds rank+1 to elements
// [0, rank+1), Get_accumulate adds 1 to two elements, Fetch_and_op and
// Raccumulate add 1, Compare_and_swap writes rank+1 where it finds 0.
void accumulate_family(const Job& job, const char* path_name, int path) {
  MPI_Info info = path_info(path_name);
  std::int64_t* base = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  job.check->expect_success(MPI_Win_allocate(kWindowElements * 8, 8, info, MPI_COMM_WORLD, &base, &win),
                            std::string(path_name) + ": MPI_Win_allocate");
  MPI_Info_free(&info);
  for (int k = 0; k < kWindowElements; ++k) base[k] = 0;
  MPI_Win_fence(0, win);  // the zeros are in before anyone accumulates
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  const std::vector<std::int64_t> adds(kAccumulateSpan, job.rank + 1);
  const std::array<std::int64_t, 2> ones = {1, 1};
  const std::int64_t one = 1, zero = 0, mine = job.rank + 1;
  // Results arrive by the end of the epoch: one slot per target and call.
  std::vector<std::int64_t> fetched(2 * static_cast<std::size_t>(job.size)), added(fetched.size() / 2),
      swapped(added.size());
  const int count = job.rank % kAccumulateSpan + 1;
  MPI_Win_lock_all(0, win);
  for (int target = 0; target < job.size; ++target) {
    const int route = path == 0 && job.node_of(target) != job.node_of(job.rank) ? 1 : path;
    const std::string where = std::string(path_name) + " target " + std::to_string(target);
    job.check->expect_success(
        MPI_Accumulate(adds.data(), count, MPI_INT64_T, target, 0, count, MPI_INT64_T, MPI_SUM, win),
        where + ": MPI_Accumulate");
    const auto t = static_cast<std::size_t>(target);
    job.check->expect_success(MPI_Get_accumulate(ones.data(), 2, MPI_INT64_T, &fetched[2 * t], 2, MPI_INT64_T, target,
                                                 kGetAccumulateAt, 2, MPI_INT64_T, MPI_SUM, win),
                              where + ": MPI_Get_accumulate");
    job.check->expect_success(MPI_Fetch_and_op(&one, &added[t], MPI_INT64_T, target, kFetchAt, MPI_SUM, win),
                              where + ": MPI_Fetch_and_op");
    job.check->expect_success(MPI_Compare_and_swap(&mine, &zero, &swapped[t], MPI_INT64_T, target, kSwapAt, win),
                              where + ": MPI_Compare_and_swap");
    MPI_Request request = MPI_REQUEST_NULL;
    job.check->expect_success(
        MPI_Raccumulate(&one, 1, MPI_INT64_T, target, kRequestAt, 1, MPI_INT64_T, MPI_SUM, win, &request),
        where + ": MPI_Raccumulate");
    job.check->expect_success(MPI_Wait(&request, MPI_STATUS_IGNORE), where + ": MPI_Wait");
    // Raccumulate, then Accumulate, Get_accumulate, Fetch_and_op, Compare_and_swap.
    const std::array<std::pair<int, std::int64_t>, 5> calls = {
        std::pair<int, std::int64_t>{0, 8}, {0, 8 * count}, {1, 16}, {2, 8}, {3, 8}};
    for (const auto& [op, bytes] : calls) {
      job.tally->values[Tally::accumulate(op, route, 0)] += 1;
      job.tally->values[Tally::accumulate(op, route, 1)] += bytes;
      if (route == 1) {  // each one request to the target node's server
        job.tally->values[Tally::server(job.node_of(target), 0)] += 1;
        job.tally->values[Tally::server(job.node_of(target), 1)] += bytes;
      }
    }
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock(MPI_LOCK_SHARED, job.rank, 0, win);
  MPI_Win_sync(win);
  for (int k = 0; k < kAccumulateSpan; ++k) {
    std::int64_t expected = 0;
    for (int r = 0; r < job.size; ++r) expected += k < r % kAccumulateSpan + 1 ? r + 1 : 0;
    job.check->expect(base[k] == expected, std::string(path_name) + ": element " + std::to_string(k) + " is " +
                                               std::to_string(base[k]) + ", expected " + std::to_string(expected));
  }
  for (const int k : {kGetAccumulateAt, kGetAccumulateAt + 1, kFetchAt, kRequestAt}) {
    job.check->expect(base[k] == job.size, std::string(path_name) + ": element " + std::to_string(k) + " is " +
                                               std::to_string(base[k]) + ", expected " + std::to_string(job.size));
  }
  job.check->expect(base[kSwapAt] >= 1 && base[kSwapAt] <= job.size,
                    std::string(path_name) + ": compare-and-swap left " + std::to_string(base[kSwapAt]));
  MPI_Win_unlock(job.rank, win);
  MPI_Win_free(&win);
}

void count_mirror(const Job& job, MirrorCall call, MPI_Count elements) {
  const int op = static_cast<int>(call);
  job.tally->values[Tally::mirror(op, 0)] += 1;
  // A collective call is one operation, which its rank 0 counts.
  const bool collective = call == MirrorCall::zero || call == MirrorCall::merge || call == MirrorCall::merge_patch;
  if (collective && job.rank != 0) return;
  job.tally->values[Tally::mirror(op, 1)] += 1;
  job.tally->values[Tally::mirror(op, 2)] += elements * 8;
}

// Zero, three accs of rank+1 into elements [0, 3), a merge: every node's
// copy holds 3 x the sum of rank+1 there. Then each rank puts its own five
// elements at 20 + 5 x rank and a merge of [20, 20 + 5 x size) spreads them.
void mirrored_window(const Job& job) {
  shim_mirror mirror = nullptr;
  job.check->expect_success(shim_mirror_create(kMirrorElements, MPI_INT64_T, MPI_COMM_WORLD, &mirror),
                            "shim_mirror_create");
  job.check->expect_success(shim_mirror_zero(mirror), "shim_mirror_zero");
  count_mirror(job, MirrorCall::zero, kMirrorElements);
  const std::array<std::int64_t, 3> adds = {job.rank + 1, job.rank + 1, job.rank + 1};
  for (int i = 0; i < 3; ++i) {
    job.check->expect_success(shim_mirror_acc(mirror, 0, 3, adds.data(), nullptr), "shim_mirror_acc");
    count_mirror(job, MirrorCall::acc, 3);
  }
  job.check->expect_success(shim_mirror_merge(mirror), "shim_mirror_merge");
  count_mirror(job, MirrorCall::merge, kMirrorElements);
  std::vector<std::int64_t> seen(10, -1);
  for (int i = 0; i < 2; ++i) {
    job.check->expect_success(shim_mirror_get(mirror, 0, 10, seen.data()), "shim_mirror_get");
    count_mirror(job, MirrorCall::get, 10);
  }
  const std::int64_t sum = static_cast<std::int64_t>(job.size) * (job.size + 1) / 2;
  job.check->expect_elements(
      seen.size(), [&](std::size_t k) { return seen[k] == (k < 3 ? 3 * sum : 0); },
      [&](std::size_t k) { return "element " + std::to_string(k) + " is " + std::to_string(seen[k]); },
      "mirror after merge");

  const std::array<std::int64_t, 5> own = {1000 + job.rank, 1000 + job.rank, 1000 + job.rank, 1000 + job.rank,
                                           1000 + job.rank};
  job.check->expect_success(shim_mirror_put(mirror, 20 + 5 * job.rank, 5, own.data()), "shim_mirror_put");
  count_mirror(job, MirrorCall::put, 5);
  job.check->expect_success(shim_mirror_merge_patch(mirror, 20, 5 * job.size), "shim_mirror_merge_patch");
  count_mirror(job, MirrorCall::merge_patch, 5 * job.size);
  std::vector<std::int64_t> spread(static_cast<std::size_t>(5 * job.size), -1);
  job.check->expect_success(shim_mirror_get(mirror, 20, 5 * job.size, spread.data()), "shim_mirror_get");
  count_mirror(job, MirrorCall::get, 5 * job.size);
  job.check->expect_elements(
      spread.size(), [&](std::size_t k) { return spread[k] == 1000 + static_cast<std::int64_t>(k / 5); },
      [&](std::size_t k) { return "element " + std::to_string(20 + k) + " is " + std::to_string(spread[k]); },
      "mirror after merge_patch");
  job.check->expect_success(shim_mirror_free(&mirror), "shim_mirror_free");
}

void collectives(const Job& job) {
  std::vector<int> send(static_cast<std::size_t>(job.size)), receive(send.size(), -1);
  for (int r = 0; r < job.size; ++r) send[static_cast<std::size_t>(r)] = job.rank * 100 + r;
  job.check->expect_success(MPI_Alltoall(send.data(), 1, MPI_INT, receive.data(), 1, MPI_INT, MPI_COMM_WORLD),
                            "MPI_Alltoall");
  job.check->expect_elements(
      receive.size(), [&](std::size_t k) { return receive[k] == static_cast<int>(k) * 100 + job.rank; },
      [&](std::size_t k) { return "block " + std::to_string(k) + " is " + std::to_string(receive[k]); }, "alltoall");
  std::vector<char> message(1024, job.rank == 0 ? 'x' : '.');
  job.check->expect_success(MPI_Bcast(message.data(), 1024, MPI_CHAR, 0, MPI_COMM_WORLD), "MPI_Bcast");
  job.check->expect_elements(
      message.size(), [&](std::size_t k) { return message[k] == 'x'; },
      [&](std::size_t k) { return "byte " + std::to_string(k) + " is not the root's"; }, "bcast");
}

// Lines as check_stats_report.py reads them; `maxima` adds the
// largest one process's counts.
void write_tally(const std::string& path, const Tally& tally, const Tally* maxima, long pid) {
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) {
    std::perror(path.c_str());
    std::exit(2);
  }
  const auto value = [](const Tally& t, std::size_t at) { return static_cast<long long>(t.values[at]); };
  if (pid > 0) std::fprintf(out, "pid %ld\n", pid);
  for (int op = 0; op < kOps; ++op) {
    for (int p = 0; p < kPaths; ++p) {
      if (tally.values[Tally::accumulate(op, p, 0)] == 0) continue;
      std::fprintf(out, "accumulate %s %s %lld %lld", kOpNames[op], kPathNames[p],
                   value(tally, Tally::accumulate(op, p, 0)), value(tally, Tally::accumulate(op, p, 1)));
      if (maxima != nullptr) {
        std::fprintf(out, " %lld %lld", value(*maxima, Tally::accumulate(op, p, 0)),
                     value(*maxima, Tally::accumulate(op, p, 1)));
      }
      std::fprintf(out, "\n");
    }
  }
  for (int op = 0; op < kMirrorOps; ++op) {
    std::fprintf(out, "mirror %s %lld %lld %lld", kMirrorNames[op], value(tally, Tally::mirror(op, 0)),
                 value(tally, Tally::mirror(op, 1)), value(tally, Tally::mirror(op, 2)));
    if (maxima != nullptr) std::fprintf(out, " %lld", value(*maxima, Tally::mirror(op, 0)));
    std::fprintf(out, "\n");
  }
  for (int node = 0; node < tally.nodes; ++node) {
    std::fprintf(out, "server %d %lld %lld\n", node, value(tally, Tally::server(node, 0)),
                 value(tally, Tally::server(node, 1)));
  }
  std::fclose(out);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  Job job;
  MPI_Comm_rank(MPI_COMM_WORLD, &job.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &job.size);
  shim::test::Checker check("stats_job");
  if (argc != 2) check.test_bug("usage: stats_job DIR");
  const char* node_size = std::getenv("SHIM_NODE_SIZE");
  if (node_size == nullptr) check.test_bug("run with SHIM_NODE_SIZE, so that the test knows the nodes");
  job.node_size = std::atoi(node_size);
  if (job.node_size < 1) check.test_bug("SHIM_NODE_SIZE must be a positive integer");
  const int nodes = (job.size + job.node_size - 1) / job.node_size;
  Tally tally(nodes);
  job.check = &check;
  job.tally = &tally;

  accumulate_family(job, "owner", 0);
  accumulate_family(job, "caller", 2);
  accumulate_family(job, "native", 3);
  mirrored_window(job);
  collectives(job);

  const std::string dir = argv[1];
  write_tally(dir + "/expected-" + std::to_string(job.rank) + ".txt", tally, nullptr, 0);
  Tally sums(nodes), maxima(nodes);
  const int words = static_cast<int>(tally.values.size());
  MPI_Reduce(tally.values.data(), sums.values.data(), words, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(tally.values.data(), maxima.values.data(), words, MPI_INT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
  if (job.rank == 0) write_tally(dir + "/expected-sum.txt", sums, &maxima, static_cast<long>(getpid()));
  const int status = check.finish();
  MPI_Finalize();
  return status;
}
