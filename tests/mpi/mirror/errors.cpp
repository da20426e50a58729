// Scenario: every documented error. Copies between mismatched objects,
// local calls on bad ranges, collective calls with bad arguments, bad
// creations (counts, unsupported types, intercommunicators, null handles)
// all return the right error class, touch nothing, and reach the error
// handler the communicator had when the object was created; both objects
// outlive the communicator they were created over.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "tests/mpi/mirror/scenarios.hpp"
#include "tests/mpi/mirror/windows.hpp"

namespace shim::test::mirror {
namespace {

// The counting error handler: proves that errors reach the handler the
// communicator had when the object was created.
int handler_calls = 0;
int handler_last = MPI_SUCCESS;
void counting_handler(MPI_Comm*, int* code, ...) {
  ++handler_calls;
  handler_last = *code;
}

}  // namespace

void errors(const Comm& world) {
  MPI_Comm ret = MPI_COMM_NULL;
  PMPI_Comm_dup(MPI_COMM_WORLD, &ret);
  MPI_Comm_set_errhandler(ret, MPI_ERRORS_RETURN);
  const Comm c = describe("errors-return world", ret);
  const MPI_Count n = 100;
  const std::string where = "errors";

  shim_mirror m = create_mirror(n, MPI_INT, c, where);
  put_own_block<int>(
      c, m, n, [&](MPI_Count i) { return node_value(c.node, i); }, where);
  ok(shim_mirror_merge(m), where + ": merge");
  auto merged = [&](MPI_Count i) { return static_cast<int>(merged_value(c.nodes(), i)); };
  auto v = [](MPI_Count i) { return 5 * i + 1; };

  // Mismatched copies: reported everywhere, nothing touched on either side.
  struct Mismatch {
    std::string name;
    MPI_Count count;
    MPI_Datatype type;
    MPI_Comm comm;
    int want;
  };
  MPI_Comm reversed = MPI_COMM_NULL, halves = MPI_COMM_NULL;
  PMPI_Comm_split(MPI_COMM_WORLD, 0, world.size - 1 - world.rank, &reversed);
  PMPI_Comm_split(MPI_COMM_WORLD, world.rank % 2, world.rank, &halves);
  std::vector<Mismatch> cases = {{"one element more", n + 1, MPI_INT, ret, MPI_ERR_SIZE},
                                 {"MPI_FLOAT for MPI_INT (same size)", n, MPI_FLOAT, ret, MPI_ERR_TYPE}};
  if (world.size > 1) {
    cases.push_back({"a reversed-rank communicator", n, MPI_INT, reversed, MPI_ERR_COMM});
    cases.push_back({"a split communicator", n, MPI_INT, halves, MPI_ERR_COMM});
  }
  for (const Mismatch& x : cases) {
    const std::string what = where + ": distributed array of " + x.name;
    shim_distributed d = create_distributed(x.count, x.type, x.comm, what);
    auto write_and_check = [&](auto sample) {
      using T = decltype(sample);
      distributed_write<T>(d, x.type, x.comm, x.count, v, what);
      for (int direction = 0; direction < 2; ++direction) {
        const int rc = direction == 0 ? shim_mirror_copy_from_distributed(m, d) : shim_mirror_copy_to_distributed(m, d);
        const std::string call = what + (direction == 0 ? ": copy_from_distributed" : ": copy_to_distributed");
        expect_class(rc, x.want, call);
        expect_mirror<int>(m, n, merged, call + " left the mirror untouched");
      }
      expect_distributed<T>(
          d, x.type, x.comm, x.count, [&](MPI_Count i) { return make<T>(v(i)); },
          what + ": failed copies left the distributed array untouched");
    };
    if (x.type == MPI_FLOAT) {
      write_and_check(0.0f);
    } else {
      write_and_check(0);
    }
    free_distributed(d, what);
  }
  PMPI_Comm_free(&reversed);
  PMPI_Comm_free(&halves);

  // Local calls on bad ranges: an error, and no element written.
  ok(shim_mirror_sync(m), where + ": sync");
  std::vector<int> buffer(static_cast<std::size_t>(n + 2), -9);
  expect_class(shim_mirror_get(m, n, 1, buffer.data()), MPI_ERR_ARG, where + ": get past the end");
  expect_class(shim_mirror_get(m, -1, 1, buffer.data()), MPI_ERR_ARG, where + ": get at -1");
  expect_class(shim_mirror_get(m, n + 1, 0, buffer.data()), MPI_ERR_ARG, where + ": get of 0 past the end");
  expect_class(shim_mirror_put(m, n - 1, 2, buffer.data()), MPI_ERR_ARG, where + ": put straddling the end");
  expect_class(shim_mirror_put(m, 0, n + 1, buffer.data()), MPI_ERR_ARG, where + ": put of count + 1");
  expect_class(shim_mirror_acc(m, n - 1, 2, buffer.data(), nullptr), MPI_ERR_ARG, where + ": acc straddling the end");
  expect_class(shim_mirror_get(m, 0, -1, buffer.data()), MPI_ERR_COUNT, where + ": get of -1");
  expect_class(shim_mirror_put(m, 0, -1, buffer.data()), MPI_ERR_COUNT, where + ": put of -1");
  expect_class(shim_mirror_acc(m, 0, -1, buffer.data(), nullptr), MPI_ERR_COUNT, where + ": acc of -1");
  expect_class(shim_mirror_put(m, 0, 1, nullptr), MPI_ERR_ARG, where + ": put from a null buffer");
  int rank = -1;
  void* address = nullptr;
  MPI_Count first = 0, count = 0;
  expect_class(shim_mirror_holder(m, n, &rank), MPI_ERR_ARG, where + ": holder of element count");
  expect_class(shim_mirror_holder(m, -1, &rank), MPI_ERR_ARG, where + ": holder of element -1");
  expect_class(shim_mirror_address(m, n, &address), MPI_ERR_ARG, where + ": address of element count");
  expect_class(shim_mirror_range(m, c.local_size(), &first, &count), MPI_ERR_RANK, where + ": range of local_size");
  expect_class(shim_mirror_range(m, -1, &first, &count), MPI_ERR_RANK, where + ": range of -1");
  check->expect(std::all_of(buffer.begin(), buffer.end(), [](int x) { return x == -9; }),
                where + ": a failed get wrote into the buffer");
  ok(shim_mirror_sync(m), where + ": sync");
  expect_mirror<int>(m, n, merged, where + ": failed local calls left the mirror untouched");

  // Collective calls with bad arguments: an error on every process, no merge.
  ok(shim_mirror_sync(m), where + ": sync");
  put_own_block<int>(
      c, m, n, [&](MPI_Count i) { return node_value(c.node, i); }, where);
  ok(shim_mirror_sync(m), where + ": sync");
  expect_class(shim_mirror_merge_patch(m, 0, n + 1), MPI_ERR_ARG, where + ": merge_patch of count + 1");
  expect_class(shim_mirror_merge_patch(m, -1, 2), MPI_ERR_ARG, where + ": merge_patch at -1");
  expect_class(shim_mirror_merge_patch(m, n + 1, 0), MPI_ERR_ARG, where + ": merge_patch of 0 past the end");
  expect_class(shim_mirror_merge_patch(m, 0, -1), MPI_ERR_COUNT, where + ": merge_patch of -1");
  expect_class(shim_mirror_merge_sparse(m, 0), MPI_ERR_ARG, where + ": merge_sparse with block 0");
  expect_class(shim_mirror_merge_sparse(m, -4), MPI_ERR_ARG, where + ": merge_sparse with block -4");
  expect_mirror<int>(
      m, n, [&](MPI_Count i) { return static_cast<int>(node_value(c.node, i)); },
      where + ": failed merges left each node's copy as it was");
  free_mirror(m, where);

  // Bad creations: an error, and no handle.
  MPI_Datatype contiguous = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(2, MPI_INT, &contiguous);
  MPI_Type_commit(&contiguous);
  const std::pair<MPI_Datatype, const char*> unsupported[] = {{contiguous, "a contiguous derived type"},
                                                              {MPI_BYTE, "MPI_BYTE"},
                                                              {MPI_CHAR, "MPI_CHAR"},
                                                              {MPI_2INT, "MPI_2INT"},
                                                              {MPI_DOUBLE_INT, "MPI_DOUBLE_INT"}};
  for (const auto& [type, name] : unsupported) {
    shim_mirror bad = nullptr;
    expect_class(shim_mirror_create(10, type, ret, &bad), MPI_ERR_TYPE, where + ": mirror of " + name);
    check->expect(bad == nullptr, where + ": mirror of " + name + " gave a handle");
    shim_distributed bad_array = nullptr;
    expect_class(shim_distributed_create(10, type, ret, &bad_array), MPI_ERR_TYPE,
                 where + ": distributed array of " + name);
    check->expect(bad_array == nullptr, where + ": distributed array of " + name + " gave a handle");
  }
  MPI_Type_free(&contiguous);
  shim_mirror bad = nullptr;
  expect_class(shim_mirror_create(-1, MPI_INT, ret, &bad), MPI_ERR_COUNT, where + ": mirror of -1 elements");
  check->expect(bad == nullptr, where + ": mirror of -1 elements gave a handle");
  shim_distributed bad_array = nullptr;
  expect_class(shim_distributed_create(-1, MPI_INT, ret, &bad_array), MPI_ERR_COUNT,
               where + ": distributed array of -1 elements");
  expect_class(shim_mirror_create(10, MPI_INT, ret, nullptr), MPI_ERR_ARG,
               where + ": mirror with a null handle pointer");

  if (world.size > 1) {  // Intercommunicators: refused.
    MPI_Comm half = MPI_COMM_NULL, inter = MPI_COMM_NULL;
    PMPI_Comm_split(MPI_COMM_WORLD, world.rank % 2, world.rank, &half);
    PMPI_Intercomm_create(half, 0, MPI_COMM_WORLD, world.rank % 2 == 0 ? 1 : 0, 7, &inter);
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    expect_class(shim_mirror_create(10, MPI_INT, inter, &bad), MPI_ERR_COMM,
                 where + ": mirror over an intercommunicator");
    expect_class(shim_distributed_create(10, MPI_INT, inter, &bad_array), MPI_ERR_COMM,
                 where + ": distributed array over an intercommunicator");
    check->expect(bad == nullptr && bad_array == nullptr, where + ": an intercommunicator gave a handle");
    PMPI_Comm_free(&inter);
    PMPI_Comm_free(&half);
  }

  // Null handles and MPI_COMM_NULL are raised on MPI_COMM_SELF.
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  expect_class(shim_mirror_sync(nullptr), MPI_ERR_ARG, where + ": sync of a null mirror");
  expect_class(shim_mirror_get(nullptr, 0, 0, nullptr), MPI_ERR_ARG, where + ": get from a null mirror");
  expect_class(shim_mirror_create(10, MPI_INT, MPI_COMM_NULL, &bad), MPI_ERR_COMM,
               where + ": mirror over MPI_COMM_NULL");
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);

