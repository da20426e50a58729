#include "collective.hpp"

#include <algorithm>
#include <array>

namespace bench {

namespace {

constexpr std::array<std::uint64_t shim_counters::*, 9> kFields = {&shim_counters::calls,
                                                                   &shim_counters::collective_calls,
                                                                   &shim_counters::payload_bytes,
                                                                   &shim_counters::inter_node_messages,
                                                                   &shim_counters::inter_node_bytes,
                                                                   &shim_counters::intra_node_messages,
                                                                   &shim_counters::intra_node_bytes,
                                                                   &shim_counters::flat_inter_node_messages,
                                                                   &shim_counters::flat_inter_node_bytes};

void add(shim_counters& into, const shim_counters& a, const shim_counters& minus) {
  for (const auto field : kFields) into.*field += a.*field - minus.*field;
}

// Table order. shim keeps no counters of "auto": its calls count as the
// algorithm the policy picked.
const std::vector<Algorithm>& algorithms_of(Operation operation) {
  static const std::vector<Algorithm> alltoall = {{"native", SHIM_ALLTOALL_NATIVE},
                                                  {"auto", SHIM_ALLTOALL_AUTO},
                                                  {"sa", SHIM_ALLTOALL_SA},
                                                  {"rd", SHIM_ALLTOALL_RD},
                                                  {"leader", SHIM_ALLTOALL_LEADER},
                                                  {"linear", SHIM_ALLTOALL_LINEAR},
                                                  {"node-pairs", SHIM_ALLTOALL_NODE_PAIRS}};
  static const std::vector<Algorithm> bcast = {{"native", SHIM_BCAST_NATIVE},
                                               {"auto", SHIM_BCAST_AUTO},
                                               {"eco", SHIM_BCAST_ECO},
                                               {"twolevel", SHIM_BCAST_TWOLEVEL},
                                               {"scatter-allgather", SHIM_BCAST_SCATTER_ALLGATHER}};
  return operation == Operation::alltoall ? alltoall : bcast;
}

shim_counters counters_of(Operation operation, int id) {
  shim_counters counters{};
  if (operation == Operation::alltoall) {
    check(shim_get_alltoall_counters(static_cast<shim_alltoall_algorithm>(id), &counters),
          "shim_get_alltoall_counters");
  } else {
    check(shim_get_bcast_counters(static_cast<shim_bcast_algorithm>(id), &counters), "shim_get_bcast_counters");
  }
  return counters;
}

}  // namespace

std::vector<Algorithm> chosen_algorithms(const Args& args, Operation operation) {
  const std::vector<Algorithm>& known = algorithms_of(operation);
  std::vector<std::string> names;
  std::string all;
  for (const Algorithm& a : known) {
    names.push_back(a.name);
    all += (all.empty() ? "" : ",") + a.name;
  }
  const bool single = args.given("--single");
  if (single && args.given("--algorithms")) throw UsageError("--algorithms and --single exclude each other");
  std::vector<Algorithm> chosen;
  for (const std::string& name : args.choose(single ? "--single" : "--algorithms", names, all))
    chosen.push_back(*std::find_if(known.begin(), known.end(), [&](const Algorithm& a) { return a.name == name; }));
  if (single && chosen.size() != 1) throw UsageError("--single takes one algorithm");
  if (!single && chosen.front().name != "native")
    throw UsageError("--algorithms: native is required (it is the baseline of the shim/native ratios)");
  return chosen;
}

void select(Operation operation, int id) {
  if (operation == Operation::alltoall) {
    check(shim_set_alltoall_algorithm(MPI_COMM_WORLD, static_cast<shim_alltoall_algorithm>(id)),
          "shim_set_alltoall_algorithm");
  } else {
    check(shim_set_bcast_algorithm(MPI_COMM_WORLD, static_cast<shim_bcast_algorithm>(id)), "shim_set_bcast_algorithm");
  }
}

std::string Measured::ran(int variant) const {
  std::string text;
  for (std::size_t k = 0; k < names.size(); ++k)
    if (counters[static_cast<std::size_t>(variant)][k].calls > 0) text += (text.empty() ? "" : "+") + names[k];
  // No counter moved: the PMPI baseline, or shim's fast path straight to MPI.
  return text.empty() ? "pass-through" : text;
}

bool Measured::counted(int variant) const {
  const std::string what = ran(variant);
  return what != "native" && what != "pass-through";
}

shim_counters Measured::total(int variant) const {
  shim_counters sum{};
  for (const shim_counters& c : counters[static_cast<std::size_t>(variant)]) add(sum, c, shim_counters{});
  return sum;
}

Measured measure(const Collective& c, int iterations, int warmup, int rounds, std::uint32_t& salt) {
  const auto variants = c.algorithms.size();
  c.prepare(salt);
  for (const Algorithm& a : c.algorithms) {
    select(c.operation, a.id);
    for (int i = 0; i < warmup; ++i) c.call(a.id);
  }
  std::vector<Algorithm> counted;
  for (const Algorithm& a : algorithms_of(c.operation))
    if (a.name != "auto") counted.push_back(a);
  std::vector<std::vector<shim_counters>> counters(variants, std::vector<shim_counters>(counted.size()));
  auto read = [&] {
    std::vector<shim_counters> now;
    for (const Algorithm& a : counted) now.push_back(counters_of(c.operation, a.id));
    return now;
  };
  Samples seconds = alternate(static_cast<int>(variants), rounds, 1, [&](int variant, int round) {
    const Algorithm& a = c.algorithms[static_cast<std::size_t>(variant)];
    select(c.operation, a.id);
    c.prepare(++salt);
    const std::vector<shim_counters> before = read();
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < iterations; ++i) c.call(a.id);
    const double elapsed = (MPI_Wtime() - start) / iterations;
    const std::vector<shim_counters> after = read();
    std::string ran;
    for (std::size_t k = 0; k < after.size(); ++k) {
      add(counters[static_cast<std::size_t>(variant)][k], after[k], before[k]);
      if (after[k].calls != before[k].calls) ran += (ran.empty() ? "" : "+") + counted[k].name;
    }
    c.verify(salt,
             a.name + " (shim ran " + (ran.empty() ? "pass-through" : ran) + "), round " + std::to_string(round + 1));
    return std::vector<double>{elapsed};
  });
  std::vector<std::uint64_t> packed;
  for (const auto& per_variant : counters)
    for (const shim_counters& k : per_variant)
      for (const auto field : kFields) packed.push_back(k.*field);
  MPI_Allreduce(MPI_IN_PLACE, packed.data(), static_cast<int>(packed.size()), MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  auto next = packed.begin();
  for (auto& per_variant : counters)
    for (shim_counters& k : per_variant)
      for (const auto field : kFields) k.*field = *next++;
  std::vector<std::string> names;
  for (const Algorithm& a : counted) names.push_back(a.name);
  return {seconds, counters, names};
}

}  // namespace bench
