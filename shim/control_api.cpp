// include/shim/shim.h: the control API.
#include <shim/shim.h>

#include <array>
#include <optional>

#include "common/mpi_try.hpp"
#include "shim/comm_state.hpp"
#include "shim/errors.hpp"
#include "shim/export.hpp"
#include "shim/runtime.hpp"
#include "shim/stats.hpp"

namespace {

// The public enums of shim.h, mapped onto shim's choices in one place: the
// value is the index; ..._AUTO is nullopt (the policy table).
constexpr std::array<shim::Choice<shim::coll::AlltoallAlgorithm>, 7> kAlltoallByValue = {
    std::nullopt,
    shim::coll::AlltoallAlgorithm::native,
    shim::coll::AlltoallAlgorithm::sa,
    shim::coll::AlltoallAlgorithm::rd,
    shim::coll::AlltoallAlgorithm::leader,
    shim::coll::AlltoallAlgorithm::linear,
    shim::coll::AlltoallAlgorithm::node_pairs};
constexpr std::array<shim::Choice<shim::coll::BcastAlgorithm>, 5> kBcastByValue = {
    std::nullopt, shim::coll::BcastAlgorithm::native, shim::coll::BcastAlgorithm::eco,
    shim::coll::BcastAlgorithm::twolevel, shim::coll::BcastAlgorithm::scatter_allgather};

// The state of an intracommunicator, for a collective control call.
int control_state(MPI_Comm comm, shim::CommState*& state) {
  if (comm == MPI_COMM_NULL) return MPI_ERR_COMM;
  int inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return MPI_ERR_COMM;
  return shim::comm_state(comm, state) == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_OTHER;
}

// Collective: MPI_SUCCESS when every process of comm passed `value`.
int all_agree(MPI_Comm comm, int value) {
  int extremes[2] = {value, -value};
  SHIM_TRY(PMPI_Allreduce(MPI_IN_PLACE, extremes, 2, MPI_INT, MPI_MAX, comm));
  return extremes[0] == value && -extremes[1] == value ? MPI_SUCCESS : MPI_ERR_ARG;
}

// Collective: checks that every process chose the same `value`, one of the
// enum values `by_value` maps, and sets it as comm's override.
template <typename Algorithm, std::size_t N>
int set_choice(MPI_Comm comm, int value, const std::array<shim::Choice<Algorithm>, N>& by_value) {
  if (!shim::runtime_running()) return MPI_ERR_OTHER;
  shim::CommState* state = nullptr;
  if (const int rc = control_state(comm, state); rc != MPI_SUCCESS) return shim::raise_on_comm(comm, rc);
  if (const int rc = all_agree(comm, value); rc != MPI_SUCCESS) return shim::raise_on_comm(comm, rc);
  if (value < 0 || static_cast<std::size_t>(value) >= N) return shim::raise_on_comm(comm, MPI_ERR_ARG);
  state->set_override<Algorithm>(by_value[static_cast<std::size_t>(value)]);
  return MPI_SUCCESS;
}

// Counters of one collective: one algorithm's, or the sum over all for
// ..._AUTO.
template <typename Algorithm, std::size_t N>
int read_counters(shim::stats::Collective collective, int value, const std::array<shim::Choice<Algorithm>, N>& by_value,
                  shim_counters* counters) {
  if (counters == nullptr || value < 0 || static_cast<std::size_t>(value) >= N) return MPI_ERR_ARG;
  const shim::Choice<Algorithm> chosen = by_value[static_cast<std::size_t>(value)];
  const shim::stats::Table table = shim::stats::snapshot();
  shim::stats::Counters sum{};
  for (std::size_t i = 1; i < N; ++i) {
    const Algorithm algorithm = *by_value[i];
    if (chosen && *chosen != algorithm) continue;
    const shim::stats::Counters part = shim::stats::total(table, collective, static_cast<int>(algorithm));
    for (int f = 0; f < shim::stats::kFieldCount; ++f) sum[f] += part[f];
  }
  using namespace shim::stats;
  *counters = {sum[calls],          sum[collective_calls],    sum[payload_bytes],
               sum[inter_messages], sum[inter_bytes],         sum[intra_messages],
               sum[intra_bytes],    sum[flat_inter_messages], sum[flat_inter_bytes]};
  return MPI_SUCCESS;
}

}  // namespace

SHIM_EXPORT const char* shim_version(void) { return SHIM_VERSION_STRING; }

SHIM_EXPORT int shim_set_enabled(MPI_Comm comm, int enabled) {
  if (!shim::runtime_running()) return MPI_ERR_OTHER;
  shim::CommState* state = nullptr;
  if (const int rc = control_state(comm, state); rc != MPI_SUCCESS) return shim::raise_on_comm(comm, rc);
  const int value = enabled ? 1 : 0;
  if (const int rc = all_agree(comm, value); rc != MPI_SUCCESS) return shim::raise_on_comm(comm, rc);
  state->enabled = value == 1;
  return MPI_SUCCESS;
}

SHIM_EXPORT int shim_get_enabled(MPI_Comm comm, int* enabled) {
  if (!shim::runtime_running()) return MPI_ERR_OTHER;
  if (enabled == nullptr) return shim::raise_on_comm(comm, MPI_ERR_ARG);
  shim::CommState* state = nullptr;
  if (const int rc = control_state(comm, state); rc != MPI_SUCCESS) return shim::raise_on_comm(comm, rc);
  *enabled = shim::shim_active() && state->enabled ? 1 : 0;
  return MPI_SUCCESS;
}

SHIM_EXPORT int shim_set_alltoall_algorithm(MPI_Comm comm, shim_alltoall_algorithm algorithm) {
  return set_choice(comm, static_cast<int>(algorithm), kAlltoallByValue);
}

SHIM_EXPORT int shim_set_bcast_algorithm(MPI_Comm comm, shim_bcast_algorithm algorithm) {
  return set_choice(comm, static_cast<int>(algorithm), kBcastByValue);
}

SHIM_EXPORT int shim_get_alltoall_counters(shim_alltoall_algorithm algorithm, shim_counters* counters) {
  return read_counters(shim::stats::Collective::alltoall, static_cast<int>(algorithm), kAlltoallByValue, counters);
}

SHIM_EXPORT int shim_get_bcast_counters(shim_bcast_algorithm algorithm, shim_counters* counters) {
  return read_counters(shim::stats::Collective::bcast, static_cast<int>(algorithm), kBcastByValue, counters);
}

SHIM_EXPORT int shim_reset_counters(void) {
  shim::stats::reset();
  return MPI_SUCCESS;
}
