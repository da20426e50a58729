// Scenario: ordering and contention. One origin's accumulate calls to the
// same elements in one epoch keep program order (every fetched value and the
// final value are the program-order results); all origins adding 1s to the
// same elements give exact sums; fetch-and-op and compare-and-swap
// increments mixed with accumulates count every increment, and no two
// fetches see the same old value.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tests/mpi/accumulate/items.hpp"
#include "tests/mpi/accumulate/scenarios.hpp"
#include "tests/mpi/accumulate/windows.hpp"

namespace shim::test::accumulate {
namespace {

// One origin's sequence of accumulate calls to the same element(s) in one
// epoch: MPI orders them, so the final value and every fetched value must
// be the program-order result.
class OrderingItem : public Item {
 public:
  OrderingItem(const TypeInfo& type, bool multi) : type_(type), multi_(multi) {}
  void place(Cursor& cursor, int P) override {
    own_.clear();
    for (int o = 0; o < P; ++o) own_.push_back(cursor.take(5 * static_cast<MPI_Aint>(type_.size)));
  }
  void init(Model& m, int P, int t) const override {
    for (int o = 0; o < P; ++o)
      m.block(own_[static_cast<std::size_t>(o)], type_, 5,
              std::string("program order ") + (multi_ ? "of overlapping ranges " : "") + type_.name +
                  " block of origin " + str(o),
              [&](int e) { return 60 + t + e; });
  }
  void plan(std::vector<RmaOp>& out, const PlanContext& x) const override {
    const MPI_Aint base = own_[static_cast<std::size_t>(x.o)];
    const auto s = static_cast<MPI_Aint>(type_.size);
    const bool integer = (type_.category & kInteger) != 0;
    int step = 0;
    auto label = [&](int k) { return "program order step " + str(k); };
    auto acc = [&](const char* op, long long v) {
      RmaOp r = typed(acc_fn(x.variant + step, x.passive), op_named(op), type_, Shape::Basic, 1, Shape::Basic, 1, base,
                      Shape::Basic, 0, label(step));
      r.seeds = {v};
      out.push_back(std::move(r));
      ++step;
    };
    auto gacc = [&](const char* op, long long v) {
      RmaOp r = typed(gacc_fn(x.variant + step, x.passive), op_named(op), type_, Shape::Basic, 1, Shape::Basic, 1, base,
                      Shape::Basic, 1, label(step));
      r.seeds = {v};
      out.push_back(std::move(r));
      ++step;
    };
    auto fop = [&](const char* op, long long v) {
      out.push_back(single(Fn::Fop, &op_named(op), type_, base, v, label(step)));
      ++step;
    };
    auto cas = [&](long long compare, long long v) {
      RmaOp r = single(Fn::Cas, nullptr, type_, base, v, label(step));
      r.compare_seed = compare;
      out.push_back(std::move(r));
      ++step;
    };
    if (!multi_) {
      acc("MPI_REPLACE", 1);
      acc("MPI_SUM", 2);
      acc("MPI_REPLACE", 5);
      acc("MPI_SUM", 3);
      gacc("MPI_PROD", 2);  // 8 -> 16
      fop("MPI_MAX", 20);
      gacc("MPI_MIN", 7);
      fop("MPI_REPLACE", 9);
      if (integer) acc("MPI_BXOR", 6);  // 15
      gacc("MPI_NO_OP", 0);
      acc("MPI_SUM", integer ? -4 : 2);  // 11
      if (integer) {
        cas(11, 42);
        cas(11, 99);  // fails: 42 stays
      }
      acc("MPI_PROD", -1);
      gacc("MPI_SUM", (x.o + 1) * 100 + x.t);
      fop("MPI_NO_OP", 0);
      acc("MPI_MAX", -1000);
      return;
    }
    // Overlapping ranges of different lengths and datatypes.
    auto ranged = [&](bool fetch, const char* op, Shape shape, MPI_Count count, MPI_Aint first,
                      std::vector<long long> seeds) {
      const MPI_Count elements = count * static_cast<MPI_Count>(layout(type_, shape).offsets.size());
      RmaOp r = typed(fetch ? gacc_fn(x.variant + step, x.passive) : acc_fn(x.variant + step, x.passive), op_named(op),
                      type_, Shape::Basic, elements, shape, count, base + first * s, Shape::Basic, fetch ? elements : 0,
                      label(step));
      r.seeds = std::move(seeds);
      out.push_back(std::move(r));
      ++step;
    };
    ranged(false, "MPI_REPLACE", Shape::Basic, 4, 0, {1, 2, 3, 4});
    ranged(false, "MPI_SUM", Shape::Basic, 2, 1, {10, 20});      // 1 12 23 4
    ranged(true, "MPI_REPLACE", Shape::Basic, 1, 2, {7});        // 1 12 7 4
    ranged(false, "MPI_PROD", Shape::Resized2, 2, 0, {3, 3});    // 3 12 21 4
    ranged(true, "MPI_SUM", Shape::Basic, 4, 0, {1, 1, 1, 1});   // 4 13 22 5
    fop("MPI_MAX", 50);                                          // element 0: 50
    ranged(true, "MPI_MIN", Shape::Vector3s2, 1, 0, {9, 9, 9});  // elements 0, 2, 4: 9 13 9 5 min(64,9)
  }

