// One epoch of a case on a window: each origin issues its plan, checks every
// fetched result against its own model of the target (results only ever come
// from elements no other origin touches), and each target checks its whole
// window, element by element and every guard byte, against a model that
// replays all origins' plans. When each step happens under each
// synchronisation mode is run_epoch() (synchronisation.hpp).
#pragma once

#include <mpi.h>

#include <deque>
#include <string>
#include <vector>

#include "tests/mpi/accumulate/job.hpp"
#include "tests/mpi/accumulate/model.hpp"
#include "tests/mpi/accumulate/plan.hpp"
#include "tests/mpi/accumulate/windows.hpp"

namespace shim::test::accumulate {

enum class Sync { Fence, Pscw, LockShared, LockExclusive, LockAll, Flush, FlushLocal, WinSync };
const char* sync_name(Sync s);
// Passive target: lock, lock_all and their flushes.
bool passive(Sync s);

// A call as issued, with its buffers and the old values the origin's model
// expects it to fetch.
struct Issued {
  RmaOp op;
  int target = 0;  // in the window's communicator
  std::vector<unsigned char> obuf, rbuf, cbuf;
  std::vector<std::vector<unsigned char>> expected_old;
  MPI_Request request = MPI_REQUEST_NULL;
  bool results_checked = false;
};

class Epoch {
 public:
  // Every process models every target's window as the case initialises it.
  Epoch(Window& w, const Case& k, Sync sync, int variant_base);

  const std::string& where() const { return where_; }
  // This origin's targets, itself first.
  std::vector<int> targets() const;
  // Each process writes its window's initial contents, then all meet.
  void initialise_memory();
  // Issues this origin's plan for target t.
  void issue_all(int t);
  // Request-based calls: wait, then check the results and reuse the origin
  // buffer at once (completion of the request is local completion).
  void wait_requests(int t);
  // Results of the calls issued to t (or to every target), once complete.
  void check_results(int t);
  void check_results_all();
  // Overwrites the origin buffers of the calls issued to t: after local
  // completion they are the caller's again.
  void scribble(int t);
  // MPI_Get of what only this origin wrote at t; compared with the origin's
  // model, which knows those elements exactly.
  void get_back(int t);
  // Compares target t's window, read at `mem`, with its final model.
  void verify(const unsigned char* mem, int t, const std::string& where);
  void verify_own();
  // verify_own() inside a shared lock of its own window.
  void verify_own_locked();
  // In a shared-memory window: the node neighbours' windows, by load.
  void verify_neighbours();

 private:
  std::string target_where(int t) const;
  void issue(RmaOp op, int t);
  void check_result(Issued& x);

  Window& w_;
  const Case& k_;
  Sync sync_;
  int variant_base_;
  const Comm& c_;
  bool excuse_6083_;  // MPICH does this window's operations
  std::string where_;
  std::vector<Model> models_;  // the origin's view of each target
  std::deque<Issued> issued_;
};

}  // namespace shim::test::accumulate
