#include "shim/comm_state.hpp"

#include <atomic>

#include "collectives/alltoall_schedules.hpp"
#include "shim/runtime.hpp"

namespace shim {

namespace {

int g_keyval = MPI_KEYVAL_INVALID;
std::atomic<int> g_next_id{0};
std::atomic<int> g_steered{0};

int delete_state(MPI_Comm, int, void* attribute, void*) {
  delete static_cast<CommState*>(attribute);
  return MPI_SUCCESS;
}

}  // namespace

CommState::CommState(MPI_Comm comm) {
  int inter = 0;
  PMPI_Comm_rank(comm, &rank_);
  PMPI_Comm_size(comm, &size_);
  PMPI_Comm_test_inter(comm, &inter);
  inter_ = inter != 0;
  char name[MPI_MAX_OBJECT_NAME] = {};
  int length = 0;
  PMPI_Comm_get_name(comm, name, &length);
  label_ = length > 0 ? std::string(name, length) : "comm#" + std::to_string(++g_next_id);
  label_ += " (" + std::to_string(size_) + (size_ == 1 ? " rank)" : " ranks)");
}

CommState::~CommState() {
  if (steered()) {
    g_steered.fetch_sub(1);
    refresh_alltoall_fast_path();
  }
}

void CommState::set_alltoall_override(AlltoallChoice choice) {
  const bool was = steered();
  alltoall_override_ = choice;
  if (steered() != was) {
    g_steered.fetch_add(was ? -1 : 1);
    refresh_alltoall_fast_path();
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

const AlltoallPlan& CommState::alltoall_plan(coll::AlltoallAlgorithm algorithm) {
  auto& plan = plans_[static_cast<int>(algorithm)];
  if (!plan) {
    const topo::Layout& layout = hierarchy_->layout();
    const int rank = hierarchy_->rank();
    coll::Schedule schedule = coll::build_alltoall_schedule(algorithm, layout, rank);
    const coll::Traffic traffic = coll::schedule_traffic(schedule, layout, rank);
    plan = AlltoallPlan{std::move(schedule), traffic};
  }
  return *plan;
}

bool CommState::first_announcement(int size_class, coll::AlltoallAlgorithm algorithm) {
  const int code = static_cast<int>(algorithm) + 1;
  if (announced_[size_class] == code) return false;
  announced_[size_class] = code;
  return true;
}

int create_comm_state_keyval() {
  return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state, &g_keyval, nullptr);
}

void free_comm_state_keyval() {
  if (g_keyval != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&g_keyval);
}

int comm_state(MPI_Comm comm, CommState*& out) {
  void* attribute = nullptr;
  int found = 0;
  int rc = PMPI_Comm_get_attr(comm, g_keyval, &attribute, &found);
  if (rc != MPI_SUCCESS) return rc;
  if (found) {
    out = static_cast<CommState*>(attribute);
    return MPI_SUCCESS;
  }
  auto state = std::make_unique<CommState>(comm);
  rc = PMPI_Comm_set_attr(comm, g_keyval, state.get());
  if (rc != MPI_SUCCESS) return rc;
  out = state.release();
  return MPI_SUCCESS;
}

void drop_comm_state(MPI_Comm comm) {
  void* attribute = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, g_keyval, &attribute, &found) == MPI_SUCCESS && found) {
    PMPI_Comm_delete_attr(comm, g_keyval);
  }
}

}  // namespace shim
