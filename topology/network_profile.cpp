#include "topology/network_profile.hpp"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace shim::topo {

namespace {

using nlohmann::json;

constexpr const char* kFormat = "shim-network-profile";

struct FieldError {
  std::string message;
};

// Line and column of a byte offset (1-based), for parse errors.
std::string position(std::string_view text, std::size_t byte) {
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

const json& field(const json& object, const char* name) {
  const auto it = object.find(name);
  if (it == object.end()) throw FieldError{std::string("missing field \"") + name + "\""};
  return *it;
}

template <typename T>
T value_of(const json& value, const std::string& where, bool (json::*is)() const noexcept, const char* expected) {
  if (!(value.*is)()) throw FieldError{where + ": expected " + expected};
  return value.get<T>();
}

void read_hosts(const json& root, NetworkProfile& p) {
  const json& hosts = field(root, "hosts");
  if (!hosts.is_array() || hosts.empty()) throw FieldError{"\"hosts\": expected a non-empty array"};
  std::set<std::string> seen;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    const auto host =
        value_of<std::string>(hosts[i], "\"hosts\"[" + std::to_string(i) + "]", &json::is_string, "a string");
    if (host.empty() || !seen.insert(host).second) throw FieldError{"\"hosts\": '" + host + "' is empty or repeated"};
    p.hosts.push_back(host);
  }
}

CostMatrix read_matrix(const json& matrix, const std::string& where, std::size_t n) {
  if (!matrix.is_array() || matrix.size() != n) {
    throw FieldError{where + ": expected a " + std::to_string(n) + " x " + std::to_string(n) + " matrix"};
  }
  CostMatrix m(n, std::vector<double>(n, 0.0));
  for (std::size_t a = 0; a < n; ++a) {
    if (!matrix[a].is_array() || matrix[a].size() != n) {
      throw FieldError{where + "[" + std::to_string(a) + "]: expected " + std::to_string(n) + " numbers"};
    }
    for (std::size_t b = 0; b < n; ++b) {
      const double c = value_of<double>(matrix[a][b], where + "[" + std::to_string(a) + "][" + std::to_string(b) + "]",
                                        &json::is_number, "a number");
      if (c < 0 || (a != b && c == 0)) throw FieldError{where + ": costs between hosts must be positive"};
      m[a][b] = c;
    }
  }
  return m;
}

void read_costs(const json& root, NetworkProfile& p) {
  const json& sizes = field(root, "sizes");
  const json& costs = field(root, "cost_seconds");
  if (!sizes.is_array() || sizes.empty() || !costs.is_array() || costs.size() != sizes.size()) {
    throw FieldError{"\"sizes\" and \"cost_seconds\": expected arrays of the same, non-zero length"};
  }
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    p.sizes.push_back(value_of<std::int64_t>(sizes[s], "\"sizes\"[" + std::to_string(s) + "]", &json::is_number_integer,
                                             "an integer"));
    p.cost.push_back(read_matrix(costs[s], "\"cost_seconds\"[" + std::to_string(s) + "]", p.hosts.size()));
  }
  p.partition_size = value_of<std::int64_t>(field(root, "partition_size"), "\"partition_size\"",
                                            &json::is_number_integer, "an integer");
  if (std::find(p.sizes.begin(), p.sizes.end(), p.partition_size) == p.sizes.end()) {
    throw FieldError{"\"partition_size\" is not one of \"sizes\""};
  }
}

void read_subnets(const json& root, NetworkProfile& p) {
  const json& subnets = field(root, "subnets");
  if (!subnets.is_array() || subnets.empty()) throw FieldError{"\"subnets\": expected a non-empty array"};
  const auto n = static_cast<std::int64_t>(p.hosts.size());
  p.subnet_of_host.assign(p.hosts.size(), -1);
  for (std::size_t s = 0; s < subnets.size(); ++s) {
    if (!subnets[s].is_array() || subnets[s].empty()) {
      throw FieldError{"\"subnets\"[" + std::to_string(s) + "]: expected a non-empty array of host indexes"};
    }
    for (const json& member : subnets[s]) {
      if (!member.is_number_integer() || member.get<std::int64_t>() < 0 || member.get<std::int64_t>() >= n ||
          p.subnet_of_host[member.get<std::size_t>()] >= 0) {
        throw FieldError{"\"subnets\"[" + std::to_string(s) + "]: host indexes must be in range and appear once"};
      }
      p.subnet_of_host[member.get<std::size_t>()] = static_cast<int>(s);
    }
  }
  if (std::count(p.subnet_of_host.begin(), p.subnet_of_host.end(), -1) != 0) {
    throw FieldError{"\"subnets\": every host must be in a subnet"};
  }
}

