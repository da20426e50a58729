// A pipelined broadcast keeps a bounded number of segments in flight from
// each rank, the root included: a root holds every segment from the start,
// and one that posted them all at once would leave its children holding the
// message in MPI's unexpected queue (and cost a wait over thousands of
// requests per segment). The program defines PMPI_Isend_c, PMPI_Waitany and
// PMPI_Wait itself (exported, so they come before MPICH's for libshim), to
// count the sends shim's relay has posted and not yet completed.
#include <dlfcn.h>
#include <mpi.h>
#include <shim/shim.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "tests/mpi/checker.hpp"

namespace {

std::set<MPI_Request> g_sends;
std::size_t g_most_sends = 0;

template <typename F>
F next_definition(F, const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" int PMPI_Isend_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                            MPI_Request* request) {
  static const auto real = next_definition(&PMPI_Isend_c, "PMPI_Isend_c");
  const int rc = real(buf, count, type, dest, tag, comm, request);
  if (rc == MPI_SUCCESS) {
    g_sends.insert(*request);
    g_most_sends = std::max(g_most_sends, g_sends.size());
  }
  return rc;
}

extern "C" int PMPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  static const auto real = next_definition(&PMPI_Waitany, "PMPI_Waitany");
  const std::vector<MPI_Request> before(requests, requests + count);
  const int rc = real(count, requests, index, status);
  if (*index != MPI_UNDEFINED) g_sends.erase(before[static_cast<std::size_t>(*index)]);
  return rc;
}

extern "C" int PMPI_Wait(MPI_Request* request, MPI_Status* status) {
  static const auto real = next_definition(&PMPI_Wait, "PMPI_Wait");
  g_sends.erase(*request);
  return real(request, status);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  shim::test::Checker check("bcast_sends_in_flight");
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // 1 MiB in 1 KiB segments (SHIM_BCAST_SEGMENT=1K): 1,024 of them. The
  // other ranks come late, so that nothing the root sends is received
  // before it has posted what it may.
  constexpr std::int64_t kBytes = std::int64_t{1} << 20;
  std::vector<unsigned char> buffer(kBytes);
  for (std::int64_t i = 0; i < kBytes; ++i) {
    buffer[static_cast<std::size_t>(i)] = rank == 0 ? static_cast<unsigned char>(i * 7 + i / 251) : 0;
  }
  check.expect_success(shim_set_bcast_algorithm(MPI_COMM_WORLD, SHIM_BCAST_TWOLEVEL), "force two-level");
  shim_counters before{};
  shim_get_bcast_counters(SHIM_BCAST_TWOLEVEL, &before);
  if (rank != 0) usleep(100000);
  g_most_sends = 0;
  check.expect_success(MPI_Bcast(buffer.data(), static_cast<int>(kBytes), MPI_BYTE, 0, MPI_COMM_WORLD), "MPI_Bcast");
  const std::size_t most = g_most_sends;
  shim_counters after{};
  shim_get_bcast_counters(SHIM_BCAST_TWOLEVEL, &after);
  check.expect(after.calls == before.calls + 1, "two-level did not run");
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < kBytes; ++i) {
    wrong += buffer[static_cast<std::size_t>(i)] != static_cast<unsigned char>(i * 7 + i / 251);
  }
  check.expect(wrong == 0, std::to_string(wrong) + " wrong bytes at rank " + std::to_string(rank));
  // Two segments per child of the widest tree (at most size - 1
  // children), and the lowest segment to each child past the limit while
  // only higher segments hold it.
  const std::size_t bound = 3 * static_cast<std::size_t>(size - 1);
  check.expect(most <= bound, "rank " + std::to_string(rank) + " had " + std::to_string(most) +
                                  " segment sends in flight, more than " + std::to_string(bound));
  const int status = check.finish();
  MPI_Finalize();
  return status;
}
