// What shim keeps per communicator, cached as an MPI attribute whose delete
// callback frees it (and the communicators it derived) when the user frees
// the communicator. Handles are reused after MPI_Comm_free, so nothing is
// ever looked up by handle.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "collectives/alltoall_algorithm.hpp"
#include "collectives/schedule.hpp"
#include "collectives/scratch_buffer.hpp"
#include "collectives/traffic.hpp"
#include "shim/config.hpp"
#include "topology/hierarchy.hpp"

namespace shim {

struct AlltoallPlan {
  coll::Schedule schedule;
  coll::Traffic traffic;  // in blocks, per call, for this process
};

class CommState {
 public:
  explicit CommState(MPI_Comm comm);
  CommState(const CommState&) = delete;
  CommState& operator=(const CommState&) = delete;
  ~CommState();

  // Control API settings; both are set collectively, so all ranks agree.
  bool enabled = true;
  // Overrides SHIM_ALLTOALL on this communicator; automatic = the policy table.
  const std::optional<AlltoallChoice>& alltoall_override() const { return alltoall_override_; }
  void set_alltoall_override(AlltoallChoice choice);

  // "MPI_COMM_WORLD (8 ranks)" or "comm#3 (4 ranks)", for messages.
  const std::string& label() const { return label_; }
  // Fixed for the communicator's lifetime, so asked once.
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool inter() const { return inter_; }

  // Builds the hierarchy on first use: collective over `comm`.
  int hierarchy(MPI_Comm comm, int node_size, const topo::Hierarchy*& out);
  // Requires hierarchy(); built on first use.
  const AlltoallPlan& alltoall_plan(coll::AlltoallAlgorithm algorithm);
  const coll::Traffic& flat_traffic() const { return flat_traffic_; }

  coll::ScratchBuffer& scratch() { return scratch_; }

  // True the first time `algorithm` is chosen for this size class (or when it
  // differs from the last announced choice): the decision should be printed.
  bool first_announcement(int size_class, coll::AlltoallAlgorithm algorithm);

 private:
  bool steered() const { return alltoall_override_.has_value() && *alltoall_override_ != AlltoallChoice::automatic; }

  std::optional<AlltoallChoice> alltoall_override_;
  std::string label_;
  int rank_ = 0;
  int size_ = 0;
  bool inter_ = false;
  std::unique_ptr<topo::Hierarchy> hierarchy_;
  coll::Traffic flat_traffic_;
  std::array<std::optional<AlltoallPlan>, coll::kAlltoallAlgorithms.size()> plans_;
  coll::ScratchBuffer scratch_;
  std::array<int, 64> announced_{};  // algorithm index + 1 per size class, 0 = none
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