void read_nic(const json& root, NetworkProfile& p) {
  const json& nic = field(root, "nic");
  if (!nic.is_object()) throw FieldError{"\"nic\": expected an object"};
  const auto nic_class =
      parse_nic_class(value_of<std::string>(field(nic, "class"), "\"nic\".\"class\"", &json::is_string, "a string"));
  if (!nic_class) throw FieldError{"\"nic\".\"class\": expected \"onload\" or \"offload\""};
  p.nic = *nic_class;
  if (!nic.contains("pair_throughput")) return;
  const json& throughput = nic["pair_throughput"];
  if (!throughput.is_array()) throw FieldError{"\"nic\".\"pair_throughput\": expected an array"};
  for (const json& t : throughput) {
    p.pair_throughput.push_back(value_of<double>(t, "\"nic\".\"pair_throughput\"", &json::is_number, "numbers"));
  }
}

NetworkProfile read(const json& root) {
  if (!root.is_object()) throw FieldError{"expected a JSON object"};
  if (!root.contains("format") || root["format"] != kFormat) {
    throw FieldError{std::string("\"format\" is not \"") + kFormat + "\""};
  }
  const auto version =
      value_of<std::int64_t>(field(root, "version"), "\"version\"", &json::is_number_integer, "an integer");
  if (version != NetworkProfile::kVersion) {
    throw FieldError{"\"version\" " + std::to_string(version) + " is not supported (this shim reads version " +
                     std::to_string(NetworkProfile::kVersion) + ")"};
  }
  NetworkProfile p;
  read_hosts(root, p);
  read_costs(root, p);
  read_subnets(root, p);
  read_nic(root, p);
  const auto k = value_of<std::int64_t>(field(root, "bcast_k"), "\"bcast_k\"", &json::is_number_integer, "an integer");
  if (k < 1 || k > 64) throw FieldError{"\"bcast_k\": expected 1 to 64"};
  p.bcast_k = static_cast<int>(k);
  // Optional: profiles written before shim-probe measured it lack it.
  if (root.contains("send_cost_seconds")) {
    p.send_cost_s = value_of<double>(root["send_cost_seconds"], "\"send_cost_seconds\"", &json::is_number, "a number");
    if (!(p.send_cost_s >= 0 && p.send_cost_s < 1)) throw FieldError{"\"send_cost_seconds\": expected 0 to 1"};
  }
  if (root.contains("created_by") && root["created_by"].is_string()) p.created_by = root["created_by"];
  return p;
}

}  // namespace

int NetworkProfile::subnets() const {
  return subnet_of_host.empty() ? 0 : *std::max_element(subnet_of_host.begin(), subnet_of_host.end()) + 1;
}

const CostMatrix& NetworkProfile::partition_cost() const {
  const auto it = std::find(sizes.begin(), sizes.end(), partition_size);
  return cost[static_cast<std::size_t>(it - sizes.begin())];
}

std::int64_t NetworkProfile::node_bandwidth() const {
  if (pair_throughput.empty()) return 0;
  const double both_ways = *std::max_element(pair_throughput.begin(), pair_throughput.end());
  if (!(both_ways > 0)) return 0;
  return both_ways >= 0x1p62 ? std::int64_t{1} << 62 : static_cast<std::int64_t>(both_ways / 2);
}

int NetworkProfile::host_index(std::string_view host) const {
  const auto it = std::find(hosts.begin(), hosts.end(), host);
  return it == hosts.end() ? -1 : static_cast<int>(it - hosts.begin());
}

ProfileLoad parse_profile(std::string_view text, const std::string& source) {
  ProfileLoad load;
  try {
    load.profile = read(json::parse(text));
  } catch (const json::parse_error& error) {
    // nlohmann's message starts with its own position prefix; keep the reason.
    std::string reason = error.what();
    if (const auto colon = reason.rfind(": "); colon != std::string::npos) reason = reason.substr(colon + 2);
    load.error = source + ": " + position(text, error.byte) + ": " + reason;
  } catch (const FieldError& error) {
    load.error = source + ": " + error.message;
  } catch (const json::exception& error) {
    load.error = source + ": " + error.what();
  }
  return load;
}

ProfileLoad load_profile_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {std::nullopt, path + ": cannot be read"};
  std::ostringstream text;
  text << in.rdbuf();
  return parse_profile(text.str(), path);
}

std::string profile_to_json(const NetworkProfile& p) {
  json subnets = json::array();
  for (int s = 0; s < p.subnets(); ++s) {
    json members = json::array();
    for (std::size_t h = 0; h < p.hosts.size(); ++h) {
      if (p.subnet_of_host[h] == s) members.push_back(h);
    }
    subnets.push_back(members);
  }
  const json root = {
      {"format", kFormat},
      {"version", NetworkProfile::kVersion},
      {"created_by", p.created_by},
      {"hosts", p.hosts},
      {"sizes", p.sizes},
      {"cost_seconds", p.cost},
      {"partition_size", p.partition_size},
      {"subnets", subnets},
      {"nic", {{"class", std::string(name(p.nic))}, {"pair_throughput", p.pair_throughput}}},
      {"bcast_k", p.bcast_k},
      {"send_cost_seconds", p.send_cost_s},
  };
  return root.dump(1) + "\n";
}

}  // namespace shim::topo
