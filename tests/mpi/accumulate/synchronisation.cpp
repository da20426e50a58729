// Scenario: synchronisation modes. Each mode opens and closes its epoch its
// own way and the checks come where that mode makes results and target
// memory defined: fence, post/start/complete/wait, shared and exclusive
// locks per target, lock_all, flush and flush_local (per target on even
// ranks, all at once on odd ones, then read back with MPI_Get, or origin
// buffers overwritten), and MPI_Win_sync with loads inside the epoch. The
// whole matrix (every operation with every type, compare-and-swap, program
// order, derived types, count 0, MPI_PROC_NULL) runs under fence and
// lock_all, and a share of it under each other mode.
#include "tests/mpi/accumulate/synchronisation.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "tests/mpi/accumulate/items.hpp"
#include "tests/mpi/accumulate/scenarios.hpp"

namespace shim::test::accumulate {
namespace {

void run_epoch(Window& w, const Case& k, Sync sync, int variant_base) {
  Epoch e(w, k, sync, variant_base);
  const Comm& c = *w.c;
  const std::string& where = e.where();
  e.initialise_memory();
  switch (sync) {
    case Sync::Fence: {
      sync_ok(MPI_Win_fence(0, w.win), where + ": opening MPI_Win_fence");
      for (int t : e.targets()) e.issue_all(t);
      sync_ok(MPI_Win_fence(0, w.win), where + ": closing MPI_Win_fence");
      e.check_results_all();
      e.verify_own();
      break;
    }
    case Sync::Pscw: {
      MPI_Group world_group, group;
      PMPI_Comm_group(c.comm, &world_group);
      group = world_group;
      sync_ok(MPI_Win_post(group, 0, w.win), where + ": MPI_Win_post");
      sync_ok(MPI_Win_start(group, 0, w.win), where + ": MPI_Win_start");
      for (int t : e.targets()) e.issue_all(t);
      sync_ok(MPI_Win_complete(w.win), where + ": MPI_Win_complete");
      e.check_results_all();
      sync_ok(MPI_Win_wait(w.win), where + ": MPI_Win_wait");
      PMPI_Group_free(&world_group);
      e.verify_own();
      break;
    }
    case Sync::LockShared:
    case Sync::LockExclusive: {
      const int type = sync == Sync::LockShared ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE;
      for (int t : e.targets()) {
        sync_ok(MPI_Win_lock(type, t, 0, w.win), where + ": MPI_Win_lock " + str(t));
        e.issue_all(t);
        e.wait_requests(t);
        sync_ok(MPI_Win_unlock(t, w.win), where + ": MPI_Win_unlock " + str(t));
        e.check_results(t);
      }
      PMPI_Barrier(c.comm);
      e.verify_own_locked();
      break;
    }
    case Sync::LockAll: {
      sync_ok(MPI_Win_lock_all(0, w.win), where + ": MPI_Win_lock_all");
      for (int t : e.targets()) {
        e.issue_all(t);
        e.wait_requests(t);
      }
      sync_ok(MPI_Win_unlock_all(w.win), where + ": MPI_Win_unlock_all");
      e.check_results_all();
      PMPI_Barrier(c.comm);
      e.verify_own_locked();
      break;
    }
    case Sync::Flush:
    case Sync::FlushLocal: {
      // Even ranks flush each target as they go, odd ones all at the end.
      // After a flush, read back with MPI_Get what only they wrote, in
      // the epoch; after local completion the origin buffers are the
      // caller's again: overwrite them, and the targets must not see it.
      const bool local = sync == Sync::FlushLocal;
      const std::string flush_name = local ? "MPI_Win_flush_local" : "MPI_Win_flush";
      auto after_flush = [&](int t) {
        if (local) {
          e.scribble(t);
        } else {
          e.get_back(t);
        }
      };
      sync_ok(MPI_Win_lock_all(0, w.win), where + ": MPI_Win_lock_all");
      const bool each = c.rank % 2 == 0;
      for (int t : e.targets()) {
        e.issue_all(t);
        e.wait_requests(t);
        if (each) {
          sync_ok(local ? MPI_Win_flush_local(t, w.win) : MPI_Win_flush(t, w.win),
                  where + ": " + flush_name + " " + str(t));
          e.check_results(t);
          after_flush(t);
        }
      }
      if (!each) {
        sync_ok(local ? MPI_Win_flush_local_all(w.win) : MPI_Win_flush_all(w.win), where + ": " + flush_name + "_all");
        e.check_results_all();
        for (int t : e.targets()) after_flush(t);
      }
      sync_ok(MPI_Win_unlock_all(w.win), where + ": MPI_Win_unlock_all");
      PMPI_Barrier(c.comm);
      e.verify_own_locked();
      break;
    }
    case Sync::WinSync: {
      // The target reads its memory (and, in shared windows, its node
      // neighbours' memory) with loads after flush_all, a barrier and
      // MPI_Win_sync, inside the epoch.
      sync_ok(MPI_Win_lock_all(0, w.win), where + ": MPI_Win_lock_all");
      for (int t : e.targets()) {
        e.issue_all(t);
        e.wait_requests(t);
      }
      sync_ok(MPI_Win_flush_all(w.win), where + ": MPI_Win_flush_all");
      e.check_results_all();
      PMPI_Barrier(c.comm);
      sync_ok(MPI_Win_sync(w.win), where + ": MPI_Win_sync");
      e.verify(w.base, c.rank, where + ", target " + str(c.rank) + " reading its window in the epoch");
      if (w.how == Creation::AllocateShared) e.verify_neighbours();
      PMPI_Barrier(c.comm);
      sync_ok(MPI_Win_unlock_all(w.win), where + ": MPI_Win_unlock_all");
      PMPI_Barrier(c.comm);
      e.verify_own_locked();
      break;
    }
  }
  PMPI_Barrier(c.comm);
  ++stats.epochs;
}

// Everything: every operation with every type it allows, every
// compare-and-swap type, program order, derived types, count 0 and
// MPI_PROC_NULL. `slice`/`of` keeps one combination in `of` (for the epochs
// that run a share of the matrix), and a share of the rest.
Case full_case(int slice, int of) {
  Case k;
  k.name = of == 1 ? "full matrix" : "matrix slice " + str(slice) + "/" + str(of);
  add_op_type_items(k, slice, of);
  k.items.push_back(ordering_item(type_named(slice % 2 ? "MPI_DOUBLE" : "MPI_LONG"), false));
  k.items.push_back(ordering_item(type_named("MPI_INT"), true));
  add_derived_items(k, slice, of);
  k.items.push_back(empty_item());
  return k;
}

}  // namespace

void run_cases(const Comm& c, Creation how, const std::string& path, std::vector<Case>& cases,
               const std::vector<std::vector<Sync>>& syncs, const std::vector<int>& disp_units,
               const std::string& what) {
  MPI_Aint needed = 0;
  for (Case& k : cases) {
    k.sparse = light(path);
    if (k.sparse) k.name += " (sparse)";
    place(k, c.size);
    needed = std::max(needed, k.bytes);
  }
  const MPI_Aint bytes = window_bytes(needed, path, how);
  Window w = open_window(c, how, path, std::vector<MPI_Aint>(static_cast<std::size_t>(c.size), bytes), disp_units,
                         what + ", " + str(bytes) + " bytes per rank");
  ++stats.windows;
  for (std::size_t n = 0; n < cases.size(); ++n) {
    for (Sync s : syncs[n]) {
      const auto start = std::chrono::steady_clock::now();
      run_epoch(w, cases[n], s, static_cast<int>(s) * 5 + path_index(path));
      if (std::getenv("ACCUMULATE_MATRIX_TIMES") && c.rank == 0 && c.world[0] == 0)
        std::printf("accumulate_matrix:   %.2f s  %s, %s, %s\n",
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), w.label.c_str(),
                    cases[n].name.c_str(), sync_name(s));
    }
  }
  close_window(w);
}

