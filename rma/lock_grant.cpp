#include "rma/lock_grant.hpp"

namespace shim::rma {

bool locks_held_on_return(std::string_view library_version) {
  constexpr std::string_view kDeviceLabel = "MPICH Device:";
  const std::size_t label = library_version.find(kDeviceLabel);
  if (label == std::string_view::npos) return false;
  std::string_view device = library_version.substr(label + kDeviceLabel.size());
  device = device.substr(0, device.find('\n'));
  const std::size_t start = device.find_first_not_of(" \t");
  return start != std::string_view::npos && device.substr(start).starts_with("ch4");
}

}  // namespace shim::rma
