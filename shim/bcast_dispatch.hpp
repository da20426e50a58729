// MPI_Bcast through shim: what the broadcast adds to the decision path all
// collectives share (shim/collective_dispatch.hpp).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "collectives/bcast_algorithm.hpp"
#include "collectives/bcast_policy.hpp"
#include "shim/collective_dispatch.hpp"

namespace shim {

struct BcastCall {
  using Algorithm = coll::BcastAlgorithm;
  using Facts = coll::BcastFacts;
  static constexpr Algorithm kNative = Algorithm::native;
  static constexpr std::string_view kCollective = "bcast";
  static constexpr std::string_view kSizeLabel = "message";
  static constexpr std::string_view kSetting = "SHIM_BCAST";
  static constexpr std::string_view kControlFunction = "shim_set_bcast_algorithm()";

  static const Choice<Algorithm>& setting(const Config& settings) { return settings.bcast; }
  static const coll::BcastPolicy& policy() { return coll::bcast_policy(); }
  Facts facts(CommState& state, const topo::Hierarchy& hierarchy, std::int64_t bytes) const;
  std::string explain_more(const Decision<BcastCall>& decision, CommState& state, const topo::Hierarchy& hierarchy,
                           std::int64_t bytes) const;

  Measured measure(CommState& state);
  std::string describe(const CommState& state, const topo::Hierarchy& hierarchy) const;
  void record(const Decision<BcastCall>& decision, CommState& state, const topo::Hierarchy& hierarchy,
              std::int64_t bytes) const;
  int run(const Decision<BcastCall>& decision, CommState& state, const topo::Hierarchy& hierarchy,
          std::int64_t bytes) const;

  void* buffer;
  MPI_Count count;
  MPI_Datatype type;
  int root;
  MPI_Count type_size = 0;  // found by measure()
};

DispatchOutcome dispatch_bcast(void* buffer, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm);

}  // namespace shim
