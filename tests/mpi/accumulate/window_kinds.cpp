// Scenario: window kinds and communicators. disp_units equal to the element
// size and different on each rank; sub-communicators (split, reversed);
// odd and empty window sizes, where every rank accumulates into every
// element of every window and no update may land in another rank's memory;
// MPI_Win_create and MPI_Win_allocate_shared windows with and without a
// requested path, and the "auto" path.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "tests/mpi/accumulate/items.hpp"
#include "tests/mpi/accumulate/scenarios.hpp"
#include "tests/mpi/accumulate/synchronisation.hpp"
#include "tests/mpi/accumulate/windows.hpp"

namespace shim::test::accumulate {
namespace {

// A few 8- and 16-byte cases for windows with unusual disp_units.
Case disp_unit_case() {
  Case k;
  k.name = "8- and 16-byte types";
  for (const char* op : {"MPI_SUM", "MPI_REPLACE", "MPI_MAX", "MPI_BXOR", "MPI_NO_OP"})
    for (const char* t : {"MPI_LONG", "MPI_DOUBLE"})
      if (op_named(op).categories & type_named(t).category) k.items.push_back(matrix_item(op_named(op), type_named(t)));
  k.items.push_back(matrix_item(op_named("MPI_MAXLOC"), type_named("MPI_DOUBLE_INT")));
  k.items.push_back(matrix_item(op_named("MPI_PROD"), type_named("MPI_C_DOUBLE_COMPLEX")));
  k.items.push_back(cas_item(type_named("MPI_LONG")));
  k.items.push_back(ordering_item(type_named("MPI_LONG"), false));
  k.items.push_back(derived_item(op_named("MPI_BXOR"), type_named("MPI_LONG")));
  return k;
}

// The subset for other window kinds and communicators.
Case small_case() {
  Case k;
  k.name = "MPI_SUM MPI_INT and program order";
  k.items.push_back(matrix_item(op_named("MPI_SUM"), type_named("MPI_INT")));
  k.items.push_back(matrix_item(op_named("MPI_MAXLOC"), type_named("MPI_DOUBLE_INT")));
  k.items.push_back(cas_item(type_named("MPI_INT")));
  k.items.push_back(ordering_item(type_named("MPI_LONG"), false));
  k.items.push_back(derived_item(op_named("MPI_SUM"), type_named("MPI_INT")));
  return k;
}

}  // namespace

void disp_units(const Comm& world, const std::string& path) {
  // disp_unit = the element size everywhere, then different per rank.
  run_case(world, Creation::Allocate, path, disp_unit_case(), {Sync::LockAll}, uniform(world, 8), "disp_unit 8");
  std::vector<int> du;
  for (int r = 0; r < world.size; ++r) du.push_back(r % 3 == 0 ? 8 : r % 3 == 1 ? 1 : 4);
  run_case(world, Creation::Allocate, path, disp_unit_case(), {Sync::Fence, Sync::Flush}, du,
           "disp_units 8, 1, 4 by rank");
}

void sub_communicators(const std::vector<const Comm*>& comms, const std::string& path) {
  for (const Comm* c : comms)
    run_case(*c, Creation::Allocate, path, small_case(), {Sync::Fence, Sync::LockAll, Sync::Pscw}, uniform(*c, 1),
             "disp_unit 1");
}

// Every rank accumulates into every element of every rank's window, then
// reads all windows back: no update may land in another rank's memory.
// MPICH 4.0.2's own MPI_Win_allocate gets this wrong for sizes that are not
// multiples of the page size (accumulates and gets for rank r reach rank r-1's
// memory), so on windows that may be MPICH's own the mismatches are counted
// and reported, not failed.
void odd_sizes(const Comm& c, const std::string& path) {
  struct Config {
    const char* name;
    std::vector<MPI_Aint> bytes;  // by rank modulo size
    std::vector<int> du;
  };
  const std::vector<Config> configs = {
      {"8 bytes per rank", {8}, {8}},
      {"520 bytes (65 longs) per rank", {520}, {8}},
      {"520, 8 and 0 bytes, disp_units 8 and 1", {520, 8, 0}, {8, 1}},
      {"0 bytes except 520 on every third rank", {0, 0, 520}, {1, 8}},
  };
  const bool lenient = maybe_native(path);
  for (const Config& cfg : configs) {
    std::vector<MPI_Aint> sizes;
    std::vector<int> du;
    for (int r = 0; r < c.size; ++r) {
      sizes.push_back(cfg.bytes[static_cast<std::size_t>(r) % cfg.bytes.size()]);
      du.push_back(cfg.du[static_cast<std::size_t>(r) % cfg.du.size()]);
    }
    Window w = open_window(c, Creation::Allocate, path, sizes, du, std::string("odd sizes: ") + cfg.name);
    ++stats.windows;
    auto n_of = [&](int r) { return static_cast<int>(sizes[static_cast<std::size_t>(r)] / 8); };
    auto init = [&](int r, int i) { return 1000L * (r + 1) + i; };
    const int P = c.size;
    long mismatches = 0;
    auto expect_long = [&](long got, long want, const std::string& where) {
      if (got == want) {
        check->pass();
        return;
      }
      if (mismatches++ < 3 || !lenient) {
        const std::string text = where + ": got " + str(got) + ", expected " + str(want);
        if (lenient) {
          std::fprintf(stderr, "accumulate_matrix: rank %d: (MPICH's own window, not counted) %s\n", world_rank,
                       text.c_str());
        } else {
          check->fail(text);
        }
      }
    };
    for (int round = 0; round < 2; ++round) {
      const bool fence = round == 1;
      const std::string where = w.label + (fence ? ", fence" : ", lock_all");
      // Initial values.
      sync_ok(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, c.rank, 0, w.win), where + ": MPI_Win_lock");
      for (int i = 0; i < n_of(c.rank); ++i) {
        const long v = init(c.rank, i);
        std::memcpy(w.base + 8 * i, &v, 8);
      }
      sync_ok(MPI_Win_unlock(c.rank, w.win), where + ": MPI_Win_unlock");
      PMPI_Barrier(c.comm);
      fence ? sync_ok(MPI_Win_fence(0, w.win), where + ": MPI_Win_fence")
            : sync_ok(MPI_Win_lock_all(0, w.win), where + ": MPI_Win_lock_all");
      std::vector<std::vector<long>> bufs;
      std::vector<long> fetched(static_cast<std::size_t>(P), -1);
      for (int k = 0; k < P; ++k) {
        const int t = (c.rank + k) % P;
        const int n = n_of(t);
        bufs.emplace_back(static_cast<std::size_t>(std::max(n, 1)), static_cast<long>(c.rank + 1));
        const int dut = du[static_cast<std::size_t>(t)];
        ok(MPI_Accumulate(bufs.back().data(), n, MPI_LONG, t, 0, n, MPI_LONG, MPI_SUM, w.win),
           where + ": MPI_Accumulate of " + str(n) + " longs to " + str(t));
        if (n > 0) {
          static const long thousand = 1000000;
          ok(MPI_Fetch_and_op(&thousand, &fetched[static_cast<std::size_t>(t)], MPI_LONG, t, 8L * (n - 1) / dut,
                              MPI_SUM, w.win),
             where + ": MPI_Fetch_and_op on the last element of " + str(t));
        }
        ++stats.ops[target_class(world_rank, c.world[static_cast<std::size_t>(t)])];
      }
      ok(MPI_Accumulate(bufs.back().data(), 1, MPI_LONG, MPI_PROC_NULL, 0, 1, MPI_LONG, MPI_SUM, w.win),
         where + ": MPI_Accumulate to MPI_PROC_NULL");
      fence ? sync_ok(MPI_Win_fence(0, w.win), where + ": MPI_Win_fence")
            : sync_ok(MPI_Win_unlock_all(w.win), where + ": MPI_Win_unlock_all");
      PMPI_Barrier(c.comm);
      const long added = static_cast<long>(P) * (P + 1) / 2;
      auto want = [&](int r, int i) { return init(r, i) + added + (i == n_of(r) - 1 ? 1000000L * P : 0); };
      for (int t = 0; t < P; ++t) {  // fetched values: between the two extremes
        const int n = n_of(t);
        if (n == 0) continue;
        const long lo = init(t, n - 1), hi = want(t, n - 1) - 1000000L;
        const long f = fetched[static_cast<std::size_t>(t)];
        if (!(f >= lo && f <= hi))
          expect_long(f, lo,
                      where + ": MPI_Fetch_and_op on the last element of rank " + str(t) +
                          " fetched a value outside [" + str(lo) + ", " + str(hi) + "]");
        else
          check->pass();
      }
      sync_ok(MPI_Win_lock(MPI_LOCK_SHARED, c.rank, 0, w.win), where + ": MPI_Win_lock");
      for (int i = 0; i < n_of(c.rank); ++i) {
        long v = 0;
        std::memcpy(&v, w.base + 8 * i, 8);
        expect_long(v, want(c.rank, i),
                    where + ", target " + str(c.rank) + " reading element " + str(i) + " of " + str(n_of(c.rank)));
      }
      sync_ok(MPI_Win_unlock(c.rank, w.win), where + ": MPI_Win_unlock");
      // Read every window back, by MPI_Get and by MPI_Get_accumulate(NO_OP).
      sync_ok(MPI_Win_lock_all(0, w.win), where + ": MPI_Win_lock_all");
      for (int t = 0; t < P; ++t) {
        const int n = n_of(t);
        std::vector<long> got(static_cast<std::size_t>(std::max(n, 1)), -1), fetched_all(got.size(), -1);
        ok(MPI_Get(got.data(), n, MPI_LONG, t, 0, n, MPI_LONG, w.win), where + ": MPI_Get");
        ok(MPI_Get_accumulate(nullptr, 0, MPI_LONG, fetched_all.data(), n, MPI_LONG, t, 0, n, MPI_LONG, MPI_NO_OP,
                              w.win),
           where + ": MPI_Get_accumulate(MPI_NO_OP)");
        sync_ok(MPI_Win_flush(t, w.win), where + ": MPI_Win_flush");
        for (int i = 0; i < n; ++i) {
          const std::string at = where + ", rank " + str(c.rank) + " reading element " + str(i) + " of rank " + str(t) +
                                 " (" + class_name(target_class(world_rank, c.world[static_cast<std::size_t>(t)])) +
                                 ") ";
          expect_long(got[static_cast<std::size_t>(i)], want(t, i), at + "with MPI_Get");
          expect_long(fetched_all[static_cast<std::size_t>(i)], want(t, i), at + "with MPI_Get_accumulate(MPI_NO_OP)");
        }
      }
      sync_ok(MPI_Win_unlock_all(w.win), where + ": MPI_Win_unlock_all");
      PMPI_Barrier(c.comm);
    }
    long total = 0;
    PMPI_Allreduce(&mismatches, &total, 1, MPI_LONG, MPI_SUM, c.comm);
    if (lenient) stats.mpich_defects += mismatches;
    if (lenient && total > 0 && c.rank == 0) {
      std::printf(
          "accumulate_matrix: %s: %ld mismatches on a window MPICH may have allocated itself (MPICH 4.0.2 "
          "MPI_Win_allocate defect; not counted)\n",
          w.label.c_str(), total);
      std::fflush(stdout);
    }
    close_window(w);
  }
}

void other_window_kinds(const Comm& world, const Comm& shm) {
  // With no info key and with a path requested.
  for (const std::string& path : std::vector<std::string>{"", "owner"}) {
    run_case(world, Creation::Create, path, small_case(), {Sync::Fence, Sync::LockAll, Sync::WinSync},
             uniform(world, 1), "disp_unit 1");
    run_case(shm, Creation::AllocateShared, path, small_case(), {Sync::Fence, Sync::LockAll, Sync::WinSync},
             uniform(shm, 1), "disp_unit 1");
  }
  run_case(world, Creation::Allocate, "auto", small_case(), {Sync::LockAll}, uniform(world, 1), "disp_unit 1");
  odd_sizes(world, "auto");
}

}  // namespace shim::test::accumulate
