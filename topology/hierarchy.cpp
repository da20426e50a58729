#include "topology/hierarchy.hpp"

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/mpi_handle.hpp"
#include "common/mpi_try.hpp"
#include "topology/node_grouping.hpp"

namespace shim::topo {

namespace {

int gather_node_keys(MPI_Comm comm, int size, std::int64_t my_key, std::vector<std::int64_t>& keys) {
  keys.resize(size);
  return PMPI_Allgather(&my_key, 1, MPI_INT64_T, keys.data(), 1, MPI_INT64_T, comm);
}

int translate_to_world(MPI_Comm comm, int size, std::vector<int>& world_ranks) {
  OwnedGroup group, world;
  std::vector<int> ranks(size);
  for (int r = 0; r < size; ++r) ranks[r] = r;
  world_ranks.resize(size);
  SHIM_TRY(PMPI_Comm_group(comm, group.out()));
  SHIM_TRY(PMPI_Comm_group(MPI_COMM_WORLD, world.out()));
  return PMPI_Group_translate_ranks(group.get(), size, ranks.data(), world.get(), world_ranks.data());
}

int detect_nodes(MPI_Comm comm, int rank, int size, OwnedComm& node, std::vector<std::int64_t>& keys,
                 std::string& source) {
  SHIM_TRY(PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, node.out()));
  int lowest = rank;
  SHIM_TRY(PMPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, node.get()));

  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  SHIM_TRY(PMPI_Get_processor_name(name, &length));
  const NodeEvidence mine{hash_processor_name(std::string_view(name, length)), lowest};
  std::vector<NodeEvidence> evidence(size);
  static_assert(sizeof(NodeEvidence) == 2 * sizeof(std::int64_t));
  SHIM_TRY(PMPI_Allgather(&mine, 2, MPI_INT64_T, evidence.data(), 2, MPI_INT64_T, comm));

  NodeGrouping grouping = group_nodes(evidence);
  source = grouping.source;
  keys = std::move(grouping.node_keys);
  if (grouping.by_name) {
    SHIM_TRY(node.free());
    SHIM_TRY(PMPI_Comm_split(comm, static_cast<int>(keys[rank]), rank, node.out()));
  }
  return MPI_SUCCESS;
}

}  // namespace

int Hierarchy::build(MPI_Comm comm, int node_size, std::unique_ptr<Hierarchy>& out) {
  std::unique_ptr<Hierarchy> h(new Hierarchy);
  int size = 0;
  SHIM_TRY(PMPI_Comm_rank(comm, &h->rank_));
  SHIM_TRY(PMPI_Comm_size(comm, &size));

  std::vector<std::int64_t> keys;
  if (node_size > 0) {
    int world_rank = 0;
    SHIM_TRY(PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
    const std::int64_t key = virtual_node_of(world_rank, node_size);
    SHIM_TRY(PMPI_Comm_split(comm, static_cast<int>(key), h->rank_, h->node_.out()));
    SHIM_TRY(gather_node_keys(comm, size, key, keys));
    h->node_source_ = "virtual nodes of " + std::to_string(node_size) + " world ranks (SHIM_NODE_SIZE)";
  } else {
    SHIM_TRY(detect_nodes(comm, h->rank_, size, h->node_, keys, h->node_source_));
  }
  h->layout_ = Layout::from_node_keys(keys);
  SHIM_TRY(translate_to_world(comm, size, h->world_rank_of_));

  const int local = h->layout_.local_rank(h->rank_);
  SHIM_TRY(PMPI_Comm_split(comm, local, h->layout_.node_of(h->rank_), h->rail_.out()));
  SHIM_TRY(PMPI_Comm_dup(comm, h->shadow_.out()));
  // Internal failures come back as codes; the caller raises them on the
  // user's communicator, whose error handler may have changed since.
  for (const OwnedComm* c : {&h->node_, &h->rail_, &h->shadow_}) {
    SHIM_TRY(PMPI_Comm_set_errhandler(c->get(), MPI_ERRORS_RETURN));
  }
  out = std::move(h);
  return MPI_SUCCESS;
}

}  // namespace shim::topo
