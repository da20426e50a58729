#include "topology/network_picture.hpp"

#include <cstdint>
#include <cstring>

#include "common/mpi_try.hpp"

namespace shim::topo {

int NetworkPicture::subnet_of_world_rank(int world_rank) const {
  return profile.subnet_of_host[host_of_world_rank[world_rank]];
}

double NetworkPicture::cost(int world_a, int world_b) const {
  return profile.partition_cost()[host_of_world_rank[world_a]][host_of_world_rank[world_b]];
}

std::string profile_node_name(int world_rank, int node_size) {
  if (node_size > 0) return "vnode" + std::to_string(world_rank / node_size);
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  // A name MPI cannot give leaves the host unknown: the profile is refused.
  if (PMPI_Get_processor_name(name, &length) != MPI_SUCCESS) return "";
  return std::string(name, length);
}

namespace {

// Rank 0 reads the file and maps every rank to a host; the others receive
// the verdict, the text and the map. `text` stays empty when the profile
// cannot be used (with `error` set on rank 0).
int share_profile(const std::string& path, int node_size, std::string& text, std::vector<int>& host_of_world_rank,
                  std::string& error) {
  int rank = 0;
  int size = 0;
  SHIM_TRY(PMPI_Comm_rank(MPI_COMM_WORLD, &rank));
  SHIM_TRY(PMPI_Comm_size(MPI_COMM_WORLD, &size));
  char mine[MPI_MAX_PROCESSOR_NAME] = {};
  const std::string name = profile_node_name(rank, node_size);
  std::strncpy(mine, name.c_str(), sizeof(mine) - 1);
  std::vector<char> names(rank == 0 ? static_cast<std::size_t>(size) * MPI_MAX_PROCESSOR_NAME : 0);
  SHIM_TRY(PMPI_Gather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0,
                       MPI_COMM_WORLD));
  host_of_world_rank.assign(static_cast<std::size_t>(size), -1);
  if (rank == 0) {
    ProfileLoad load = load_profile_file(path);
    if (!load.profile) {
      error = load.error;
    } else {
      for (int r = 0; r < size && error.empty(); ++r) {
        const std::string host(&names[static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME]);
        host_of_world_rank[r] = load.profile->host_index(host);
        if (host_of_world_rank[r] < 0) {
          error = path + ": host '" + host + "' of this job (rank " + std::to_string(r) + ") is not in the profile";
        }
      }
      if (error.empty()) text = profile_to_json(*load.profile);
    }
  }
  std::int64_t length = static_cast<std::int64_t>(text.size());
  SHIM_TRY(PMPI_Bcast(&length, 1, MPI_INT64_T, 0, MPI_COMM_WORLD));
  if (length == 0) return MPI_SUCCESS;
  text.resize(static_cast<std::size_t>(length));
  SHIM_TRY(PMPI_Bcast(text.data(), static_cast<int>(length), MPI_CHAR, 0, MPI_COMM_WORLD));
  return PMPI_Bcast(host_of_world_rank.data(), size, MPI_INT, 0, MPI_COMM_WORLD);
}

}  // namespace

std::optional<NetworkPicture> load_network_picture(const std::string& path, int node_size, std::string& error) {
  std::string text;
  std::vector<int> host_of_world_rank;
  if (const int rc = share_profile(path, node_size, text, host_of_world_rank, error); rc != MPI_SUCCESS) {
    error = path + ": MPI error " + std::to_string(rc) + " while sharing the profile";
    return std::nullopt;
  }
  if (text.empty()) return std::nullopt;
  ProfileLoad shared = parse_profile(text, path);
  if (!shared.profile) return std::nullopt;  // cannot differ from rank 0's parse
  return NetworkPicture{std::move(*shared.profile), std::move(host_of_world_rank)};
}

}  // namespace shim::topo
