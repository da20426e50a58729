// A minimal checker for MPI test programs: each rank records failures, the
// first few are printed with the rank, and the verdict is agreed with PMPI
// collectives so every rank exits with the same status.
#pragma once

#include <mpi.h>

#include <cstdio>
#include <string>

namespace shim::test {

class MpiCheck {
 public:
  explicit MpiCheck(const char* program) : program_(program) { PMPI_Comm_rank(MPI_COMM_WORLD, &rank_); }

  void fail(const std::string& what) {
    if (failures_++ < kPrinted) std::fprintf(stderr, "%s: rank %d: FAIL %s\n", program_, rank_, what.c_str());
  }
  void expect(bool ok, const std::string& what) {
    ++checks_;
    if (!ok) fail(what);
  }

  // Collective over MPI_COMM_WORLD. Returns the exit status for main().
  int finish() {
    long counts[2] = {checks_, failures_};
    long totals[2] = {0, 0};
    PMPI_Allreduce(counts, totals, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank_ == 0) {
      std::printf("%s: %ld checks, %ld failures\n", program_, totals[0], totals[1]);
      std::fflush(stdout);
    }
    // A program that checked nothing proves nothing.
    return totals[1] == 0 && totals[0] > 0 ? 0 : 1;
  }

 private:
  static constexpr long kPrinted = 12;
  const char* program_;
  int rank_ = 0;
  long checks_ = 0;
  long failures_ = 0;
};

}  // namespace shim::test
