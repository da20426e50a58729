// The accumulate family from and into MPI_BOTTOM: origin and result buffers
// described by datatypes of absolute addresses (scattered elements, as
// ARMCI-MPI's direct IOV method builds them), on native, caller and owner
// windows. Every target element and every result element is compared with
// the value computed here; the holes between result elements keep their
// bytes.
#include <mpi.h>

#include <string>
#include <vector>

#include "tests/mpi/checker.hpp"

namespace {

constexpr int kRun = 16;           // elements per operation
constexpr int kWindow = 4 * kRun;  // accumulate, get_accumulate, raccumulate, rget_accumulate
constexpr long kHole = -7;

shim::test::Checker* check = nullptr;

long initial(int rank, int i) { return 1000L * rank + i; }
long operand(int origin, int i) { return 100000L * (origin + 1) + 3L * i; }

// Every other element of `buffer`, first to last, as one element of
// absolute addresses.
MPI_Datatype every_other(const std::vector<long>& buffer) {
  std::vector<int> lengths(kRun, 1);
  std::vector<MPI_Aint> addresses(kRun);
  for (int i = 0; i < kRun; ++i) MPI_Get_address(&buffer[static_cast<std::size_t>(2 * i)], &addresses[i]);
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Type_create_hindexed(kRun, lengths.data(), addresses.data(), MPI_LONG, &type);
  MPI_Type_commit(&type);
  return type;
}

void run_path(const char* path, int rank, int size) {
  MPI_Info info = MPI_INFO_NULL;
  MPI_Info_create(&info);
  MPI_Info_set(info, "shim_accumulate", path);
  long* base = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  MPI_Win_allocate(kWindow * sizeof(long), sizeof(long), info, MPI_COMM_WORLD, &base, &win);
  MPI_Info_free(&info);
  for (int i = 0; i < kWindow; ++i) base[i] = initial(rank, i);

  std::vector<long> origin(2 * kRun, kHole), result(2 * kRun, kHole), rresult(2 * kRun, kHole);
  for (int i = 0; i < kRun; ++i) origin[static_cast<std::size_t>(2 * i)] = operand(rank, i);
  MPI_Datatype origin_type = every_other(origin), result_type = every_other(result),
               rresult_type = every_other(rresult);

  const int target = (rank + 1) % size;
  const std::string where = std::string(path) + " window, rank " + std::to_string(rank);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock_all(0, win);
  check->expect_success(MPI_Accumulate(MPI_BOTTOM, 1, origin_type, target, 0, kRun, MPI_LONG, MPI_SUM, win),
                        where + ": MPI_Accumulate from MPI_BOTTOM");
  check->expect_success(MPI_Get_accumulate(MPI_BOTTOM, 1, origin_type, MPI_BOTTOM, 1, result_type, target, kRun, kRun,
                                           MPI_LONG, MPI_SUM, win),
                        where + ": MPI_Get_accumulate from and into MPI_BOTTOM");
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  check->expect_success(
      MPI_Raccumulate(MPI_BOTTOM, 1, origin_type, target, 2 * kRun, kRun, MPI_LONG, MPI_SUM, win, &requests[0]),
      where + ": MPI_Raccumulate from MPI_BOTTOM");
  check->expect_success(MPI_Rget_accumulate(MPI_BOTTOM, 1, origin_type, MPI_BOTTOM, 1, rresult_type, target, 3 * kRun,
                                            kRun, MPI_LONG, MPI_SUM, win, &requests[1]),
                        where + ": MPI_Rget_accumulate from and into MPI_BOTTOM");
  MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);

  const int from = (rank + size - 1) % size;
  check->expect_elements(
      kWindow, [&](std::size_t k) { return base[k] == initial(rank, static_cast<int>(k)) + operand(from, k % kRun); },
      [&](std::size_t k) {
        return "element " + std::to_string(k) + " is " + std::to_string(base[k]) + ", expected " +
               std::to_string(initial(rank, static_cast<int>(k)) + operand(from, k % kRun));
      },
      where + ": target window");
  for (const auto& [fetched, first] : {std::pair{&result, kRun}, std::pair{&rresult, 3 * kRun}}) {
    check->expect_elements(
        2 * kRun,
        [&](std::size_t k) {
          return (*fetched)[k] == (k % 2 == 1 ? kHole : initial(target, first + static_cast<int>(k / 2)));
        },
        [&](std::size_t k) { return "result element " + std::to_string(k) + " is " + std::to_string((*fetched)[k]); },
        where + ": results of the fetch at " + std::to_string(first));
  }
  for (MPI_Datatype* type : {&origin_type, &result_type, &rresult_type}) MPI_Type_free(type);
  MPI_Win_free(&win);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  shim::test::Checker checker("accumulate_bottom");
  check = &checker;
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (const char* path : {"native", "caller", "owner"}) run_path(path, rank, size);
  const int status = checker.finish();
  MPI_Finalize();
  return status;
}
