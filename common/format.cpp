#include "common/format.hpp"

#include <array>

namespace shim {

std::string format_bytes(std::int64_t bytes) {
  static constexpr std::array<const char*, 4> kUnits = {"B", "KiB", "MiB", "GiB"};
  std::size_t unit = 0;
  while (unit + 1 < kUnits.size() && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + " " + kUnits[unit];
}

}  // namespace shim
