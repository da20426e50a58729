// include/shim/shim.h: the control API.
#include <shim/shim.h>

#include <algorithm>
#include <string_view>

#include "rma/managed_window.hpp"
#include "shim/comm_state.hpp"
#include "shim/export.hpp"
#include "shim/runtime.hpp"
#include "shim/stats.hpp"

namespace {

int raise(MPI_Comm comm, int rc) {
  // Errors that belong to no valid communicator go to MPI_COMM_SELF (MPI-4 8.3).
  PMPI_Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_SELF : comm, rc);
  return rc;
}

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
  const int rc = PMPI_Allreduce(MPI_IN_PLACE, extremes, 2, MPI_INT, MPI_MAX, comm);
  if (rc != MPI_SUCCESS) return rc;
  return extremes[0] == value && -extremes[1] == value ? MPI_SUCCESS : MPI_ERR_ARG;
}

static_assert(SHIM_ALLTOALL_NATIVE == static_cast<int>(shim::coll::AlltoallAlgorithm::native) + 1 &&
              SHIM_ALLTOALL_SA == static_cast<int>(shim::coll::AlltoallAlgorithm::sa) + 1 &&
              SHIM_ALLTOALL_RD == static_cast<int>(shim::coll::AlltoallAlgorithm::rd) + 1 &&
              SHIM_ALLTOALL_LEADER == static_cast<int>(shim::coll::AlltoallAlgorithm::leader) + 1);

static_assert(SHIM_BCAST_NATIVE == static_cast<int>(shim::coll::BcastAlgorithm::native) + 1 &&
              SHIM_BCAST_ECO == static_cast<int>(shim::coll::BcastAlgorithm::eco) + 1 &&
              SHIM_BCAST_TWOLEVEL == static_cast<int>(shim::coll::BcastAlgorithm::twolevel) + 1);

constexpr shim::AlltoallChoice kAlltoallChoices[] = {shim::AlltoallChoice::automatic, shim::AlltoallChoice::native,
                                                     shim::AlltoallChoice::sa, shim::AlltoallChoice::rd,
                                                     shim::AlltoallChoice::leader};
constexpr shim::BcastChoice kBcastChoices[] = {shim::BcastChoice::automatic, shim::BcastChoice::native,
                                               shim::BcastChoice::eco, shim::BcastChoice::twolevel};

// Collective: checks that every process chose the same `value` (an enum of
// shim.h, valid below `choices`) and applies it to comm's state.
template <typename Apply>
int set_choice(MPI_Comm comm, int value, int choices, Apply apply) {
  if (!shim::runtime_running()) return MPI_ERR_OTHER;
  shim::CommState* state = nullptr;
  if (const int rc = control_state(comm, state); rc != MPI_SUCCESS) return raise(comm, rc);
  if (const int rc = all_agree(comm, value); rc != MPI_SUCCESS) return raise(comm, rc);
  if (value < 0 || value >= choices) return raise(comm, MPI_ERR_ARG);
  apply(*state);
  return MPI_SUCCESS;
}

// Counters of one collective; `value` 0 (..._AUTO) sums its algorithms,
// otherwise algorithm value - 1.
int read_counters(shim::stats::Collective collective, int value, int algorithms, shim_counters* counters) {
  if (counters == nullptr || value < 0 || value > algorithms) return MPI_ERR_ARG;
  const shim::stats::Table table = shim::stats::snapshot();
  shim::stats::Counters sum{};
  for (int a = 0; a < algorithms; ++a) {
    if (value != 0 && a != value - 1) continue;
    const shim::stats::Counters part = shim::stats::total(table, collective, a);
    for (int f = 0; f < shim::stats::kFieldCount; ++f) sum[f] += part[f];
  }
  using namespace shim::stats;
  *counters = {sum[calls],       sum[collective_calls], sum[payload_bytes], sum[inter_messages],     sum[inter_bytes],
               sum[intra_messages], sum[intra_bytes],   sum[flat_inter_messages], sum[flat_inter_bytes]};
  return MPI_SUCCESS;
}

}  // namespace

SHIM_EXPORT const char* shim_version(void) { return SHIM_VERSION_STRING; }

SHIM_EXPORT int shim_set_enabled(MPI_Comm comm, int enabled) {
  if (!shim::runtime_running()) return MPI_ERR_OTHER;
  shim::CommState* state = nullptr;
  if (const int rc = control_state(comm, state); rc != MPI_SUCCESS) return raise(comm, rc);
  const int value = enabled ? 1 : 0;
  if (const int rc = all_agree(comm, value); rc != MPI_SUCCESS) return raise(comm, rc);
  state->enabled = value == 1;
  return MPI_SUCCESS;
}

SHIM_EXPORT int shim_get_enabled(MPI_Comm comm, int* enabled) {
  if (!shim::runtime_running()) return MPI_ERR_OTHER;
  if (enabled == nullptr) return raise(comm, MPI_ERR_ARG);
  shim::CommState* state = nullptr;
  if (const int rc = control_state(comm, state); rc != MPI_SUCCESS) return raise(comm, rc);
  *enabled = shim::shim_active() && state->enabled ? 1 : 0;
  return MPI_SUCCESS;
}

SHIM_EXPORT int shim_set_alltoall_algorithm(MPI_Comm comm, shim_alltoall_algorithm algorithm) {
  const int value = static_cast<int>(algorithm);
  return set_choice(comm, value, static_cast<int>(std::size(kAlltoallChoices)),
                    [value](shim::CommState& state) { state.set_alltoall_override(kAlltoallChoices[value]); });
}

SHIM_EXPORT int shim_set_bcast_algorithm(MPI_Comm comm, shim_bcast_algorithm algorithm) {
  const int value = static_cast<int>(algorithm);
  return set_choice(comm, value, static_cast<int>(std::size(kBcastChoices)),
                    [value](shim::CommState& state) { state.set_bcast_override(kBcastChoices[value]); });
}

SHIM_EXPORT int shim_get_alltoall_counters(shim_alltoall_algorithm algorithm, shim_counters* counters) {
  return read_counters(shim::stats::Collective::alltoall, static_cast<int>(algorithm),
                       static_cast<int>(shim::coll::kAlltoallAlgorithms.size()), counters);
}

SHIM_EXPORT int shim_get_bcast_counters(shim_bcast_algorithm algorithm, shim_counters* counters) {
  return read_counters(shim::stats::Collective::bcast, static_cast<int>(algorithm),
                       static_cast<int>(shim::coll::kBcastAlgorithms.size()), counters);
}

SHIM_EXPORT int shim_reset_counters(void) {
  shim::stats::reset();
  return MPI_SUCCESS;
}

SHIM_EXPORT int shim_win_accumulate_path(MPI_Win win, char* path, int path_len) {
  if (win == MPI_WIN_NULL || path == nullptr || path_len < 1) {
    PMPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_ARG);
    return MPI_ERR_ARG;
  }
  std::string_view taken = "native";
  if (shim::shim_active()) {
    if (const shim::rma::ManagedWindow* window = shim::rma::ManagedWindow::of(win)) taken = name(window->path());
  }
  const std::size_t length = std::min(taken.size(), static_cast<std::size_t>(path_len - 1));
  taken.copy(path, length);
  path[length] = '\0';
  return MPI_SUCCESS;
}
