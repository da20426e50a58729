#include "rma/accumulate_policy.hpp"

#include <algorithm>
#include <array>

namespace shim::rma {

std::string_view name(AccumulatePath path) {
  switch (path) {
    case AccumulatePath::native: return "native";
    case AccumulatePath::owner: return "owner";
    case AccumulatePath::caller: return "caller";
  }
  return "?";
}

namespace {

struct Rule {
  std::string_view when;
  bool (*matches)(const WindowFacts&);
  AccumulatePath path;
  std::string_view reason;
};

bool owner_possible(const WindowFacts& f) { return f.nodes == 1 || (f.servers_running && f.servers_reach); }

// Owner-computes beats caller-computes at every size measured (README,
// "Accumulate"): the data crosses the network once instead of twice, and
// the target's lock is a local spin lock instead of an MPI lock epoch. So
// auto never picks caller; it stays selectable for comparison.
constexpr std::array kRules = {
    Rule{"native requested", [](const WindowFacts& f) { return f.requested == AccumulateChoice::native; }, AccumulatePath::native,
         "requested"},
    Rule{"caller requested", [](const WindowFacts& f) { return f.requested == AccumulateChoice::caller; }, AccumulatePath::caller,
         "requested"},
    Rule{"window on one node", [](const WindowFacts& f) { return f.nodes == 1; },
         AccumulatePath::owner, "one node: every target is updated in node shared memory"},
    Rule{"every node's server is in the window's group", [](const WindowFacts& f) { return owner_possible(f); }, AccumulatePath::owner,
         "same-node targets in shared memory, other nodes through their server; measured faster than caller "
         "and native at every size"},
    Rule{"no server threads", [](const WindowFacts& f) { return !f.servers_running; }, AccumulatePath::native,
         "the window spans nodes and no server threads run (SHIM_SERVER=0, or MPI gave no MPI_THREAD_MULTIPLE)"},
    Rule{"otherwise", [](const WindowFacts&) { return true; }, AccumulatePath::native,
         "the window spans nodes and some node's server process (its lowest world rank) is not in the window's "
         "group"},
};

}  // namespace

PathDecision choose_accumulate_path(const WindowFacts& facts) {
  for (const Rule& rule : kRules) {
    if (!rule.matches(facts)) continue;
    std::string reason(rule.reason);
    if (reason == "requested") {
      reason = facts.from_info_key ? "requested by the window's info key shim_accumulate"
                                   : "requested by SHIM_ACCUMULATE";
    }
    return {rule.path, reason};
  }
  return {AccumulatePath::native, "no rule matched"};
}

std::string describe_accumulate_policy() {
  std::string text;
  for (const Rule& rule : kRules) {
    std::string when(rule.when);
    when.resize(std::max<std::size_t>(when.size(), 46), ' ');
    text += "  " + when + " -> " + std::string(name(rule.path)) + ": " + std::string(rule.reason) + "\n";
  }
  return text;
}

}  // namespace shim::rma
