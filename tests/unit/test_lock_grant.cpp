#include <catch2/catch.hpp>

#include "rma/lock_grant.hpp"

using shim::rma::locks_held_on_return;

TEST_CASE("locks held on return: MPICH's ch4 device only", "[lock_grant]") {
  // MPI_Get_library_version's text from Debian's MPICH 4.0.2, shortened.
  CHECK(
      locks_held_on_return("MPICH Version:\t4.0.2\nMPICH Release date:\tThu Apr  7 2022\n"
                           "MPICH Device:\tch4:ucx\nMPICH configure:\t--with-device=ch4:ucx\n"));
  CHECK(locks_held_on_return("MPICH Device:    ch4:ofi\n"));
  CHECK_FALSE(
      locks_held_on_return("MPICH Version:\t3.4.3\nMPICH Device:\tch3:nemesis\n"
                           "MPICH configure:\t--with-device=ch4:ucx\n"));
  CHECK_FALSE(locks_held_on_return("Open MPI v4.1.4, package: Debian OpenMPI"));
  CHECK_FALSE(locks_held_on_return("MPICH Device:"));
  CHECK_FALSE(locks_held_on_return(""));
}
