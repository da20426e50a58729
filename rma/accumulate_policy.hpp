// Which path the accumulate family takes on a window: one choice per window,
// for every size, because atomicity only holds among operations that take
// the same path. A rule table: the first match decides and explains itself.
#pragma once

#include <array>
#include <optional>
#include <string_view>

#include "common/rule_table.hpp"

namespace shim::rma {

enum class AccumulatePath { native, owner, caller };

inline constexpr std::array kAccumulatePaths = {AccumulatePath::native, AccumulatePath::owner, AccumulatePath::caller};

constexpr std::string_view name(AccumulatePath path) {
  switch (path) {
    case AccumulatePath::native:
      return "native";
    case AccumulatePath::owner:
      return "owner";
    case AccumulatePath::caller:
      return "caller";
  }
  return "?";
}

struct WindowFacts {
  std::optional<AccumulatePath> requested;  // SHIM_ACCUMULATE or the info key; nullopt: auto
  bool requested_by_info_key = false;
  int nodes = 1;               // nodes the window's processes are on
  bool servers_reach = false;  // every node's server is in the window's group
  bool servers_running = false;
  bool callers_memory = false;  // MPI_Win_create: the memory is the processes' own
  bool cross_memory = false;    // the kernel lets the node's processes reach each other's memory
};

using AccumulateRule = Rule<WindowFacts, AccumulatePath>;
using AccumulatePolicy = RuleTable<WindowFacts, AccumulatePath>;

const AccumulatePolicy& accumulate_policy();

}  // namespace shim::rma
