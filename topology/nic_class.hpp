// How a node's network interface behaves under concurrent senders (Kumar,
// Mamidala, Panda, "Scaling Alltoall Collective on Multi-core Systems",
// Figures 2-4): onload NICs gain throughput from more sending cores, offload
// NICs do not and suffer from contention.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace shim::topo {

enum class NicClass : std::uint8_t { onload, offload };

constexpr std::string_view name(NicClass nic) { return nic == NicClass::onload ? "onload" : "offload"; }

constexpr std::optional<NicClass> parse_nic_class(std::string_view text) {
  if (text == "onload") return NicClass::onload;
  if (text == "offload") return NicClass::offload;
  return std::nullopt;
}

}  // namespace shim::topo
