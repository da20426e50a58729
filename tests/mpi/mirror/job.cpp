#include "tests/mpi/mirror/job.hpp"

namespace shim::test::mirror {
namespace {

std::string class_name(int cls) {
  switch (cls) {
    case MPI_SUCCESS:
      return "MPI_SUCCESS";
    case MPI_ERR_ARG:
      return "MPI_ERR_ARG";
    case MPI_ERR_COUNT:
      return "MPI_ERR_COUNT";
    case MPI_ERR_TYPE:
      return "MPI_ERR_TYPE";
    case MPI_ERR_SIZE:
      return "MPI_ERR_SIZE";
    case MPI_ERR_COMM:
      return "MPI_ERR_COMM";
    case MPI_ERR_RANK:
      return "MPI_ERR_RANK";
    default:
      return "error class " + str(cls);
  }
}

}  // namespace

void expect_class(int rc, int want, const std::string& where) {
  const int got = error_class(rc);
  check->expect(got == want, where + ": error class " + class_name(got) + ", expected " + class_name(want));
}

Comm describe(const std::string& name, MPI_Comm comm) {
  Comm c;
  c.name = name;
  c.comm = comm;
  PMPI_Comm_rank(comm, &c.rank);
  PMPI_Comm_size(comm, &c.size);
  int mine = world_rank;
  std::vector<int> world(static_cast<std::size_t>(c.size));
  PMPI_Allgather(&mine, 1, MPI_INT, world.data(), 1, MPI_INT, comm);
  std::vector<int> key;
  for (int w : world) key.push_back(node_of_world[static_cast<std::size_t>(w)]);
  std::vector<int> seen;
  for (int r = 0; r < c.size; ++r) {
    const auto it = std::find(seen.begin(), seen.end(), key[static_cast<std::size_t>(r)]);
    const int n = static_cast<int>(it - seen.begin());
    if (it == seen.end()) {
      seen.push_back(key[static_cast<std::size_t>(r)]);
      c.members.emplace_back();
    }
    c.node_of.push_back(n);
    c.members[static_cast<std::size_t>(n)].push_back(r);
  }
  c.node = c.node_of[static_cast<std::size_t>(c.rank)];
  c.local_rank = c.local_rank_of(c.rank);
  return c;
}

}  // namespace shim::test::mirror
