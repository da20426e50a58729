#include "message_cost_model.hpp"

#include <smpi/smpi.h>

#include <array>
#include <cstdlib>
#include <simgrid/s4u/Host.hpp>
#include <string>
#include <xbt/config.hpp>

namespace shim::sim {

namespace {

bool parse_number(std::string_view text, double& out) {
  const std::string copy(text);
  char* end = nullptr;
  out = std::strtod(copy.c_str(), &end);
  return !copy.empty() && end == copy.c_str() + copy.size();
}

// Splits `text` at the first `separator`: `head` before it, `text` after it
// (empty when there is none).
std::string_view take(std::string_view& text, char separator) {
  const std::size_t at = text.find(separator);
  const std::string_view head = text.substr(0, at);
  text = at == std::string_view::npos ? std::string_view{} : text.substr(at + 1);
  return head;
}

}  // namespace

bool CostCurve::parse(std::string_view text) {
  sections_.clear();
  while (!text.empty()) {
    std::string_view fields = take(text, ';');
    const std::string_view from = take(fields, ':');
    const std::string_view offset = take(fields, ':');
    Section s{};
    double from_value = 0;
    if (!parse_number(from, from_value) || from_value < 0 || !parse_number(offset, s.offset) ||
        !parse_number(fields, s.per_byte) || (!sections_.empty() && from_value <= sections_.back().from)) {
      sections_.clear();
      return false;
    }
    s.from = static_cast<std::size_t>(from_value);
    sections_.push_back(s);
  }
  return !sections_.empty();
}

double CostCurve::seconds(std::size_t bytes) const {
  const Section* chosen = &sections_.front();
  for (const Section& s : sections_) {
    if (s.from <= bytes) chosen = &s;
  }
  return chosen->offset + chosen->per_byte * static_cast<double>(bytes);
}

bool use_node_costs(std::string_view spec) {
  constexpr std::array<const char*, 3> kNetworkSettings = {"smpi/os", "smpi/ois", "smpi/or"};
  constexpr std::array<SmpiOperation, 3> kOperations = {SmpiOperation::SEND, SmpiOperation::ISEND, SmpiOperation::RECV};
  std::array<CostCurve, 3> node;
  std::array<CostCurve, 3> network;
  for (std::size_t i = 0; i < node.size(); ++i) {
    if (!node[i].parse(take(spec, '/'))) return false;
    if (!network[i].parse(simgrid::config::get_value<std::string>(kNetworkSettings[i]))) return false;
  }
  if (!spec.empty()) return false;
  for (std::size_t i = 0; i < node.size(); ++i) {
    smpi_register_op_cost_callback(
        kOperations[i], [within = node[i], between = network[i]](std::size_t bytes, simgrid::s4u::Host* source,
                                                                 simgrid::s4u::Host* destination) {
          return (source == destination ? within : between).seconds(bytes);
        });
  }
  return true;
}

}  // namespace shim::sim
