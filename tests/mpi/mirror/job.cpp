#include "tests/mpi/mirror/job.hpp"

#include <cstdlib>
#include <cstring>

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

int node_size_setting() {
  const char* k = std::getenv("SHIM_NODE_SIZE");
  return k != nullptr && *k != '\0' ? std::atoi(k) : 0;
}

}  // namespace

int error_class(int rc) {
  int cls = rc;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  return cls;
}

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
  std::vector<long long> key(static_cast<std::size_t>(c.size));
  if (const int k = node_size_setting(); k > 0) {
    const long long mine = world_rank / k;
    PMPI_Allgather(&mine, 1, MPI_LONG_LONG, key.data(), 1, MPI_LONG_LONG, comm);
  } else {
    char mine[MPI_MAX_PROCESSOR_NAME] = {};
    int length = 0;
    PMPI_Get_processor_name(mine, &length);
    std::vector<char> all(static_cast<std::size_t>(c.size) * MPI_MAX_PROCESSOR_NAME);
    PMPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm);
    for (int r = 0; r < c.size; ++r) {
      key[static_cast<std::size_t>(r)] = r;
      for (int s = 0; s < r; ++s)
        if (std::strncmp(&all[static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME],
                         &all[static_cast<std::size_t>(s) * MPI_MAX_PROCESSOR_NAME], MPI_MAX_PROCESSOR_NAME) == 0) {
          key[static_cast<std::size_t>(r)] = s;
          break;
        }
    }
  }
  std::vector<long long> seen;
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