 private:
  const TypeInfo& type_;
  bool multi_;
  std::vector<MPI_Aint> own_;
};

}  // namespace

std::unique_ptr<Item> ordering_item(const TypeInfo& type, bool overlapping_ranges) {
  return std::make_unique<OrderingItem>(type, overlapping_ranges);
}

// All ranks add integer 1s to the same elements of one or two targets: the
// sums are exact.
void contention(const Comm& c, const std::string& path) {
  const int P = c.size;
  const MPI_Aint bytes = window_bytes(64, path, Creation::Allocate);
  Window w = open_window(c, Creation::Allocate, path, std::vector<MPI_Aint>(static_cast<std::size_t>(P), bytes),
                         uniform(c, sizeof(int)), "contention");
  ++stats.windows;
  std::vector<int> targets = {0};
  if (P > 1) targets.push_back(P - 1);
  const int kReps = light(path) ? 8 : 40;
  constexpr int kElements = 4;
  const int ones[kElements] = {1, 1, 1, 1};
  for (int mode = 0; mode < 3; ++mode) {
    const char* mode_name = mode == 0 ? "lock_all" : mode == 1 ? "lock shared per call" : "fence";
    const std::string where = w.label + ", " + mode_name;
    sync_ok(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, c.rank, 0, w.win), where + ": MPI_Win_lock");
    std::memset(w.base, 0, static_cast<std::size_t>(bytes));
    sync_ok(MPI_Win_unlock(c.rank, w.win), where + ": MPI_Win_unlock");
    PMPI_Barrier(c.comm);
    if (mode == 0) sync_ok(MPI_Win_lock_all(0, w.win), where + ": MPI_Win_lock_all");
    if (mode == 2) sync_ok(MPI_Win_fence(0, w.win), where + ": MPI_Win_fence");
    for (int rep = 0; rep < kReps; ++rep) {
      for (int t : targets) {
        if (mode == 1) sync_ok(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w.win), where + ": MPI_Win_lock");
        ok(MPI_Accumulate(ones, kElements, MPI_INT, t, 0, kElements, MPI_INT, MPI_SUM, w.win),
           where + ": MPI_Accumulate");
        ++stats.ops[target_class(world_rank, c.world[static_cast<std::size_t>(t)])];
        if (mode == 1) sync_ok(MPI_Win_unlock(t, w.win), where + ": MPI_Win_unlock");
      }
      if (mode == 0 && rep % 8 == 7) sync_ok(MPI_Win_flush_all(w.win), where + ": MPI_Win_flush_all");
    }
    if (mode == 0) sync_ok(MPI_Win_unlock_all(w.win), where + ": MPI_Win_unlock_all");
    if (mode == 2) sync_ok(MPI_Win_fence(0, w.win), where + ": MPI_Win_fence");
    PMPI_Barrier(c.comm);
    sync_ok(MPI_Win_lock(MPI_LOCK_SHARED, c.rank, 0, w.win), where + ": MPI_Win_lock");
    const long hits = static_cast<long>(std::count(targets.begin(), targets.end(), c.rank));
    for (int i = 0; i < kElements + 2; ++i) {
      int v = 0;
      std::memcpy(&v, w.base + 4 * i, 4);
      const long want = i < kElements ? hits * kReps * P : 0;
      check->expect(v == want, where + ", target " + str(c.rank) + " element " + str(i) + ": got " + str(v) +
                                   ", expected " + str(want) + " (" + str(P) + " origins x " + str(kReps) + " x 1)");
    }
    sync_ok(MPI_Win_unlock(c.rank, w.win), where + ": MPI_Win_unlock");
    PMPI_Barrier(c.comm);
  }
  close_window(w);
}

