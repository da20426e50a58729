#include "rma/accumulate_policy.hpp"

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
    Rule{[](const WindowFacts& f) { return f.requested == AccumulateChoice::native; }, AccumulatePath::native,
         "requested"},
    Rule{[](const WindowFacts& f) { return f.requested == AccumulateChoice::caller; }, AccumulatePath::caller,
         "requested"},
    Rule{[](const WindowFacts& f) { return f.nodes == 1 && f.requested != AccumulateChoice::native; },
         AccumulatePath::owner, "one node: every target is updated in node shared memory"},
    Rule{[](const WindowFacts& f) { return owner_possible(f); }, AccumulatePath::owner,
         "same-node targets in shared memory, other nodes through their server; measured faster than caller "
         "and native at every size"},
    Rule{[](const WindowFacts& f) { return !f.servers_running; }, AccumulatePath::native,
         "the window spans nodes and no server threads run (SHIM_SERVER=0, or MPI gave no MPI_THREAD_MULTIPLE)"},
    Rule{[](const WindowFacts&) { return true; }, AccumulatePath::native,
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
  return "accumulate family on windows from MPI_Win_allocate (one path per window, every size):\n"
         "  SHIM_ACCUMULATE or info shim_accumulate = native|caller -> that path\n"
         "  owner requested, or auto, window on one node           -> owner (shared memory)\n"
         "  owner requested, or auto, servers reach every node      -> owner (shared memory + node servers)\n"
         "  otherwise                                               -> native\n"
         "  (auto never picks caller: owner measured faster at every size)\n"
         "MPI_Win_create, MPI_Win_create_dynamic, MPI_Win_allocate_shared windows -> native";
}

}  // namespace shim::rma
