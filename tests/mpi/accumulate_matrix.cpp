// The MPI accumulate family (MPI_Accumulate, MPI_Get_accumulate,
// MPI_Fetch_and_op, MPI_Compare_and_swap, MPI_Raccumulate,
// MPI_Rget_accumulate and the _c variants) on windows of every accumulate
// path shim offers (info key "shim_accumulate" = owner, caller, native),
// checked against values this program computes itself with plain C++
// arithmetic (never with MPI): every predefined operation with the types MPI
// allows for it; fence, PSCW, shared and exclusive locks, lock_all, flush,
// flush_local and MPI_Win_sync epochs; self, same-node and remote targets;
// derived origin, target and result datatypes, count 0 and MPI_PROC_NULL;
// per-rank disp_units; odd and empty window sizes (MPICH 4.0.2's own
// MPI_Win_allocate misplaces these); contention with exact sums and unique
// fetch results; program order of one origin's accumulates to one element;
// MPI_Win_allocate_shared and MPI_Win_create windows; sub-communicators.
//
// How: every process derives the same plan, a list of operations from each
// origin to each target. The origin issues its operations and checks their
// results against a model of the target that it updates with its own
// operations (results only ever come from elements no other origin touches).
// The target checks its whole window, element by element and every guard byte
// between blocks, against a model that replays all origins' plans.
// The oracle (elements, datatypes, operations, model, plan, epoch) is in
// accumulate/; so are the scenarios: ops_and_types, derived_types,
// ordering_and_contention, synchronisation and window_kinds.
//
// Known MPICH 4.0.2 defects are reported, not failed, on windows whose
// operations MPICH performs itself (path "native", or a libshim without
// shim_win_accumulate_path): MPI_MAX/MPI_MIN compare unsigned integers as
// signed (pmodels/mpich#6083), and MPI_Win_allocate misplaces accesses to
// other ranks when a rank's size is not a multiple of the page size. Windows
// on the owner and caller paths must get both right.
//
// Environment: ACCUMULATE_MATRIX_PATHS=owner,caller,native (a subset),
// ACCUMULATE_MATRIX_FULL=1 (the whole matrix under every synchronisation, and
// no sparse plans for caller-computes), ACCUMULATE_MATRIX_TIMES=1 (timings).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/mpi/accumulate/datatypes.hpp"
#include "tests/mpi/accumulate/job.hpp"
#include "tests/mpi/accumulate/scenarios.hpp"
#include "tests/mpi/accumulate/windows.hpp"
#include "tests/mpi/checker.hpp"
#include "tests/mpi/nodes.hpp"

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

int main(int argc, char** argv) {
  using namespace shim::test::accumulate;
  MPI_Init(&argc, &argv);
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
  shim::test::Checker checker("accumulate_matrix");
  check = &checker;
  make_types();
  node_of_world = shim::test::node_of_world_ranks();
  const bool times = std::getenv("ACCUMULATE_MATRIX_TIMES") != nullptr;
  double t0 = now();
  auto phase = [&](const std::string& name) {
    if (times && world_rank == 0) {
      std::printf("accumulate_matrix: %-40s %.2f s\n", name.c_str(), now() - t0);
      std::fflush(stdout);
    }
    t0 = now();
  };

  Comm world = describe_comm("MPI_COMM_WORLD", MPI_COMM_WORLD);
  MPI_Comm split_comm, reversed_comm, shm_comm;
  PMPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &split_comm);
  PMPI_Comm_split(MPI_COMM_WORLD, 0, world_size - world_rank, &reversed_comm);
  PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm_comm);
  Comm split = describe_comm(world_rank % 2 ? "odd world ranks" : "even world ranks", split_comm);
  Comm reversed = describe_comm("world in reverse order", reversed_comm);
  Comm shm = describe_comm("MPI_COMM_TYPE_SHARED", shm_comm);

  for (const std::string& path : paths()) {
    matrix_under_every_synchronisation(world, path);
    phase("matrix, path " + path);
    disp_units(world, path);
    phase("disp_units, path " + path);
    sub_communicators({&split, &reversed}, path);
    phase("sub-communicators, path " + path);
    odd_sizes(world, path);
    phase("odd sizes, path " + path);
    contention(world, path);
    mixed_increments(world, path);
    phase("contention, path " + path);
  }
  other_window_kinds(world, shm);
  phase("other window kinds");

  long ops[3], total_ops[3];
  for (int i = 0; i < 3; ++i) ops[i] = stats.ops[i];
  PMPI_Allreduce(ops, total_ops, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  long extra[3] = {stats.elements, stats.results, stats.mpich_defects}, total_extra[3];
  PMPI_Allreduce(extra, total_extra, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  int nodes = *std::max_element(node_of_world.begin(), node_of_world.end()) + 1;
  std::string path_list;
  for (const auto& p : paths()) path_list += (path_list.empty() ? "" : "/") + p;
  std::string summary = "np=" + str(world_size) + " nodes=" + str(nodes) + ", paths " + path_list +
                        (path_query() ? "" : " (no shim_win_accumulate_path: all windows native)") + ": " +
                        str(total_ops[0] + total_ops[1] + total_ops[2]) + " calls (self " + str(total_ops[0]) +
                        ", same-node " + str(total_ops[1]) + ", remote " + str(total_ops[2]) + "), " +
                        str(total_extra[0]) + " window elements and " + str(total_extra[1]) +
                        " result elements compared, " + str(stats.windows) + " windows, " + str(stats.epochs) +
                        " epochs per rank";
  if (total_extra[2] > 0)
    summary += "; " + str(total_extra[2]) +
               " mismatches from known MPICH 4.0.2 defects (#6083 unsigned MAX/MIN, odd MPI_Win_allocate sizes) "
               "on windows MPICH handles itself, not counted";

  free_layouts();
  PMPI_Comm_free(&split_comm);
  PMPI_Comm_free(&reversed_comm);
  PMPI_Comm_free(&shm_comm);
  const int status = checker.finish(summary);
  MPI_Finalize();
  return status;
}
