// The alltoall algorithms shim can run, and their names as they appear in
// SHIM_ALLTOALL, SHIM_VERBOSE, the stats report and shim-info.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace shim::coll {

enum class AlltoallAlgorithm : std::uint8_t { native, sa, rd, leader, linear, node_pairs };

inline constexpr std::array kAlltoallAlgorithms = {AlltoallAlgorithm::native, AlltoallAlgorithm::sa,
                                                   AlltoallAlgorithm::rd,     AlltoallAlgorithm::leader,
                                                   AlltoallAlgorithm::linear, AlltoallAlgorithm::node_pairs};

constexpr std::string_view name(AlltoallAlgorithm algorithm) {
  switch (algorithm) {
    case AlltoallAlgorithm::native:
      return "native";
    case AlltoallAlgorithm::sa:
      return "sa";
    case AlltoallAlgorithm::rd:
      return "rd";
    case AlltoallAlgorithm::leader:
      return "leader";
    case AlltoallAlgorithm::linear:
      return "linear";
    case AlltoallAlgorithm::node_pairs:
      return "node-pairs";
  }
  return "?";
}

}  // namespace shim::coll
