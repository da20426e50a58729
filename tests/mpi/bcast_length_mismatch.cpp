// MPI_Bcast where the root's count and the others' differ is erroneous, and
// MPICH reports it: MPI_ERR_TRUNCATE where a rank's buffer is the shorter,
// MPI_ERR_OTHER where it is the longer and at the ranks below one that
// noticed, instead of returning success or waiting for data that never
// comes. shim's trees must report it too, at every rank but the root, and
// the job must go on (a barrier after each case, and a correct broadcast
// where both counts are cut into the same segments).
// MPICH's errors/coll/bcastlength (1 and 10 ints) failed under shim: the
// non-root ranks returned MPI_SUCCESS with 4 of their 40 bytes written.
// Cases: short and long, unsegmented and in segments of different counts;
// each on ECO and two-level trees (the suite runs it with fan-out 2 and
// with chains, SHIM_BCAST_K=1), with
// MPI_ERRORS_RETURN; the classes are compared with MPICH's own broadcast on
// the same ranks, where MPICH's are sure (a rank whose buffer is the
// shorter: MPI_ERR_TRUNCATE or MPI_ERR_OTHER, depending on the tree).
#include <mpi.h>

#include <algorithm>
#include <string>
#include <vector>

#include "include/shim/shim.h"
#include "tests/mpi/checker.hpp"

using shim::test::error_class;

namespace {

struct Tree {
  const char* name;
  shim_bcast_algorithm algorithm;
};

// Every rank's class for one broadcast of `root_count` ints from rank 0,
// the others passing `other_count`.
int mismatched_bcast(MPI_Comm comm, int rank, int root_count, int other_count, bool native) {
  std::vector<int> buffer(static_cast<std::size_t>(std::max(root_count, other_count)), rank == 0 ? 7 : 0);
  const int count = rank == 0 ? root_count : other_count;
  return error_class(native ? PMPI_Bcast(buffer.data(), count, MPI_INT, 0, comm)
                            : MPI_Bcast(buffer.data(), count, MPI_INT, 0, comm));
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  shim::test::Checker check("bcast_length_mismatch");
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // MPICH 4.0.2 raises an error that completes a request (a truncated
  // receive in shim's relay) on MPI_COMM_WORLD's handler, whatever the
  // request's communicator: as MPICH's own bcastlength does, the test
  // returns errors there too (README, "Known limits").
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

  // {root's count, the others', whether both are cut into the same
  // segments} in ints: 4 B against 40 B (MPICH's bcastlength), messages of
  // several segments (4 KiB up to 16 KiB, 8 KiB beyond) that differ in the
  // last one, and ones cut into different segments where the others expect
  // no more segments than the root sends (where they expect more, shim's
  // broadcast waits for them: README, "Known limits").
  struct Case {
    int root_count;
    int other_count;
    bool same_segments;
  };
  const std::vector<Case> cases = {
      {1, 10, true},          {10, 1, true},       {4000, 4001, true},  {4001, 4000, true},  {200000, 200001, true},
      {200001, 200000, true}, {4096, 4097, false}, {4097, 4096, false}, {4000, 5000, false}, {5000, 4000, false}};
  const Tree trees[] = {{"two-level", SHIM_BCAST_TWOLEVEL}, {"ECO (one subnet)", SHIM_BCAST_ECO}};

  for (const Tree& tree : trees) {
    for (const Case& c : cases) {
      const std::string where = std::string(tree.name) + ", root " + std::to_string(c.root_count) + " ints, others " +
                                std::to_string(c.other_count) + ", rank " + std::to_string(rank);
      // A communicator per case: segments of another cut that nobody
      // received stay behind on it (README, "Known limits").
      MPI_Comm comm = MPI_COMM_NULL, native = MPI_COMM_NULL;
      MPI_Comm_dup(MPI_COMM_WORLD, &comm);
      MPI_Comm_dup(MPI_COMM_WORLD, &native);
      check.expect(shim_set_bcast_algorithm(comm, tree.algorithm) == MPI_SUCCESS, where + ": forcing the tree");
      const int mpich = mismatched_bcast(native, rank, c.root_count, c.other_count, true);
      const int got = mismatched_bcast(comm, rank, c.root_count, c.other_count, false);
      if (rank == 0) {
        check.expect(got == MPI_SUCCESS, where + ": the root has nothing to notice, got class " + std::to_string(got));
      } else if (c.other_count > c.root_count) {
        check.expect(got == MPI_ERR_OTHER && mpich == MPI_ERR_OTHER,
                     where + ": a longer buffer is MPI_ERR_OTHER, got class " + std::to_string(got) + ", MPICH " +
                         std::to_string(mpich));
      } else {
        check.expect(
            (got == MPI_ERR_TRUNCATE || got == MPI_ERR_OTHER) && (mpich == MPI_ERR_TRUNCATE || mpich == MPI_ERR_OTHER),
            where + ": a shorter buffer is MPI_ERR_TRUNCATE, or MPI_ERR_OTHER below one, got class " +
                std::to_string(got) + ", MPICH " + std::to_string(mpich));
      }
      check.expect(MPI_Barrier(comm) == MPI_SUCCESS, where + ": barrier after it");
      if (c.same_segments) {
        // Nothing stayed behind: a correct broadcast delivers every element.
        std::vector<int> values(static_cast<std::size_t>(c.other_count));
        for (std::size_t i = 0; i < values.size(); ++i) values[i] = rank == 0 ? static_cast<int>(3 * i + 1) : -1;
        check.expect(MPI_Bcast(values.data(), c.other_count, MPI_INT, 0, comm) == MPI_SUCCESS,
                     where + ": a matched broadcast after it");
        check.expect_elements(
            values.size(), [&](std::size_t i) { return values[i] == static_cast<int>(3 * i + 1); },
            [&](std::size_t i) { return "element " + std::to_string(i) + " is " + std::to_string(values[i]); },
            where + ": the matched broadcast after it");
      }
      MPI_Comm_free(&comm);
      MPI_Comm_free(&native);
    }
  }

  const int status = check.finish();
  MPI_Finalize();
  return status;
}
