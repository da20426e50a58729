// What shim keeps per communicator, cached as an MPI attribute whose delete
// callback frees it (and the communicators it derived) when the user frees
// the communicator. Handles are reused after MPI_Comm_free, so nothing is
// ever looked up by handle.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "collectives/alltoall_algorithm.hpp"
#include "collectives/bcast_algorithm.hpp"
#include "collectives/bcast_pipeline.hpp"
#include "collectives/bcast_tree.hpp"
#include "collectives/schedule.hpp"
#include "collectives/scratch_buffer.hpp"
#include "collectives/traffic.hpp"
#include "shim/config.hpp"
#include "topology/hierarchy.hpp"
#include "topology/subnet_partition.hpp"

namespace shim {

// A schedule and what it sends, in its blocks: an alltoall's, or the
// scatter-allgather broadcast's stage blocks.
struct SchedulePlan {
  coll::Schedule schedule;
  coll::Traffic traffic;  // in blocks, per call, for this process
};

// This rank's place in each tree of a broadcast (one, or one per turn when
// subnet entries take turns: collectives/bcast_tree).
struct BcastRole {
  std::vector<coll::RelayRole> trees;
  std::vector<int> inter_node_children;  // per tree: of its children, those on other nodes
};

class CommState {
 public:
  explicit CommState(MPI_Comm comm);
  CommState(const CommState&) = delete;
  CommState& operator=(const CommState&) = delete;
  ~CommState();

  // Control API settings; both are set collectively, so all ranks agree.
  bool enabled = true;
  // The choice the control API made for `Algorithm`'s collective on this
  // communicator, overriding SHIM_ALLTOALL / SHIM_BCAST (a Choice of
  // nullopt: the policy table); nullopt when it made none.
  template <typename Algorithm>
  const std::optional<Choice<Algorithm>>& override_for() const {
    return steering<Algorithm>().override;
  }
  template <typename Algorithm>
  void set_override(Choice<Algorithm> choice) {
    change_overrides([&] { steering<Algorithm>().override = choice; });
  }

  // "MPI_COMM_WORLD (8 ranks)" or "comm#3 (4 ranks)", for messages.
  const std::string& label() const { return label_; }
  // Fixed for the communicator's lifetime, so asked once.
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool inter() const { return inter_; }

  // Builds the hierarchy on first use: collective over `comm`.
  int hierarchy(MPI_Comm comm, int node_size, const topo::Hierarchy*& out);
  // The following require hierarchy().
  const topo::Layout& hierarchy_layout() const { return hierarchy_->layout(); }
  // The schedule `algorithm` runs for blocks of `block_bytes`, built on first use.
  const SchedulePlan& alltoall_plan(coll::AlltoallAlgorithm algorithm, std::int64_t block_bytes);
  const coll::Traffic& flat_traffic() const { return flat_traffic_; }

  coll::ScratchBuffer& scratch() { return scratch_; }

  // The subnet of each node and measured costs between nodes, from the
  // network picture; empty without one. Requires hierarchy().
  const std::vector<int>& subnet_of_node();
  const topo::CostMatrix& node_cost();
  int subnets_spanned();

  // This rank's part of a broadcast tree, built on first use per root.
  const BcastRole& bcast_role(coll::BcastAlgorithm algorithm, int root, coll::BcastFanout fanout);
  // This rank's part of the scatter-allgather broadcast from `root`, in
  // blocks of one per node, built on first use per root.
  const SchedulePlan& bcast_scatter_allgather(int root);

  // True the first time `algorithm` is chosen for this size class (or when it
  // differs from the last announced choice): the decision should be printed.
  template <typename Algorithm>
  bool first_announcement(int size_class, Algorithm algorithm) {
    int& announced = steering<Algorithm>().announced[static_cast<std::size_t>(size_class)];
    const int code = static_cast<int>(algorithm) + 1;
    if (announced == code) return false;
    announced = code;
    return true;
  }

 private:
  template <typename Algorithm>
  struct Steering {
    std::optional<Choice<Algorithm>> override;
    // Per size class: algorithm + 1 of the last announced decision, 0 = none.
    std::array<int, 64> announced{};
  };
  template <typename Algorithm, typename Self>
  static auto& steering_of(Self& self) {
    if constexpr (std::is_same_v<Algorithm, coll::AlltoallAlgorithm>) {
      return self.alltoall_;
    } else {
      return self.bcast_;
    }
  }
  template <typename Algorithm>
  Steering<Algorithm>& steering() {
    return steering_of<Algorithm>(*this);
  }
  template <typename Algorithm>
  const Steering<Algorithm>& steering() const {
    return steering_of<Algorithm>(*this);
  }
  // An algorithm forced through the control API: the fast path must stay off.
  bool steered() const {
    return (alltoall_.override && alltoall_.override->has_value()) || (bcast_.override && bcast_.override->has_value());
  }
  void change_overrides(const std::function<void()>& change);

  Steering<coll::AlltoallAlgorithm> alltoall_;
  Steering<coll::BcastAlgorithm> bcast_;
  std::string label_;
  int rank_ = 0;
  int size_ = 0;
  bool inter_ = false;
  std::unique_ptr<topo::Hierarchy> hierarchy_;
  coll::Traffic flat_traffic_;
  // One per algorithm, then node pairs in two hops (coll::ScheduleKind).
  std::array<std::optional<SchedulePlan>, coll::kAlltoallAlgorithms.size() + 1> plans_;
  coll::ScratchBuffer scratch_;
  std::optional<std::vector<int>> subnet_of_node_;
  topo::CostMatrix node_cost_;
  std::map<std::tuple<int, int, coll::BcastFanout>, BcastRole> bcast_roles_;  // (algorithm, root, fan-outs)
  std::map<int, SchedulePlan> bcast_scatter_allgather_;                       // by root
};

// Whether any live communicator has an algorithm forced through the control
// API; while none has, a single-node job may skip shim's bookkeeping.
bool any_communicator_steered();

// The keyval is created after MPI_Init and freed before MPI_Finalize.
int create_comm_state_keyval();
void free_comm_state_keyval();

// The state cached on `comm`, created and attached on first use.
int comm_state(MPI_Comm comm, CommState*& out);
// Frees the state cached on `comm`, if any (used for the predefined
// communicators at finalize).
void drop_comm_state(MPI_Comm comm);

}  // namespace shim
