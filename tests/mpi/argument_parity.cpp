// Where shim checks the accumulate family's arguments itself (on its own
// windows, whose calls never reach MPICH's checks), it must accept and reject
// exactly as MPICH 4.0.2 does. Each case below is run on a window from
// MPICH's own PMPI_Win_allocate and on shim's windows (MPI_Win_allocate, and
// MPI_Win_create over the caller's memory), with MPI_ERRORS_RETURN: the
// error classes must be the same, success included. The op x datatype
// matrix is op_type_parity's; this is everything else a caller can get
// wrong: ranks, displacements, counts, datatypes, ops, epochs.
//
// One deliberate difference, named in the table so that it cannot drift:
// an origin (or result) of another basic datatype than the target's is
// erroneous in MPI (MPI-4.0, 12.3.4: both must be the same predefined
// type). MPICH 4.0.2 does not check it and applies the origin's bytes as
// the target's type, reading past the origin buffer when it is the shorter
// (1 MPI_INT into 1 MPI_LONG); shim refuses it with MPI_ERR_TYPE.
#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "tests/mpi/checker.hpp"

using shim::test::error_class;

namespace {

constexpr int kElements = 8;

struct Window {
  MPI_Win win = MPI_WIN_NULL;
  int size = 0;  // processes in the window's group
};

struct Case {
  std::string name;
  bool in_epoch;  // called inside MPI_Win_lock_all, or outside any epoch
  std::function<int(const Window&)> call;
  int shim_class = -1;  // >= 0: the class shim returns where it deliberately differs from MPICH
};

std::string class_name(int cls) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(cls, text, &length);
  return std::to_string(cls) + " (" + std::string(text, length) + ")";
}

void user_sum(void* in, void* inout, int* count, MPI_Datatype*) {
  for (int k = 0; k < *count; ++k) static_cast<long*>(inout)[k] += static_cast<long*>(in)[k];
}

// The first two elements of `buffer` as one element of absolute addresses,
// for MPI_BOTTOM.
MPI_Datatype absolute_pair(const long* buffer) {
  MPI_Aint address = 0;
  MPI_Get_address(buffer, &address);
  const int length = 2;
  const MPI_Datatype element = MPI_LONG;
  MPI_Datatype pair = MPI_DATATYPE_NULL;
  MPI_Type_create_struct(1, &length, &address, &element, &pair);
  MPI_Type_commit(&pair);
  return pair;
}

