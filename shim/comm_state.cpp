#include "shim/comm_state.hpp"

#include <algorithm>
#include <atomic>

#include "collectives/alltoall_schedules.hpp"
#include "collectives/bcast_scatter_allgather.hpp"
#include "collectives/bcast_tree.hpp"
#include "shim/runtime.hpp"
#include "topology/network_picture.hpp"

namespace shim {

namespace {

int g_comm_keyval = MPI_KEYVAL_INVALID;
std::atomic<int> g_next_id{0};
std::atomic<int> g_steered{0};

int delete_state(MPI_Comm, int, void* attribute, void*) {
  delete static_cast<CommState*>(attribute);
  return MPI_SUCCESS;
}

}  // namespace

// `comm` just answered an attribute query, so it is a valid communicator:
// these local queries cannot fail on it.
CommState::CommState(MPI_Comm comm) {
  int inter = 0;
  static_cast<void>(PMPI_Comm_rank(comm, &rank_));
  static_cast<void>(PMPI_Comm_size(comm, &size_));
  static_cast<void>(PMPI_Comm_test_inter(comm, &inter));
  inter_ = inter != 0;
  char name[MPI_MAX_OBJECT_NAME] = {};
  int length = 0;
  static_cast<void>(PMPI_Comm_get_name(comm, name, &length));
  label_ = length > 0 ? std::string(name, length) : "comm#" + std::to_string(++g_next_id);
  label_ += " (" + std::to_string(size_) + (size_ == 1 ? " rank)" : " ranks)");
}

CommState::~CommState() {
  if (steered()) {
    g_steered.fetch_sub(1);
    refresh_fast_paths();
  }
}

void CommState::change_overrides(const std::function<void()>& change) {
  const bool was = steered();
  change();
  if (steered() != was) {
    g_steered.fetch_add(was ? -1 : 1);
    refresh_fast_paths();
  }
}

bool any_communicator_steered() { return g_steered.load(std::memory_order_relaxed) != 0; }

int CommState::hierarchy(MPI_Comm comm, int node_size, const topo::Hierarchy*& out) {
  if (!hierarchy_) {
    const int rc = topo::Hierarchy::build(comm, node_size, hierarchy_);
    if (rc != MPI_SUCCESS) return rc;
    flat_traffic_ = coll::flat_traffic(hierarchy_->layout(), hierarchy_->rank());
  }
  out = hierarchy_.get();
  return MPI_SUCCESS;
}

const SchedulePlan& CommState::alltoall_plan(coll::AlltoallAlgorithm algorithm, std::int64_t block_bytes) {
  const topo::Layout& layout = hierarchy_->layout();
  const coll::ScheduleKind kind = coll::schedule_kind(algorithm, layout, block_bytes);
  auto& plan = plans_[kind.two_hops ? coll::kAlltoallAlgorithms.size() : static_cast<std::size_t>(algorithm)];
  if (!plan) {
    const int rank = hierarchy_->rank();
    coll::Schedule schedule = coll::build_alltoall_schedule(kind, layout, rank);
    const coll::Traffic traffic = coll::schedule_traffic(schedule, layout, rank);
    plan = SchedulePlan{std::move(schedule), traffic};
  }
  return *plan;
}

const std::vector<int>& CommState::subnet_of_node() {
  if (!subnet_of_node_) {
    subnet_of_node_.emplace();
    const topo::NetworkPicture* picture = network_picture();
    if (picture != nullptr) {
      const topo::Layout& layout = hierarchy_->layout();
      const int nodes = layout.nodes();
      // A node's host is its first rank's: every rank of a node is on one host.
      std::vector<int> world(nodes);
      for (int n = 0; n < nodes; ++n) world[n] = hierarchy_->world_rank(layout.rank_of(n, 0));
      node_cost_.assign(nodes, std::vector<double>(nodes, 0.0));
      for (int a = 0; a < nodes; ++a) {
        subnet_of_node_->push_back(picture->subnet_of_world_rank(world[a]));
        for (int b = 0; b < nodes; ++b) node_cost_[a][b] = a == b ? 0.0 : picture->cost(world[a], world[b]);
      }
    }
  }
  return *subnet_of_node_;
}

const topo::CostMatrix& CommState::node_cost() {
  subnet_of_node();
  return node_cost_;
}

int CommState::subnets_spanned() {
  const std::vector<int>& subnets = subnet_of_node();
  std::vector<int> distinct(subnets);
  std::sort(distinct.begin(), distinct.end());
  return static_cast<int>(std::unique(distinct.begin(), distinct.end()) - distinct.begin());
}

const BcastRole& CommState::bcast_role(coll::BcastAlgorithm algorithm, int root, coll::BcastFanout fanout) {
  const auto key = std::make_tuple(static_cast<int>(algorithm), root, fanout);
  auto it = bcast_roles_.find(key);
  if (it != bcast_roles_.end()) return it->second;
  const topo::Layout& layout = hierarchy_->layout();
  std::vector<coll::BcastTree> trees;
  if (algorithm == coll::BcastAlgorithm::eco) {
    // Without a profile every node counts as one subnet: a tree over nodes.
    std::vector<int> subnets = subnet_of_node();
    if (subnets.empty()) subnets.assign(layout.nodes(), 0);
    trees = coll::build_eco_trees(layout, subnets, node_cost(), root, fanout);
  } else {
    trees.push_back(coll::build_two_level_tree(layout, root, fanout));
  }
  const int me = hierarchy_->rank();
  BcastRole role;
  for (const coll::BcastTree& tree : trees) {
    role.trees.push_back({tree.parent[me], tree.children[me]});
    int inter = 0;
    for (int child : tree.children[me]) inter += layout.same_node(me, child) ? 0 : 1;
    role.inter_node_children.push_back(inter);
  }
  return bcast_roles_.emplace(key, std::move(role)).first->second;
}

const SchedulePlan& CommState::bcast_scatter_allgather(int root) {
  auto it = bcast_scatter_allgather_.find(root);
  if (it != bcast_scatter_allgather_.end()) return it->second;
  const topo::Layout& layout = hierarchy_->layout();
  const int me = hierarchy_->rank();
  coll::Schedule schedule = coll::build_scatter_allgather_bcast(layout, root, me);
  const coll::Traffic traffic = coll::schedule_traffic(schedule, layout, me);
  return bcast_scatter_allgather_.emplace(root, SchedulePlan{std::move(schedule), traffic}).first->second;
}

int create_comm_state_keyval() {
  return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state, &g_comm_keyval, nullptr);
}

void free_comm_state_keyval() {
  // Communicators still alive keep the keyval until they go.
  if (g_comm_keyval != MPI_KEYVAL_INVALID) static_cast<void>(PMPI_Comm_free_keyval(&g_comm_keyval));
}

int comm_state(MPI_Comm comm, CommState*& out) {
  void* attribute = nullptr;
  int found = 0;
  int rc = PMPI_Comm_get_attr(comm, g_comm_keyval, &attribute, &found);
  if (rc != MPI_SUCCESS) return rc;
  if (found) {
    out = static_cast<CommState*>(attribute);
    return MPI_SUCCESS;
  }
  auto state = std::make_unique<CommState>(comm);
  rc = PMPI_Comm_set_attr(comm, g_comm_keyval, state.get());
  if (rc != MPI_SUCCESS) return rc;
  out = state.release();
  return MPI_SUCCESS;
}

void drop_comm_state(MPI_Comm comm) {
  void* attribute = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, g_comm_keyval, &attribute, &found) == MPI_SUCCESS && found) {
    // Only a failing delete callback could fail this, and ours returns success.
    static_cast<void>(PMPI_Comm_delete_attr(comm, g_comm_keyval));
  }
}

}  // namespace shim