void run_case(const Comm& c, Creation how, const std::string& path, Case&& k, const std::vector<Sync>& syncs,
              const std::vector<int>& disp_units, const std::string& what) {
  std::vector<Case> cases;
  cases.push_back(std::move(k));
  run_cases(c, how, path, cases, {syncs}, disp_units, what);
}

void matrix_under_every_synchronisation(const Comm& world, const std::string& path) {
  const bool full = std::getenv("ACCUMULATE_MATRIX_FULL") != nullptr;
  // The whole matrix under fence and lock_all, and a different share of it
  // under each other synchronisation, one share after the other in one
  // window (all of it under every synchronisation with
  // ACCUMULATE_MATRIX_FULL). Caller-computes, which is slow, runs only the
  // shares, sparse, with fence among them: every combination once.
  std::vector<Sync> others = {Sync::LockShared, Sync::LockExclusive, Sync::Flush,
                              Sync::FlushLocal, Sync::Pscw,          Sync::WinSync};
  if (light(path)) {
    others.push_back(Sync::Fence);
  } else {
    run_case(world, Creation::Allocate, path, full_case(0, 1), {Sync::Fence, Sync::LockAll}, uniform(world, 1),
             "disp_unit 1");
  }
  const int shares = full ? 1 : static_cast<int>(others.size());
  std::vector<Case> cases;
  std::vector<std::vector<Sync>> syncs;
  for (int s = 0; s < shares; ++s) {
    cases.push_back(full_case(s, shares));
    if (full) {
      syncs.push_back(others);
    } else {  // each share sees another synchronisation on each path
      syncs.push_back({others[static_cast<std::size_t>((s + path_index(path)) % others.size())]});
    }
  }
  run_cases(world, Creation::Allocate, path, cases, syncs, uniform(world, 1), "disp_unit 1");
}

}  // namespace shim::test::accumulate
