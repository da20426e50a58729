// MPI_Alltoall through shim: what the alltoall adds to the decision path all
// collectives share (shim/collective_dispatch.hpp).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "collectives/alltoall_algorithm.hpp"
#include "collectives/alltoall_policy.hpp"
#include "collectives/alltoall_runner.hpp"
#include "shim/collective_dispatch.hpp"

namespace shim {

struct AlltoallCall {
  using Algorithm = coll::AlltoallAlgorithm;
  using Facts = coll::AlltoallFacts;
  static constexpr Algorithm kNative = Algorithm::native;
  static constexpr std::string_view kCollective = "alltoall";
  static constexpr std::string_view kSizeLabel = "block";
  static constexpr std::string_view kSetting = "SHIM_ALLTOALL";
  static constexpr std::string_view kControlFunction = "shim_set_alltoall_algorithm()";

  static const Choice<Algorithm>& setting(const Config& settings) { return settings.alltoall; }
  static const coll::AlltoallPolicy& policy() { return coll::alltoall_policy(); }
  Facts facts(CommState& state, const topo::Hierarchy& hierarchy, std::int64_t block_bytes) const;
  std::string explain_more(const Decision<AlltoallCall>& decision, CommState& state, const topo::Hierarchy& hierarchy,
                           std::int64_t block_bytes) const;

  Measured measure(CommState& state) const;
  std::string describe(const CommState& state, const topo::Hierarchy& hierarchy) const;
  void record(const Decision<AlltoallCall>& decision, CommState& state, const topo::Hierarchy& hierarchy,
              std::int64_t block_bytes) const;
  int run(const Decision<AlltoallCall>& decision, CommState& state, const topo::Hierarchy& hierarchy,
          std::int64_t block_bytes) const;

  coll::AlltoallArgs args;
};

DispatchOutcome dispatch_alltoall(const coll::AlltoallArgs& args, MPI_Comm comm);

}  // namespace shim
