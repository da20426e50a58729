// A plan: what each origin does to each target in one epoch. A case is a
// list of items; each item lays out its blocks in every window (with guard
// bytes after each), gives their initial values, and plans the operations an
// origin issues to a target. Every process derives the same plan, so each
// can model any target's window (model.hpp).
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/mpi/accumulate/model.hpp"
#include "tests/mpi/accumulate/operations.hpp"

namespace shim::test::accumulate {

constexpr MPI_Aint kGuard = 16;  // guard bytes after every block
inline MPI_Aint aligned(MPI_Aint x) { return (x + 15) / 16 * 16; }

struct Cursor {
  MPI_Aint at = 0;
  MPI_Aint take(MPI_Aint bytes) {
    at = aligned(at);
    const MPI_Aint here = at;
    at += bytes + kGuard;
    return here;
  }
};

struct PlanContext {
  int P = 1;        // processes in the window's communicator
  int o = 0;        // origin
  int t = 0;        // target
  int variant = 0;  // picks among the flavours of a call
  bool passive = false;
};

class Item {
 public:
  virtual ~Item() = default;
  // Lays out the item's blocks from `cursor` for P processes.
  virtual void place(Cursor& cursor, int P) = 0;
  virtual void init(Model& m, int P, int t) const = 0;
  virtual void plan(std::vector<RmaOp>& out, const PlanContext& x) const = 0;
  // Planned for every target even in a sparse case.
  virtual bool always() const { return false; }
};

struct Case {
  std::string name;
  std::vector<std::unique_ptr<Item>> items;
  MPI_Aint bytes = 0;  // per rank, as the items need
  int P = 0;
  // Sparse: each origin plans item n for one target only, (origin + n +
  // epoch's variant) mod P, so a slow path does a P-th of the calls and
  // still meets every target class across items and epochs.
  bool sparse = false;
};

// Lays out k's items for P processes.
void place(Case& k, int P);
std::vector<RmaOp> plan_of(const Case& k, int o, int t, int variant_base, bool is_passive);
// What target t holds before the epoch.
void init_model(const Case& k, Model& m, MPI_Aint window_bytes, int t);
// What target t holds after every origin's plan.
void final_model(const Case& k, Model& m, MPI_Aint window_bytes, int t, int variant_base, bool is_passive);

}  // namespace shim::test::accumulate
