// Which path the accumulate family takes on a window: one choice per window,
// for every size, because atomicity only holds among operations that take
// the same path. A table of rules, first match wins, each with its reason.
#pragma once

#include <string>
#include <string_view>

#include "shim/config.hpp"

namespace shim::rma {

enum class AccumulatePath { native, owner, caller };

std::string_view name(AccumulatePath path);

struct WindowFacts {
  AccumulateChoice requested = AccumulateChoice::automatic;  // setting or info key
  bool from_info_key = false;
  int nodes = 1;               // nodes the window's processes are on
  bool servers_reach = false;  // every node's server is in the window's group
  bool servers_running = false;
};

struct PathDecision {
  AccumulatePath path;
  std::string reason;
};

PathDecision choose_accumulate_path(const WindowFacts& facts);

// The table, one line per rule ("  <when> -> <path>: <reason>"), for shim-info.
std::string describe_accumulate_policy();

}  // namespace shim::rma
