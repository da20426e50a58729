// What alltoall_latency and bcast_latency share: one size's measurement of
// native MPI against shim's algorithms of a collective, selected through
// the control API, alternating round by round, every batch's result checked,
// and shim's counters of what each algorithm sent.
#ifndef SHIM_BENCH_COLLECTIVE_HPP
#define SHIM_BENCH_COLLECTIVE_HPP

#include <shim/shim.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness.hpp"

namespace bench {

enum class Operation { alltoall, bcast };

struct Algorithm {
  std::string name;
  int id;  // shim_alltoall_algorithm or shim_bcast_algorithm
};

// The operation's algorithms named by --algorithms (all by default; native,
// the baseline of the ratios, is required), or the one named by --single.
std::vector<Algorithm> chosen_algorithms(const Args& args, Operation operation);

struct Collective {
  Operation operation;
  std::vector<Algorithm> algorithms;  // the variants, native first
  // Fill the buffers for the batch of this salt; then one call of the
  // algorithm (native: the PMPI_ function itself, so shim/native holds all
  // of shim's added time); then check the result, naming what ran.
  std::function<void(std::uint32_t salt)> prepare;
  std::function<void(int id)> call;
  std::function<void(std::uint32_t salt, const std::string& what)> verify;
};

// Collective: the algorithm shim runs on MPI_COMM_WORLD from now on.
void select(Operation operation, int id);

struct Measured {
  Samples seconds;  // per call, max over ranks
  // Per variant, per counted algorithm: shim's counters summed over ranks
  // and rounds.
  std::vector<std::vector<shim_counters>> counters;
  std::vector<std::string> names;      // of the counted algorithms
  std::string ran(int variant) const;  // "sa", "sa+rd" or "pass-through" (no counter moved)
  shim_counters total(int variant) const;
  bool counted(int variant) const;  // shim's own schedule ran: its messages are known
};

// Collective: warm-up calls of every algorithm, then `rounds` rounds of one
// batch of `iterations` calls per algorithm. `salt` counts batches.
Measured measure(const Collective& c, int iterations, int warmup, int rounds, std::uint32_t& salt);

}  // namespace bench

#endif  // SHIM_BENCH_COLLECTIVE_HPP