// All ranks increment one element of rank 0 and one of rank P-1 by a mix of
// MPI_Accumulate(SUM, 1), MPI_Fetch_and_op(SUM, 1) and compare-and-swap
// loops: the final value counts every increment, and no two fetch-and-op or
// successful compare-and-swap calls saw the same old value.
void mixed_increments(const Comm& c, const std::string& path) {
  const int P = c.size;
  const MPI_Aint bytes = window_bytes(16, path, Creation::Allocate);
  Window w = open_window(c, Creation::Allocate, path, std::vector<MPI_Aint>(static_cast<std::size_t>(P), bytes),
                         uniform(c, sizeof(long)), "mixed increments");
  ++stats.windows;
  const std::string where = w.label;
  constexpr long kStart = 5000;
  const int kCalls = light(path) ? 12 : 30;
  sync_ok(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, c.rank, 0, w.win), where + ": MPI_Win_lock");
  std::memcpy(w.base, &kStart, sizeof kStart);
  sync_ok(MPI_Win_unlock(c.rank, w.win), where + ": MPI_Win_unlock");
  PMPI_Barrier(c.comm);
  const int targets[2] = {0, P - 1};
  std::vector<long> seen[2];
  long mine[2] = {0, 0};
  const long one = 1;
  sync_ok(MPI_Win_lock_all(0, w.win), where + ": MPI_Win_lock_all");
  for (int i = 0; i < kCalls; ++i) {
    const int which = i % 2;
    const int t = targets[which];
    ++stats.ops[target_class(world_rank, c.world[static_cast<std::size_t>(t)])];
    ++mine[which];
    switch ((i / 2 + c.rank) % 3) {
      case 0:
        ok(MPI_Accumulate(&one, 1, MPI_LONG, t, 0, 1, MPI_LONG, MPI_SUM, w.win), where + ": MPI_Accumulate");
        break;
      case 1: {
        long old = -1;
        ok(MPI_Fetch_and_op(&one, &old, MPI_LONG, t, 0, MPI_SUM, w.win), where + ": MPI_Fetch_and_op");
        sync_ok(MPI_Win_flush(t, w.win), where + ": MPI_Win_flush");
        seen[which].push_back(old);
        break;
      }
      default: {
        long old = -1;
        ok(MPI_Fetch_and_op(nullptr, &old, MPI_LONG, t, 0, MPI_NO_OP, w.win), where + ": MPI_Fetch_and_op(NO_OP)");
        sync_ok(MPI_Win_flush(t, w.win), where + ": MPI_Win_flush");
        for (int attempt = 0;; ++attempt) {
          const long next = old + 1;
          long got = -1;
          ok(MPI_Compare_and_swap(&next, &old, &got, MPI_LONG, t, 0, w.win), where + ": MPI_Compare_and_swap");
          sync_ok(MPI_Win_flush(t, w.win), where + ": MPI_Win_flush");
          if (got == old) {
            seen[which].push_back(old);
            break;
          }
          if (attempt > 100000) {
            check->fail(where + ": compare-and-swap increment never succeeded (last value " + str(got) + ")");
            break;
          }
          old = got;
        }
      }
    }
  }
  sync_ok(MPI_Win_unlock_all(w.win), where + ": MPI_Win_unlock_all");
  PMPI_Barrier(c.comm);
  if (P == 1) {  // both "targets" are rank 0
    seen[0].insert(seen[0].end(), seen[1].begin(), seen[1].end());
    mine[0] += mine[1];
  }
  for (int which = 0; which < 2; ++which) {
    if (which == 1 && P == 1) break;
    const int t = targets[which];
    long total = 0;
    PMPI_Allreduce(&mine[which], &total, 1, MPI_LONG, MPI_SUM, c.comm);
    int count = static_cast<int>(seen[which].size());
    std::vector<int> counts(static_cast<std::size_t>(P)), displs(static_cast<std::size_t>(P));
    PMPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, c.comm);
    int sum = 0;
    for (int r = 0; r < P; ++r) {
      displs[static_cast<std::size_t>(r)] = sum;
      sum += counts[static_cast<std::size_t>(r)];
    }
    std::vector<long> all(static_cast<std::size_t>(std::max(sum, 1)));
    PMPI_Gatherv(seen[which].data(), count, MPI_LONG, all.data(), counts.data(), displs.data(), MPI_LONG, 0, c.comm);
    if (c.rank == 0) {
      all.resize(static_cast<std::size_t>(sum));
      std::sort(all.begin(), all.end());
      const auto dup = std::adjacent_find(all.begin(), all.end());
      check->expect(dup == all.end(), where + ", target " + str(t) + ": two fetches saw the same old value " +
                                          (dup == all.end() ? std::string() : str(*dup)));
      const bool in_range = all.empty() || (all.front() >= kStart && all.back() < kStart + total);
      check->expect(in_range, where + ", target " + str(t) + ": fetched values outside [" + str(kStart) + ", " +
                                  str(kStart + total) + ")");
    }
    if (c.rank == t) {
      sync_ok(MPI_Win_lock(MPI_LOCK_SHARED, c.rank, 0, w.win), where + ": MPI_Win_lock");
      long v = 0;
      std::memcpy(&v, w.base, sizeof v);
      sync_ok(MPI_Win_unlock(c.rank, w.win), where + ": MPI_Win_unlock");
      check->expect(v == kStart + total, where + ", target " + str(t) + ": got " + str(v) + ", expected " +
                                             str(kStart + total) + " (" + str(total) + " increments)");
    }
  }
  PMPI_Barrier(c.comm);
  close_window(w);
}

}  // namespace shim::test::accumulate
