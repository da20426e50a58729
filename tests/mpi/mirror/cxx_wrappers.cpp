// Scenario: the C++ wrappers (shim::Mirror, shim::Distributed): moves,
// every call, and errors thrown as shim::mirror_error with their class.
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "tests/mpi/mirror/scenarios.hpp"
#include "tests/mpi/mirror/windows.hpp"

namespace shim::test::mirror {
namespace {

// The wrappers over `ret` (the same processes as c, returning errors).
void cxx_wrapped(const Comm& c, MPI_Comm ret, MPI_Count n, const std::string& where) {
  shim::Mirror first(n, MPI_DOUBLE, ret);
  shim::Mirror moved(std::move(first));
  check->expect(first.handle() == nullptr && moved.handle() != nullptr, where + ": move construction");
  shim::Mirror other(5, MPI_DOUBLE, ret);
  other = std::move(moved);  // `moved` now owns the 5-element window, freed at scope end
  MPI_Count size = 0;
  shim_mirror_size(other.handle(), &size, nullptr);
  check->expect(size == n, where + ": move assignment holds " + str(size) + " elements");

  const auto [mine_first, mine_count] = other.range(c.local_rank);
  const Block want = block_of(n, c.local_size(), c.local_rank);
  check->expect(mine_first == want.first && mine_count == want.count, where + ": range");
  std::vector<double> values(static_cast<std::size_t>(mine_count));
  for (MPI_Count k = 0; k < mine_count; ++k)
    values[static_cast<std::size_t>(k)] = static_cast<double>(node_value(c.node, mine_first + k));
  other.put(mine_first, mine_count, values.data());
  const double two = 2.0;
  other.acc(mine_first, mine_count, values.data(), &two);  // 3x
  other.merge();
  std::vector<double> got(static_cast<std::size_t>(n));
  other.get(0, n, got.data());
  expect_elements(
      got, 0, [&](MPI_Count i) { return 3.0 * static_cast<double>(merged_value(c.nodes(), i)); }, where + ": merged");
  if (n > 0) check->expect(*other.address<double>(n - 1) == got.back(), where + ": address<double>");

  shim::Distributed array(n, MPI_DOUBLE, ret);
  shim::Distributed kept(std::move(array));
  check->expect(array.handle() == nullptr && kept.handle() != nullptr, where + ": Distributed move construction");
  other.copy_to(kept);
  const auto [owner, displacement] = kept.locate(n - 1);
  const auto [last_first, last_count] = kept.range(c.size - 1);
  check->expect(owner == c.size - 1 && displacement == last_count - 1 && last_first + last_count == n,
                where + ": locate/range of the last element");
  expect_distributed<double>(
      kept.handle(), MPI_DOUBLE, c.comm, n,
      [&](MPI_Count i) { return 3.0 * static_cast<double>(merged_value(c.nodes(), i)); }, where + ": copy_to");
  check->expect(kept.window() != MPI_WIN_NULL, where + ": window");
  other.zero();
  other.sync();
  other.copy_from(kept);
  other.get(0, n, got.data());
  expect_elements(
      got, 0, [&](MPI_Count i) { return 3.0 * static_cast<double>(merged_value(c.nodes(), i)); },
      where + ": copy_from");
  other.merge_patch(0, 0);
  other.merge_sparse(4);  // every copy equal: multiplies by the node count
  other.get(0, n, got.data());
  expect_elements(
      got, 0, [&](MPI_Count i) { return 3.0 * c.nodes() * static_cast<double>(merged_value(c.nodes(), i)); },
      where + ": merge_sparse");

  {
    double buffer[2] = {};
    int code = MPI_SUCCESS;
    try {
      other.get(n - 1, 2, buffer);
    } catch (const shim::mirror_error& e) {
      code = e.code();
      check->expect(e.what() != nullptr && std::strlen(e.what()) > 0, where + ": mirror_error has no message");
    }
    expect_class(code, MPI_ERR_ARG, where + ": Mirror::get past the end throws");
    code = MPI_SUCCESS;
    try {
      shim::Mirror never(-1, MPI_INT, ret);
    } catch (const shim::mirror_error& e) {
      code = e.code();
    }
    expect_class(code, MPI_ERR_COUNT, where + ": Mirror of -1 elements throws");
    code = MPI_SUCCESS;
    try {
      shim::Distributed never(4, MPI_BYTE, ret);
    } catch (const shim::mirror_error& e) {
      code = e.code();
    }
    expect_class(code, MPI_ERR_TYPE, where + ": Distributed of MPI_BYTE throws");
  }
}

}  // namespace

void cxx_wrappers(const Comm& c) {
  const std::string where = c.name + " C++ wrappers";
  const MPI_Count n = 333;
  // Errors become exceptions on a communicator that returns them.
  MPI_Comm ret = MPI_COMM_NULL;
  PMPI_Comm_dup(c.comm, &ret);
  MPI_Comm_set_errhandler(ret, MPI_ERRORS_RETURN);
  cxx_wrapped(c, ret, n, where);
  PMPI_Comm_free(&ret);
}

}  // namespace shim::test::mirror
