// The broadcast algorithms shim can run, and their names as they appear in
// SHIM_BCAST, SHIM_VERBOSE, the stats report and shim-info.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace shim::coll {

enum class BcastAlgorithm : std::uint8_t { native, eco, twolevel, scatter_allgather };

inline constexpr std::array kBcastAlgorithms = {BcastAlgorithm::native, BcastAlgorithm::eco, BcastAlgorithm::twolevel,
                                                BcastAlgorithm::scatter_allgather};

constexpr std::string_view name(BcastAlgorithm algorithm) {
  switch (algorithm) {
    case BcastAlgorithm::native:
      return "native";
    case BcastAlgorithm::eco:
      return "eco";
    case BcastAlgorithm::twolevel:
      return "twolevel";
    case BcastAlgorithm::scatter_allgather:
      return "scatter-allgather";
  }
  return "?";
}

}  // namespace shim::coll