// The origin's and result's absolute types are made here, beside their
// buffers, and freed by the caller.
// `derived` and `duplicate` hold one MPI_LONG (a contiguous type and
// MPI_Type_dup's copy): the accumulate calls take them, MPI_Fetch_and_op and
// MPI_Compare_and_swap take named predefined types only.
std::vector<Case> cases(MPI_Datatype uncommitted, MPI_Datatype empty, MPI_Datatype derived, MPI_Datatype duplicate,
                        MPI_Op user_op, MPI_Datatype& origin_pair, MPI_Datatype& result_pair) {
  static long origin[kElements] = {1, 2, 3, 4, 5, 6, 7, 8};
  static long result[kElements] = {};
  static long compare = 0;
  origin_pair = absolute_pair(origin);
  result_pair = absolute_pair(result);
  auto acc = [](int count, MPI_Datatype type, int target, MPI_Aint disp, int target_count, MPI_Datatype target_type,
                MPI_Op op) {
    return [=](const Window& w) {
      return MPI_Accumulate(origin, count, type, target, disp, target_count, target_type, op, w.win);
    };
  };
  const int last = 0;  // a target that always exists: rank 0
  return {
      {"accumulate, valid", true, acc(2, MPI_LONG, last, 1, 2, MPI_LONG, MPI_SUM)},
      {"accumulate, count 0", true, acc(0, MPI_LONG, last, 0, 0, MPI_LONG, MPI_SUM)},
      {"accumulate to MPI_PROC_NULL", true, acc(2, MPI_LONG, MPI_PROC_NULL, 0, 2, MPI_LONG, MPI_SUM)},
      {"accumulate to rank = group size", true,
       [=](const Window& w) { return acc(1, MPI_LONG, w.size, 0, 1, MPI_LONG, MPI_SUM)(w); }},
      {"accumulate to rank -5", true, acc(1, MPI_LONG, -5, 0, 1, MPI_LONG, MPI_SUM)},
      {"accumulate at displacement -1", true, acc(1, MPI_LONG, last, -1, 1, MPI_LONG, MPI_SUM)},
      {"accumulate, origin count -1", true, acc(-1, MPI_LONG, last, 0, 1, MPI_LONG, MPI_SUM)},
      {"accumulate, target count -1", true, acc(1, MPI_LONG, last, 0, -1, MPI_LONG, MPI_SUM)},
      {"accumulate, origin type MPI_DATATYPE_NULL", true, acc(1, MPI_DATATYPE_NULL, last, 0, 1, MPI_LONG, MPI_SUM)},
      {"accumulate, target type MPI_DATATYPE_NULL", true, acc(1, MPI_LONG, last, 0, 1, MPI_DATATYPE_NULL, MPI_SUM)},
      {"accumulate, uncommitted origin type", true, acc(1, uncommitted, last, 0, 2, MPI_LONG, MPI_SUM)},
      {"accumulate, uncommitted target type", true, acc(2, MPI_LONG, last, 0, 1, uncommitted, MPI_SUM)},
      {"accumulate, MPI_OP_NULL", true, acc(1, MPI_LONG, last, 0, 1, MPI_LONG, MPI_OP_NULL)},
      {"accumulate, user-defined op", true, acc(1, MPI_LONG, last, 0, 1, MPI_LONG, user_op)},
      {"accumulate, MPI_NO_OP", true, acc(1, MPI_LONG, last, 0, 1, MPI_LONG, MPI_NO_OP)},
      {"accumulate, origin long into target int", true, acc(2, MPI_LONG, last, 0, 4, MPI_INT, MPI_SUM), MPI_ERR_TYPE},
      {"accumulate outside any epoch", false, acc(1, MPI_LONG, last, 0, 1, MPI_LONG, MPI_SUM)},
      // Operands without data move nothing: MPICH takes them whatever their
      // types and buffers (MPICH's own badrma test calls these).
      {"accumulate, empty origin type into 0 MPI_INT", true, acc(1, empty, last, 0, 0, MPI_INT, MPI_SUM)},
      {"accumulate, 0 MPI_INT into 0 MPI_LONG", true, acc(0, MPI_INT, last, 0, 0, MPI_LONG, MPI_SUM)},
      {"accumulate, null origin of an empty type", true,
       [=](const Window& w) { return MPI_Accumulate(nullptr, 1, empty, 0, 0, 0, MPI_LONG, MPI_SUM, w.win); }},
      {"get_accumulate, 0 MPI_INT result for 0 MPI_LONG", true,
       [](const Window& w) {
         return MPI_Get_accumulate(origin, 0, MPI_LONG, result, 0, MPI_INT, 0, 0, 0, MPI_LONG, MPI_SUM, w.win);
       }},
      {"get_accumulate, null result of an empty type", true,
       [=](const Window& w) {
         return MPI_Get_accumulate(nullptr, 0, MPI_LONG, nullptr, 1, empty, 0, 0, 0, MPI_LONG, MPI_SUM, w.win);
       }},
      {"accumulate, MPI_NO_OP with origin count -1", true, acc(-1, MPI_LONG, last, 0, 1, MPI_LONG, MPI_NO_OP)},
      {"accumulate, null origin", true,
       [](const Window& w) { return MPI_Accumulate(nullptr, 2, MPI_LONG, 0, 0, 2, MPI_LONG, MPI_SUM, w.win); }},
      {"accumulate, null origin with count 0", true,
       [](const Window& w) { return MPI_Accumulate(nullptr, 0, MPI_LONG, 0, 0, 0, MPI_LONG, MPI_SUM, w.win); }},
      {"accumulate from MPI_BOTTOM", true,
       [=](const Window& w) { return MPI_Accumulate(MPI_BOTTOM, 1, origin_pair, 0, 0, 2, MPI_LONG, MPI_SUM, w.win); }},
      {"get_accumulate, null origin", true,
       [](const Window& w) {
         return MPI_Get_accumulate(nullptr, 2, MPI_LONG, result, 2, MPI_LONG, 0, 0, 2, MPI_LONG, MPI_SUM, w.win);
       }},
      {"get_accumulate, null result", true,
       [](const Window& w) {
         return MPI_Get_accumulate(origin, 2, MPI_LONG, nullptr, 2, MPI_LONG, 0, 0, 2, MPI_LONG, MPI_SUM, w.win);
       }},
      {"get_accumulate from and into MPI_BOTTOM", true,
       [=](const Window& w) {
         return MPI_Get_accumulate(MPI_BOTTOM, 1, origin_pair, MPI_BOTTOM, 1, result_pair, 0, 0, 2, MPI_LONG, MPI_SUM,
                                   w.win);
       }},
      {"get_accumulate, valid", true,
       [](const Window& w) {
         return MPI_Get_accumulate(origin, 2, MPI_LONG, result, 2, MPI_LONG, 0, 0, 2, MPI_LONG, MPI_SUM, w.win);
       }},
      {"get_accumulate, result count -1", true,
       [](const Window& w) {
         return MPI_Get_accumulate(origin, 2, MPI_LONG, result, -1, MPI_LONG, 0, 0, 2, MPI_LONG, MPI_SUM, w.win);
       }},
      {"get_accumulate, result type MPI_DATATYPE_NULL", true,
       [](const Window& w) {
         return MPI_Get_accumulate(origin, 2, MPI_LONG, result, 2, MPI_DATATYPE_NULL, 0, 0, 2, MPI_LONG, MPI_SUM,
                                   w.win);
       }},
      {"get_accumulate, result int for target long", true,
       [](const Window& w) {
         return MPI_Get_accumulate(origin, 2, MPI_LONG, result, 4, MPI_INT, 0, 0, 2, MPI_LONG, MPI_SUM, w.win);
       },
       MPI_ERR_TYPE},
      {"get_accumulate, MPI_NO_OP with origin count 0", true,
       [](const Window& w) {
         return MPI_Get_accumulate(nullptr, 0, MPI_LONG, result, 2, MPI_LONG, 0, 0, 2, MPI_LONG, MPI_NO_OP, w.win);
       }},
      {"get_accumulate outside any epoch", false,
       [](const Window& w) {
         return MPI_Get_accumulate(origin, 1, MPI_LONG, result, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, w.win);
       }},
      {"fetch_and_op, valid", true,
       [](const Window& w) { return MPI_Fetch_and_op(origin, result, MPI_LONG, 0, 3, MPI_SUM, w.win); }},
      {"fetch_and_op to rank = group size", true,
       [](const Window& w) { return MPI_Fetch_and_op(origin, result, MPI_LONG, w.size, 0, MPI_SUM, w.win); }},
      {"fetch_and_op at displacement -1", true,
       [](const Window& w) { return MPI_Fetch_and_op(origin, result, MPI_LONG, 0, -1, MPI_SUM, w.win); }},
      {"fetch_and_op, MPI_DATATYPE_NULL", true,
       [](const Window& w) { return MPI_Fetch_and_op(origin, result, MPI_DATATYPE_NULL, 0, 0, MPI_SUM, w.win); }},
      {"fetch_and_op, derived type", true,
       [=](const Window& w) { return MPI_Fetch_and_op(origin, result, uncommitted, 0, 0, MPI_SUM, w.win); }},
      {"fetch_and_op, user-defined op", true,
       [=](const Window& w) { return MPI_Fetch_and_op(origin, result, MPI_LONG, 0, 0, user_op, w.win); }},
      {"fetch_and_op to MPI_PROC_NULL", true,
       [](const Window& w) { return MPI_Fetch_and_op(origin, result, MPI_LONG, MPI_PROC_NULL, 0, MPI_SUM, w.win); }},
      {"fetch_and_op, null origin", true,
       [](const Window& w) { return MPI_Fetch_and_op(nullptr, result, MPI_LONG, 0, 0, MPI_SUM, w.win); }},
      {"fetch_and_op, null result", true,
       [](const Window& w) { return MPI_Fetch_and_op(origin, nullptr, MPI_LONG, 0, 0, MPI_SUM, w.win); }},
      {"fetch_and_op, MPI_NO_OP with null origin", true,
       [](const Window& w) { return MPI_Fetch_and_op(nullptr, result, MPI_LONG, 0, 0, MPI_NO_OP, w.win); }},
      {"fetch_and_op, null origin to rank -5", true,
       [](const Window& w) { return MPI_Fetch_and_op(nullptr, result, MPI_LONG, -5, 0, MPI_SUM, w.win); }},
      {"fetch_and_op outside any epoch", false,
       [](const Window& w) { return MPI_Fetch_and_op(origin, result, MPI_LONG, 0, 0, MPI_SUM, w.win); }},
      {"compare_and_swap, valid", true,
       [](const Window& w) { return MPI_Compare_and_swap(origin, &compare, result, MPI_LONG, 0, 4, w.win); }},
      {"compare_and_swap to rank -5", true,
       [](const Window& w) { return MPI_Compare_and_swap(origin, &compare, result, MPI_LONG, -5, 0, w.win); }},
      {"compare_and_swap at displacement -1", true,
       [](const Window& w) { return MPI_Compare_and_swap(origin, &compare, result, MPI_LONG, 0, -1, w.win); }},
      {"compare_and_swap, MPI_DATATYPE_NULL", true,
       [](const Window& w) { return MPI_Compare_and_swap(origin, &compare, result, MPI_DATATYPE_NULL, 0, 0, w.win); }},
      {"fetch_and_op, a contiguous type of one long", true,
       [=](const Window& w) { return MPI_Fetch_and_op(origin, result, derived, 0, 0, MPI_SUM, w.win); }},
      {"fetch_and_op, a duplicate of MPI_LONG", true,
       [=](const Window& w) { return MPI_Fetch_and_op(origin, result, duplicate, 0, 0, MPI_SUM, w.win); }},
      {"fetch_and_op, a contiguous type, to rank -5", true,
       [=](const Window& w) { return MPI_Fetch_and_op(origin, result, derived, -5, 0, MPI_SUM, w.win); }},
      {"fetch_and_op, a contiguous type and a user op", true,
       [=](const Window& w) { return MPI_Fetch_and_op(origin, result, derived, 0, 0, user_op, w.win); }},
      {"fetch_and_op, a contiguous type, null result", true,
       [=](const Window& w) { return MPI_Fetch_and_op(origin, nullptr, derived, 0, 0, MPI_SUM, w.win); }},
      {"fetch_and_op, a contiguous type, outside any epoch", false,
       [=](const Window& w) { return MPI_Fetch_and_op(origin, result, derived, 0, 0, MPI_SUM, w.win); }},
      {"compare_and_swap, a contiguous type of one long", true,
       [=](const Window& w) { return MPI_Compare_and_swap(origin, &compare, result, derived, 0, 0, w.win); }},
      {"compare_and_swap, a duplicate of MPI_LONG", true,
       [=](const Window& w) { return MPI_Compare_and_swap(origin, &compare, result, duplicate, 0, 0, w.win); }},
      {"compare_and_swap, a contiguous type at displacement -1", true,
       [=](const Window& w) { return MPI_Compare_and_swap(origin, &compare, result, derived, 0, -1, w.win); }},
      {"compare_and_swap, a contiguous type, outside any epoch", false,
       [=](const Window& w) { return MPI_Compare_and_swap(origin, &compare, result, derived, 0, 0, w.win); }},
      {"get_accumulate, a contiguous type of one long", true,
       [=](const Window& w) {
         return MPI_Get_accumulate(origin, 1, derived, result, 1, derived, 0, 0, 1, derived, MPI_SUM, w.win);
       }},
      {"compare_and_swap, null compare", true,
       [](const Window& w) { return MPI_Compare_and_swap(origin, nullptr, result, MPI_LONG, 0, 0, w.win); }},
      {"compare_and_swap, null origin", true,
       [](const Window& w) { return MPI_Compare_and_swap(nullptr, &compare, result, MPI_LONG, 0, 0, w.win); }},
      {"compare_and_swap, null result", true,
       [](const Window& w) { return MPI_Compare_and_swap(origin, &compare, nullptr, MPI_LONG, 0, 0, w.win); }},
      {"compare_and_swap, null compare to rank -5", true,
       [](const Window& w) { return MPI_Compare_and_swap(origin, nullptr, result, MPI_LONG, -5, 0, w.win); }},
      {"compare_and_swap outside any epoch", false,
       [](const Window& w) { return MPI_Compare_and_swap(origin, &compare, result, MPI_LONG, 0, 0, w.win); }},
      {"raccumulate to rank = group size", true,
       [](const Window& w) {
         MPI_Request request = MPI_REQUEST_NULL;
         const int rc = MPI_Raccumulate(origin, 1, MPI_LONG, w.size, 0, 1, MPI_LONG, MPI_SUM, w.win, &request);
         if (request != MPI_REQUEST_NULL) MPI_Wait(&request, MPI_STATUS_IGNORE);
         return rc;
       }},
      {"raccumulate, null origin", true,
       [](const Window& w) {
         MPI_Request request = MPI_REQUEST_NULL;
         const int rc = MPI_Raccumulate(nullptr, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, w.win, &request);
         if (request != MPI_REQUEST_NULL) MPI_Wait(&request, MPI_STATUS_IGNORE);
         return rc;
       }},
      {"raccumulate outside a passive epoch", false,
       [](const Window& w) {
         MPI_Request request = MPI_REQUEST_NULL;
         const int rc = MPI_Raccumulate(origin, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, w.win, &request);
         if (request != MPI_REQUEST_NULL) MPI_Wait(&request, MPI_STATUS_IGNORE);
         return rc;
       }},
  };
}

