// The decision path every collective shim handles takes, written once: check
// that shim can handle the call, pick the algorithm (the control API, the
// SHIM_* setting, or the policy table), announce it under SHIM_VERBOSE,
// count it, and run it; anything shim cannot handle goes to native MPI,
// explicitly. A collective supplies a `Call` type with what differs:
//
//   Algorithm, Facts                       the policy's outcome and input
//   kNative                                the algorithm that is MPI's own
//   kCollective, kSizeLabel                "alltoall", "block"
//   kSetting, kControlFunction             "SHIM_ALLTOALL", "shim_set_alltoall_algorithm()"
//   static setting(config), policy()       the SHIM_* choice and the rule table
//   facts(state, hierarchy, bytes)         the policy's input for this call
//   explain_more(decision, state, hierarchy, bytes)   what the layout or pipelining adds
//   measure(state) -> Measured             the call's size, or why shim leaves it to MPI
//   describe(state, hierarchy)             the layout, for the announcement
//   record(decision, state, hierarchy, bytes)
//   run(decision, state, hierarchy, bytes) -> MPI error code
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/format.hpp"
#include "common/log.hpp"
#include "common/rule_table.hpp"
#include "shim/comm_state.hpp"
#include "shim/errors.hpp"
#include "shim/runtime.hpp"
#include "shim/stats.hpp"

namespace shim {

struct DispatchOutcome {
  bool use_native;  // the interposer runs PMPI_* with the original arguments
  int rc;           // otherwise: the result, already raised on the communicator's handler
};

template <typename Call>
struct Decision {
  typename Call::Algorithm algorithm;
  const Rule<typename Call::Facts, typename Call::Algorithm>* rule;  // nullptr when forced
  bool forced_by_api;

  std::string_view rule_name() const { return rule != nullptr ? rule->name : "forced"; }
};

// What measure() found: the bytes that select the algorithm, or that shim
// leaves the call to MPI, silently (arguments native MPI must reject, with
// its own report) or announced with `decline`.
struct Measured {
  bool handle = false;
  std::int64_t bytes = 0;
  std::string decline;
};

// Looks things up; builds nothing per call.
template <typename Call>
Decision<Call> decide(const CommState& state, const typename Call::Facts& facts) {
  const auto& forced = state.template override_for<typename Call::Algorithm>();
  const Choice<typename Call::Algorithm> choice = forced ? *forced : Call::setting(config());
  if (choice) return {*choice, nullptr, forced.has_value()};
  const auto& rule = Call::policy().choose(facts);
  return {rule.outcome, &rule, false};
}

// Why, with this call's numbers and what the layout changes.
template <typename Call>
std::string explain(const Call& call, const Decision<Call>& decision, CommState& state,
                    const topo::Hierarchy& hierarchy, std::int64_t bytes) {
  std::string reason;
  if (decision.rule == nullptr) {
    reason = decision.forced_by_api
                 ? "forced by " + std::string(Call::kControlFunction)
                 : "forced by " + std::string(Call::kSetting) + "=" + std::string(name(decision.algorithm));
  } else {
    reason = Call::policy().explain(*decision.rule, call.facts(state, hierarchy, bytes));
  }
  return reason + call.explain_more(decision, state, hierarchy, bytes);
}

// "<collective> on <comm>: <what>; <size label> <n> (class <=c) -> <algorithm>: <reason>"
template <typename Call>
void announce(const CommState& state, const std::string& what, std::int64_t bytes, std::string_view algorithm,
              const std::string& reason) {
  print_line(std::string(Call::kCollective) + " on " + state.label() + ": " + what + "; " +
             std::string(Call::kSizeLabel) + " " + format_bytes(bytes) + " (class " +
             stats::size_class_label(stats::size_class(bytes)) + ") -> " + std::string(algorithm) + ": " + reason);
}

template <typename Call>
DispatchOutcome dispatch(Call& call, MPI_Comm comm) {
  CommState* state = nullptr;
  if (comm == MPI_COMM_NULL || comm_state(comm, state) != MPI_SUCCESS || !state->enabled) return {true, MPI_SUCCESS};
  Measured measured = call.measure(*state);
  if (!measured.handle && measured.decline.empty()) return {true, MPI_SUCCESS};
  if (state->inter()) measured.decline = "intercommunicator (not supported by shim)";
  const std::int64_t bytes = measured.bytes;
  const bool verbose = config().verbose && state->rank() == 0;
  if (!measured.decline.empty()) {
    // Announced once per communicator and size class, not counted.
    if (verbose && state->first_announcement(stats::size_class(bytes), Call::kNative)) {
      announce<Call>(*state, "not handled", bytes, "native", measured.decline);
    }
    return {true, MPI_SUCCESS};
  }

  const topo::Hierarchy* hierarchy = nullptr;
  if (const int rc = state->hierarchy(comm, config().node_size, hierarchy); rc != MPI_SUCCESS) {
    return {false, raise_on_comm(comm, rc)};
  }
  const Decision<Call> decision = decide<Call>(*state, call.facts(*state, *hierarchy, bytes));
  if (verbose && state->first_announcement(stats::size_class(bytes), decision.algorithm)) {
    announce<Call>(*state, call.describe(*state, *hierarchy), bytes,
                   std::string(name(decision.algorithm)) + " [" + std::string(decision.rule_name()) + "]",
                   explain(call, decision, *state, *hierarchy, bytes));
  }
  call.record(decision, *state, *hierarchy, bytes);
  if (decision.algorithm == Call::kNative) return {true, MPI_SUCCESS};
  return {false, raise_on_comm(comm, call.run(decision, *state, *hierarchy, bytes))};
}

}  // namespace shim
