#include "rma/accumulate_policy.hpp"

#include <string>

namespace shim::rma {

namespace {

std::string who_requested(const WindowFacts& f) {
  return f.requested_by_info_key ? "by the window's info key shim_accumulate" : "by SHIM_ACCUMULATE";
}

std::string where_targets_lie(const WindowFacts& f) {
  return f.callers_memory ? "same-node targets: the processes' own memory (MPI_Win_create), through cross-memory attach"
                          : "same-node targets: node shared memory (MPI_Win_allocate)";
}

// Owner-computes beats caller-computes at every size measured (README,
// "Accumulate"): the data crosses the network once instead of twice, and
// the target's lock is a local spin lock instead of an MPI lock epoch. So
// auto never picks caller; it stays selectable for comparison.
constexpr std::array kRules = {
    AccumulateRule{"native-requested", "SHIM_ACCUMULATE or info shim_accumulate = native", AccumulatePath::native,
                   "requested", [](const WindowFacts& f) { return f.requested == AccumulatePath::native; },
                   who_requested},
    AccumulateRule{"caller-requested", "SHIM_ACCUMULATE or info shim_accumulate = caller", AccumulatePath::caller,
                   "requested", [](const WindowFacts& f) { return f.requested == AccumulatePath::caller; },
                   who_requested},
    AccumulateRule{"no-cross-memory", "MPI_Win_create window and the kernel refuses cross-memory attach",
                   AccumulatePath::native,
                   "the window lies in memory its processes allocated (MPI_Win_create), and the kernel does not "
                   "let the node's processes reach each other's (process_vm_readv: ptrace permission, e.g. Yama's "
                   "ptrace_scope or a container's seccomp profile)",
                   [](const WindowFacts& f) { return f.callers_memory && !f.cross_memory; }},
    AccumulateRule{"single-node", "the window is on one node", AccumulatePath::owner,
                   "one node: every target is updated where it lies, under the node's stripe locks",
                   [](const WindowFacts& f) { return f.nodes == 1; }, where_targets_lie},
    AccumulateRule{"servers-reach", "server threads run and every node's server is in the window's group",
                   AccumulatePath::owner,
                   "same-node targets updated where they lie, other nodes' through their server; measured faster "
                   "than caller and native at every size",
                   [](const WindowFacts& f) { return f.servers_running && f.servers_reach; }, where_targets_lie},
    AccumulateRule{"no-servers", "no server threads run", AccumulatePath::native,
                   "the window spans nodes and no server threads run (SHIM_SERVER=0, or MPI gave no "
                   "MPI_THREAD_MULTIPLE)",
                   [](const WindowFacts& f) { return !f.servers_running; }},
    AccumulateRule{"server-outside-group", "otherwise", AccumulatePath::native,
                   "the window spans nodes and some node's server process (its lowest world rank) is not in the "
                   "window's group",
                   [](const WindowFacts&) { return true; }},
};

constexpr AccumulatePolicy kPolicy{kRules};

}  // namespace

const AccumulatePolicy& accumulate_policy() { return kPolicy; }

}  // namespace shim::rma
