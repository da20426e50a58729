// What every part of accumulate_matrix shares: the checker, this process's
// place in the job (world rank, and the node of every world rank as the test
// derives it itself), the communicators windows are opened on, and the
// statistics the summary reports.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "tests/mpi/checker.hpp"

namespace shim::test::accumulate {

inline Checker* check = nullptr;
inline int world_rank = 0;
inline int world_size = 1;
inline std::vector<int> node_of_world;  // tests/mpi/nodes.hpp

struct Stats {
  long ops[3] = {0, 0, 0};  // by target class
  long elements = 0;        // window elements compared
  long results = 0;         // result elements compared
  long windows = 0;
  long epochs = 0;
  long mpich_defects = 0;  // known MPICH defects on MPICH's own windows
};
inline Stats stats;

inline std::string str(long long v) { return std::to_string(v); }

// A failing call is recorded with its context; a failing synchronisation call
// would leave the other processes waiting, so it ends the job.
inline void ok(int rc, const std::string& where) { check->expect_success(rc, where); }
void sync_ok(int rc, const std::string& where);
[[noreturn]] inline void test_bug(const std::string& what) { check->test_bug(what); }

struct Comm {
  std::string name;
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 0;
  std::vector<int> world;  // world rank of each rank
};
Comm describe_comm(const std::string& name, MPI_Comm comm);

enum TargetClass { kSelf = 0, kSameNode = 1, kRemote = 2 };
const char* class_name(int c);
int target_class(int origin_world, int target_world);

// Whether shim can take owner-computes on a window of `c`: the window is on
// one node, or each of its nodes' server process (the node's lowest world
// rank) is in the group. Otherwise shim documents a native fallback.
bool owner_reachable(const Comm& c);

}  // namespace shim::test::accumulate