  // The handler at creation: a counting one, replaced afterwards by
  // MPI_ERRORS_RETURN; the object's errors still go to the counting one.
  MPI_Comm counted = MPI_COMM_NULL;
  PMPI_Comm_dup(MPI_COMM_WORLD, &counted);
  MPI_Errhandler counting = MPI_ERRHANDLER_NULL;
  MPI_Comm_create_errhandler(counting_handler, &counting);
  MPI_Comm_set_errhandler(counted, counting);
  shim_mirror watched = nullptr;
  ok(shim_mirror_create(n, MPI_INT, counted, &watched), where + ": create with a counting handler");
  shim_distributed watched_array = create_distributed(n + 1, MPI_INT, counted, where + " counting handler");
  MPI_Comm_set_errhandler(counted, MPI_ERRORS_RETURN);
  handler_calls = 0;
  expect_class(shim_mirror_get(watched, n, 1, buffer.data()), MPI_ERR_ARG, where + ": get past the end (counted)");
  check->expect(handler_calls == 1 && error_class(handler_last) == MPI_ERR_ARG,
                where + ": the creation-time handler saw " + str(handler_calls) + " errors, expected 1 MPI_ERR_ARG");
  expect_class(shim_mirror_copy_from_distributed(watched, watched_array), MPI_ERR_SIZE,
               where + ": mismatched copy (counted)");
  check->expect(handler_calls == 2 && error_class(handler_last) == MPI_ERR_SIZE,
                where + ": the creation-time handler saw " + str(handler_calls) + " errors, expected 2 (MPI_ERR_SIZE)");
  MPI_Count where_first = 0, where_count = 0;
  expect_class(shim_distributed_range(watched_array, world.size, &where_first, &where_count), MPI_ERR_RANK,
               where + ": distributed range of rank size (counted)");
  check->expect(handler_calls == 3, where + ": the distributed array's creation-time handler was not called");
  // And an error while creating goes to the handler the communicator has now.
  MPI_Comm_set_errhandler(counted, counting);
  handler_calls = 0;
  expect_class(shim_mirror_create(-5, MPI_INT, counted, &bad), MPI_ERR_COUNT, where + ": create of -5 (counted)");
  check->expect(handler_calls == 1, where + ": a failed create called the handler " + str(handler_calls) + " times");
  MPI_Comm_set_errhandler(counted, MPI_ERRORS_RETURN);

