#include "tests/mpi/checker.hpp"

#include <cstdlib>
#include <utility>

namespace shim::test {

Checker::Checker(std::string program) : program_(std::move(program)) { PMPI_Comm_rank(MPI_COMM_WORLD, &rank_); }

void Checker::fail(const std::string& what) {
  ++checks_;
  ++failures_;
  note(what);
}

void Checker::expect_success(int rc, const std::string& where) {
  if (rc == MPI_SUCCESS) {
    pass();
    return;
  }
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  PMPI_Error_string(rc, text, &length);
  fail(where + ": returned " + std::to_string(rc) + " (" + text + ")");
}

void Checker::test_bug(const std::string& what) const {
  std::fprintf(stderr, "%s: rank %d: test program error: %s\n", program_.c_str(), rank_, what.c_str());
  PMPI_Abort(MPI_COMM_WORLD, 3);
  std::abort();
}

void Checker::note(const std::string& what) {
  const int seen = kinds_[what.substr(0, what.find(": "))]++;
  if (printed_ < kPrinted || (seen < 2 && printed_ < kPrintedAtMost)) {
    ++printed_;
    std::fprintf(stderr, "%s: rank %d: FAIL %s\n", program_.c_str(), rank_, what.c_str());
    std::fflush(stderr);
  }
}

int Checker::finish(const std::string& summary) {
  long counts[2] = {checks_, failures_};
  long totals[2] = {0, 0};
  PMPI_Allreduce(counts, totals, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) {
    if (!summary.empty()) std::printf("%s: %s\n", program_.c_str(), summary.c_str());
    std::printf("%s: %ld checks, %ld failures\n", program_.c_str(), totals[0], totals[1]);
    std::fflush(stdout);
  }
  return totals[1] == 0 && totals[0] > 0 ? 0 : 1;
}

int error_class(int rc) {
  int cls = rc;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  return cls;
}

}  // namespace shim::test