int run(const Case& c, const Window& w) {
  if (c.in_epoch) MPI_Win_lock_all(0, w.win);
  const int rc = error_class(c.call(w));
  if (c.in_epoch) MPI_Win_unlock_all(w.win);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  shim::test::Checker check("argument_parity");
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  MPI_Datatype uncommitted = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(2, MPI_LONG, &uncommitted);
  MPI_Datatype empty = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(0, MPI_LONG, &empty);
  MPI_Type_commit(&empty);
  MPI_Datatype derived = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(1, MPI_LONG, &derived);
  MPI_Type_commit(&derived);
  MPI_Datatype duplicate = MPI_DATATYPE_NULL;
  MPI_Type_dup(MPI_LONG, &duplicate);
  MPI_Op user_op = MPI_OP_NULL;
  MPI_Op_create(user_sum, 1, &user_op);

  long* native_base = nullptr;
  long* allocated_base = nullptr;
  std::vector<long> created_memory(kElements, 0);
  Window native{MPI_WIN_NULL, size}, allocated{MPI_WIN_NULL, size}, created{MPI_WIN_NULL, size};
  PMPI_Win_allocate(kElements * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &native_base, &native.win);
  MPI_Win_allocate(kElements * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &allocated_base,
                   &allocated.win);
  MPI_Win_create(created_memory.data(), kElements * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                 &created.win);
  for (MPI_Win win : {native.win, allocated.win, created.win}) MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);

  MPI_Datatype origin_pair = MPI_DATATYPE_NULL, result_pair = MPI_DATATYPE_NULL;
  for (const Case& c : cases(uncommitted, empty, derived, duplicate, user_op, origin_pair, result_pair)) {
    const int mpich = run(c, native);
    const int expected = c.shim_class >= 0 ? c.shim_class : mpich;
    for (const auto& [label, window] : {std::pair{"MPI_Win_allocate", &allocated}, {"MPI_Win_create", &created}}) {
      const int got = run(c, *window);
      check.expect(got == expected, c.name + " on shim's " + label + " window: " + class_name(got) + ", expected " +
                                        class_name(expected) + " (MPICH's own window: " + class_name(mpich) + ")");
    }
  }

  for (Window* w : {&native, &allocated, &created}) MPI_Win_free(&w->win);
  MPI_Op_free(&user_op);
  MPI_Type_free(&uncommitted);
  MPI_Type_free(&empty);
  MPI_Type_free(&derived);
  MPI_Type_free(&duplicate);
  MPI_Type_free(&origin_pair);
  MPI_Type_free(&result_pair);
  const int status = check.finish();
  MPI_Finalize();
  return status;
}