  // Both objects keep working after the user frees the communicator they
  // were created over (they hold duplicates), and its handler.
  MPI_Errhandler_free(&counting);
  PMPI_Comm_free(&counted);
  free_distributed(watched_array, where + " counting handler");
  // Over `ret`: another communicator, congruent, so compatible.
  watched_array = create_distributed(n, MPI_INT, ret, where + " outliving");
  put_own_block<int>(
      c, watched, n, [&](MPI_Count i) { return node_value(c.node, i); }, where);
  ok(shim_mirror_merge(watched), where + ": merge after MPI_Comm_free");
  ok(shim_mirror_copy_to_distributed(watched, watched_array), where + ": copy_to_distributed after MPI_Comm_free");
  ok(shim_mirror_zero(watched), where + ": zero after MPI_Comm_free");
  ok(shim_mirror_copy_from_distributed(watched, watched_array), where + ": copy_from_distributed after MPI_Comm_free");
  expect_mirror<int>(watched, n, merged, where + ": after MPI_Comm_free of its communicator");
  handler_calls = 0;
  expect_class(shim_mirror_get(watched, -1, 1, buffer.data()), MPI_ERR_ARG, where + ": get at -1 (counted, freed)");
  check->expect(handler_calls == 1, where + ": the freed communicator's handler saw " + str(handler_calls) + " errors");
  free_distributed(watched_array, where + " outliving");
  free_mirror(watched, where + " counting handler");
  PMPI_Comm_free(&ret);
}

}  // namespace shim::test::mirror
