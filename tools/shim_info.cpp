// shim-info: what shim does in this job. Run it under mpiexec exactly like
// the application (same number of ranks, same SHIM_* and HWLOC_XMLFILE
// environment); rank 0 prints the settings in effect, the node map of
// MPI_COMM_WORLD, each node's hardware, the alltoall policy table, and the
// decision and inter-node message count for every power-of-two block size,
// the same for broadcasts, and the server threads and accumulate path a
// window on MPI_COMM_WORLD gets.
//
// It carries shim's interposers and internals linked in, not libshim.so:
// MPI_Init and MPI_Finalize are shim's, so shim starts as in an application
// (thread level, server threads, settings broadcast), and the window is
// allocated through shim's MPI_Win_allocate. Its other MPI calls go straight
// to PMPI, so the report itself is not counted or traced.
//
//   shim-info --settings    the setting names and accepted values, one per
//                           line and tab-separated, without starting MPI
#include <mpi.h>
#include <shim/version.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/alltoall_algorithm.hpp"
#include "collectives/alltoall_policy.hpp"
#include "collectives/alltoall_schedules.hpp"
#include "collectives/bcast_scatter_allgather.hpp"
#include "collectives/bcast_tree.hpp"
#include "collectives/traffic.hpp"
#include "common/format.hpp"
#include "rma/accumulate_policy.hpp"
#include "rma/managed_window.hpp"
#include "rma/rma_runtime.hpp"
#include "shim/alltoall_dispatch.hpp"
#include "shim/bcast_dispatch.hpp"
#include "shim/comm_state.hpp"
#include "shim/config.hpp"
#include "shim/rma_startup.hpp"
#include "shim/runtime.hpp"
#include "topology/hierarchy.hpp"
#include "topology/hwloc_summary.hpp"
#include "topology/layout.hpp"
#include "topology/network_picture.hpp"

namespace {

constexpr int kRoot = 0;
constexpr std::int64_t kLargestBlock = std::int64_t{1} << 20;
constexpr std::int64_t kLargestBroadcast = std::int64_t{4} << 20;

// A failed collective would leave the other ranks waiting, so any MPI error
// ends the whole job, with the reason on stderr.
void require(int rc, std::string_view what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  PMPI_Error_string(rc, text, &length);
  std::cerr << "shim-info: " << what << " failed: " << std::string_view(text, length) << std::endl;
  PMPI_Abort(MPI_COMM_WORLD, 1);
}

// Every rank's `text`, in rank order, on the root; empty elsewhere.
std::vector<std::string> gather_text(const std::string& text) {
  int rank = 0;
  int size = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  const MPI_Count length = static_cast<MPI_Count>(text.size());
  std::vector<MPI_Count> lengths(rank == kRoot ? size : 0);
  require(PMPI_Gather(&length, 1, MPI_COUNT, lengths.data(), 1, MPI_COUNT, kRoot, MPI_COMM_WORLD),
          "gathering text lengths");
  std::vector<MPI_Aint> offsets(lengths.size());
  MPI_Count total = 0;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    offsets[i] = static_cast<MPI_Aint>(total);
    total += lengths[i];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  require(PMPI_Gatherv_c(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, kRoot,
                         MPI_COMM_WORLD),
          "gathering text");
  std::vector<std::string> texts;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    texts.push_back(all.substr(static_cast<std::size_t>(offsets[i]), static_cast<std::size_t>(lengths[i])));
  }
  return texts;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// "0-3,8,10-11" for ascending indexes.
std::string index_ranges(std::span<const int> indexes) {
  std::string text;
  for (std::size_t first = 0; first < indexes.size();) {
    std::size_t last = first;
    while (last + 1 < indexes.size() && indexes[last + 1] == indexes[last] + 1) ++last;
    if (!text.empty()) text += ',';
    text += std::to_string(indexes[first]);
    if (last > first) text += "-" + std::to_string(indexes[last]);
    first = last + 1;
  }
  return text;
}

// Rows as lines with every column but the last padded to its widest cell,
// so one long trailing cell does not push the other rows apart.
std::vector<std::string> table_lines(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (std::size_t column = 0; column + 1 < row.size(); ++column) {
      widths[column] = std::max(widths[column], row[column].size());
    }
  }
  std::vector<std::string> lines;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t column = 0; column < row.size(); ++column) {
      line += row[column];
      if (column + 1 < row.size()) line += std::string(widths[column] - row[column].size() + 2, ' ');
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

void print_indented(const std::vector<std::string>& lines, std::string_view indent) {
  for (const std::string& line : lines) std::cout << indent << line << '\n';
}

// rank 0's environment text of a setting: rank 0's settings are the ones
// broadcast to every rank at start.
std::string setting_in_effect(const shim::SettingSpec& spec) {
  const char* text = std::getenv(std::string(spec.name).c_str());
  if (text == nullptr) return "(default)";
  shim::Config scratch = shim::config();
  if (!spec.apply(text, scratch)) return "(default; '" + std::string(text) + "' rejected)";
  return text;
}

void print_settings() {
  std::cout << "Settings (rank 0's environment, used by every rank)\n";
  std::vector<std::vector<std::string>> rows = {{"setting", "in effect", "default", "accepted"}};
  for (const shim::SettingSpec& spec : shim::setting_specs()) {
    rows.push_back(
        {std::string(spec.name), setting_in_effect(spec), std::string(spec.default_value), std::string(spec.values)});
  }
  const std::vector<std::string> lines = table_lines(rows);
  std::cout << "  " << lines[0] << '\n';
  const std::span<const shim::SettingSpec> specs = shim::setting_specs();
  for (std::size_t i = 0; i < specs.size(); ++i) {
    std::cout << "  " << lines[i + 1] << '\n' << "      " << specs[i].effect << '\n';
  }
  if (!shim::config().enabled) {
    std::cout << "  SHIM_ENABLE=0: every call goes to native MPI; the decisions below are what shim would take "
                 "if enabled\n";
  }
}

// Distinct processor names of a node's ranks, in rank order: virtual nodes
// (SHIM_NODE_SIZE) may span hosts.
std::string node_processor_names(const shim::topo::Layout& layout, int node,
                                 const std::vector<std::string>& processor_names) {
  std::vector<std::string> distinct;
  for (const int rank : layout.members(node)) {
    if (std::find(distinct.begin(), distinct.end(), processor_names[rank]) == distinct.end()) {
      distinct.push_back(processor_names[rank]);
    }
  }
  std::string text;
  for (const std::string& name : distinct) text += (text.empty() ? "" : ",") + name;
  return text;
}

void print_node_map(const shim::topo::Hierarchy& hierarchy, const std::vector<std::string>& processor_names) {
  const shim::topo::Layout& layout = hierarchy.layout();
  std::cout << "\nNode map of MPI_COMM_WORLD: " << layout.describe() << '\n'
            << "  nodes from: " << hierarchy.node_source() << '\n';
  for (int node = 0; node < layout.nodes(); ++node) {
    std::cout << "  node " << node << " (" << node_processor_names(layout, node, processor_names)
              << "): " << layout.ppn(node) << (layout.ppn(node) == 1 ? " rank: " : " ranks: ")
              << index_ranges(layout.members(node)) << '\n';
  }
}

struct NodeHardware {
  std::string one_line;  // or the reason hwloc failed
  std::string details;   // the lines of the multi-line description, joined by '\n'; empty if hwloc failed
};

NodeHardware describe_this_node() {
  const shim::topo::HwlocSummaryResult result = shim::topo::summarize_this_machine();
  if (!result.ok()) return {result.error, ""};
  std::string details;
  for (const std::string& line : shim::topo::describe_lines(result.summary)) {
    details += (details.empty() ? "" : "\n") + line;
  }
  return {shim::topo::describe_one_line(result.summary), details};
}

// `one_lines` and `details` hold every world rank's text; only node leaders'
// are filled.
void print_hardware(const shim::topo::Layout& layout, const std::vector<std::string>& one_lines,
                    const std::vector<std::string>& details) {
  std::cout << "\nHardware per node (hwloc, loaded by each node's leader)\n";
  // Nodes with identical details share one block, so a large homogeneous
  // job prints its locality table once.
  std::map<std::string, std::vector<int>> nodes_by_details;
  std::vector<std::string> details_in_order;
  for (int node = 0; node < layout.nodes(); ++node) {
    const int leader = layout.rank_of(node, 0);
    std::cout << "  node " << node << " (rank " << leader << "): " << one_lines[leader] << '\n';
    if (details[leader].empty()) continue;
    auto& nodes = nodes_by_details[details[leader]];
    if (nodes.empty()) details_in_order.push_back(details[leader]);
    nodes.push_back(node);
  }
  for (const std::string& text : details_in_order) {
    const std::vector<int>& nodes = nodes_by_details[text];
    std::cout << "  " << (nodes.size() == 1 ? "node " : "nodes ") << index_ranges(nodes) << ":\n";
    print_indented(split_lines(text), "    ");
  }
}

// A policy's rule table: one row per rule, its reason beneath.
template <typename Policy>
void print_rules(const Policy& policy) {
  std::vector<std::vector<std::string>> rows = {{"rule", "outcome", "condition"}};
  for (const auto& rule : policy.rules()) {
    rows.push_back({std::string(rule.name), std::string(name(rule.outcome)), std::string(rule.condition)});
  }
  const std::vector<std::string> lines = table_lines(rows);
  std::cout << "  " << lines[0] << '\n';
  for (std::size_t i = 0; i < policy.rules().size(); ++i) {
    std::cout << "  " << lines[i + 1] << '\n' << "      " << policy.rules()[i].why << '\n';
  }
}

void print_policy() {
  const shim::Config& config = shim::config();
  const shim::coll::AlltoallThresholds& thresholds = config.alltoall_thresholds;
  std::cout << "\nAlltoall policy (applies when SHIM_ALLTOALL=auto; the first matching rule decides)\n"
            << "  in effect: SHIM_ALLTOALL=" << shim::choice_name(config.alltoall)
            << ", SHIM_NIC=" << shim::topo::name(config.nic) << ", SHIM_SEND_COST_NS=" << config.send_cost_ns
            << ", SHIM_NODE_BANDWIDTH="
            << (config.node_bandwidth > 0 ? std::to_string(config.node_bandwidth) + " B/s" : "unknown")
            << ", SHIM_ALLTOALL_SA_MAX=" << shim::format_bytes(thresholds.sa_max_bytes)
            << ", SHIM_ALLTOALL_LEADER_MAX=" << shim::format_bytes(thresholds.leader_max_bytes) << '\n';
  if (config.alltoall) {
    std::cout << "  SHIM_ALLTOALL=" << shim::choice_name(config.alltoall) << " overrides this table\n";
  }
  print_rules(shim::coll::alltoall_policy());
  std::cout
      << "  the inter-node (rail) step of sa, rd and leader sends point to point (8 in flight each way) while its "
      << "largest message is <= "
      << "SHIM_ALLTOALL_RAIL_P2P_MAX=" << shim::format_bytes(thresholds.rail_point_to_point_max_bytes)
      << ", else calls MPI_Alltoall (as it does where Bruck's rounds cost less than the window's waves: from 42 "
      << "nodes, for blocks of a few bytes)\n";
}

// Inter-node messages per alltoall call, summed over each node's ranks and
// counted from the schedules every rank would run. MPICH's own algorithm is
// not visible to shim, so native counts as the flat exchange it starts from.
std::vector<std::int64_t> inter_messages_per_node(const shim::topo::Layout& layout,
                                                  shim::coll::AlltoallAlgorithm algorithm) {
  std::vector<std::int64_t> per_node(static_cast<std::size_t>(layout.nodes()), 0);
  for (int rank = 0; rank < layout.size(); ++rank) {
    const shim::coll::Traffic traffic =
        algorithm == shim::coll::AlltoallAlgorithm::native
            ? shim::coll::flat_traffic(layout, rank)
            : shim::coll::schedule_traffic(shim::coll::build_alltoall_schedule(algorithm, layout, rank), layout, rank);
    per_node[static_cast<std::size_t>(layout.node_of(rank))] += traffic.inter_messages;
  }
  return per_node;
}

// "4", or "2..6" when nodes differ (uneven nodes). A layout has at least
// one node.
std::string value_spread(const std::vector<std::int64_t>& values) {
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  return *low == *high ? std::to_string(*low) : std::to_string(*low) + ".." + std::to_string(*high);
}

void print_decisions(shim::CommState& state, const shim::topo::Hierarchy& hierarchy) {
  const shim::topo::Layout& layout = hierarchy.layout();
  std::array<std::string, shim::coll::kAlltoallAlgorithms.size()> messages;
  for (const shim::coll::AlltoallAlgorithm algorithm : shim::coll::kAlltoallAlgorithms) {
    messages[static_cast<std::size_t>(algorithm)] = value_spread(inter_messages_per_node(layout, algorithm));
  }
  const std::string& flat = messages[static_cast<std::size_t>(shim::coll::AlltoallAlgorithm::native)];

  std::cout << "\nAlltoall decisions on MPI_COMM_WORLD (" << layout.describe() << ")\n"
            << "  inter-node messages per node and call; native is counted as a flat exchange\n";
  std::vector<std::vector<std::string>> rows = {{"block", "algorithm", "rule", "messages", "flat", "reason"}};
  const shim::AlltoallCall call{};  // separate send and receive buffers
  for (std::int64_t block = 1; block <= kLargestBlock; block *= 2) {
    const auto made = shim::decide<shim::AlltoallCall>(state, call.facts(state, hierarchy, block));
    rows.push_back({shim::format_bytes(block), std::string(shim::coll::name(made.algorithm)),
                    std::string(made.rule_name()), messages[static_cast<std::size_t>(made.algorithm)], flat,
                    shim::explain(call, made, state, hierarchy, block)});
  }
  print_indented(table_lines(rows), "  ");
}

void print_network_profile(shim::CommState& state, const shim::topo::Hierarchy& hierarchy) {
  const shim::topo::NetworkPicture* picture = shim::network_picture();
  std::cout << "\nNetwork profile (SHIM_PROFILE)\n";
  if (picture == nullptr) {
    std::cout << "  none loaded: broadcasts know nodes but no subnets, and the alltoall policy uses SHIM_NIC or "
                 "onload, SHIM_SEND_COST_NS or 25 ns and SHIM_NODE_BANDWIDTH or none\n";
    return;
  }
  const shim::topo::NetworkProfile& p = picture->profile;
  std::cout << "  " << shim::config().profile_path.data() << ": " << p.hosts.size() << " hosts, " << p.subnets()
            << " subnets, NIC " << shim::topo::name(p.nic) << ", bcast k " << p.bcast_k
            << (p.send_cost_s > 0 ? ", send cost " + std::to_string(std::lround(p.send_cost_s * 1e9)) + " ns" : "")
            << (p.node_bandwidth() > 0 ? ", node link " + std::to_string(p.node_bandwidth()) + " B/s" : "")
            << (p.created_by.empty() ? "" : ", written by " + p.created_by) << '\n';
  const shim::topo::Layout& layout = hierarchy.layout();
  const std::vector<int>& subnets = state.subnet_of_node();
  for (int node = 0; node < layout.nodes(); ++node) {
    const int world = hierarchy.world_rank(layout.rank_of(node, 0));
    std::cout << "  node " << node << ": host " << p.hosts[picture->host_of_world_rank[world]] << ", subnet "
              << subnets[node] << '\n';
  }
}

void print_bcast_policy() {
  const shim::Config& config = shim::config();
  std::cout << "\nBroadcast policy (applies when SHIM_BCAST=auto; the first matching rule decides)\n"
            << "  in effect: SHIM_BCAST=" << shim::choice_name(config.bcast) << "; two-level trees: fan-out "
            << shim::bcast_tree_k() << " (a chain for long messages on few nodes), segments "
            << shim::format_bytes(shim::bcast_segment_bytes(shim::coll::BcastAlgorithm::twolevel, 0, false))
            << "; ECO's fan-outs and segments by message size: the decisions below\n";
  print_rules(shim::coll::bcast_policy());
}

// Tree edges a broadcast from rank 0 sends between nodes and between
// subnets (scatter-allgather: its messages between nodes); native counts as one message into every other node, the
// least any tree sends, as MPICH's own tree is not visible to shim.
void print_bcast_decisions(shim::CommState& state, const shim::topo::Hierarchy& hierarchy) {
  const shim::topo::Layout& layout = hierarchy.layout();
  const std::vector<int>& subnets = state.subnet_of_node();
  std::cout << "\nBroadcast decisions on MPI_COMM_WORLD from root 0\n"
            << "  messages between nodes and between subnets per broadcast (per segment when pipelined)\n";
  std::vector<std::vector<std::string>> rows = {
      {"message", "algorithm", "rule", "inter-node", "inter-subnet", "reason"}};
  const shim::BcastCall call{};
  for (std::int64_t bytes = 1; bytes <= kLargestBroadcast; bytes *= 4) {
    const auto made = shim::decide<shim::BcastCall>(state, call.facts(state, hierarchy, bytes));
    std::string nodes = std::to_string(layout.nodes() - 1);
    std::string crossings = "-";
    if (made.algorithm == shim::coll::BcastAlgorithm::scatter_allgather) {
      std::int64_t messages = 0;
      for (int rank = 0; rank < layout.size(); ++rank) {
        const shim::coll::Schedule schedule = shim::coll::build_scatter_allgather_bcast(layout, 0, rank);
        messages += shim::coll::schedule_traffic(schedule, layout, rank).inter_messages;
      }
      nodes = std::to_string(messages);
    } else if (made.algorithm != shim::coll::BcastAlgorithm::native) {
      const shim::coll::BcastFanout fanout = shim::bcast_fanout(made.algorithm, bytes, layout, state.subnets_spanned());
      std::vector<int> by_subnet = subnets;
      if (by_subnet.empty()) by_subnet.assign(static_cast<std::size_t>(layout.nodes()), 0);
      // Entries taking turns send as many messages per segment as the first
      // turn's tree.
      const shim::coll::BcastTree tree =
          made.algorithm == shim::coll::BcastAlgorithm::eco
              ? shim::coll::build_eco_trees(layout, by_subnet, state.node_cost(), 0, fanout).front()
              : shim::coll::build_two_level_tree(layout, 0, fanout);
      const shim::coll::BcastLinks links = shim::coll::count_links(tree, layout, by_subnet);
      nodes = std::to_string(links.inter_node);
      crossings = std::to_string(links.inter_subnet);
    }
    rows.push_back({shim::format_bytes(bytes), std::string(shim::coll::name(made.algorithm)),
                    std::string(made.rule_name()), nodes, crossings,
                    shim::explain(call, made, state, hierarchy, bytes)});
  }
  print_indented(table_lines(rows), "  ");
}

void print_accumulate_policy() {
  const shim::Config& config = shim::config();
  std::cout << "\nAccumulate policy (windows from MPI_Win_allocate; one path per window for every size; the first "
               "matching rule decides)\n"
            << "  in effect: SHIM_ACCUMULATE=" << shim::choice_name(config.accumulate)
            << ", SHIM_SERVER=" << (config.server ? 1 : 0) << ", SHIM_SERVER_POLL=" << config.server_poll_max_us
            << " us\n";
  print_rules(shim::rma::accumulate_policy());
  std::cout << "  MPI_Win_create, MPI_Win_create_dynamic and MPI_Win_allocate_shared windows: native\n";
}

// Why no server threads run, in the order start-up checks it.
std::string why_no_servers() {
  const shim::Config& config = shim::config();
  if (!config.enabled) return "SHIM_ENABLE=0";
  if (!config.server) return "SHIM_SERVER=0";
  if (config.accumulate == shim::rma::AccumulatePath::native) return "SHIM_ACCUMULATE=native";
  int threads = MPI_THREAD_SINGLE;
  if (PMPI_Query_thread(&threads) == MPI_SUCCESS && threads != MPI_THREAD_MULTIPLE) {
    return "MPI did not provide MPI_THREAD_MULTIPLE";
  }
  return "they could not start (the line shim printed at MPI_Init says why)";
}

void print_servers(const shim::topo::Hierarchy& hierarchy) {
  if (!shim::rma::servers_running()) {
    std::cout << "  server threads: none (" << why_no_servers() << ")\n";
    return;
  }
  const shim::topo::Layout& layout = hierarchy.layout();
  std::vector<int> servers;
  for (int node = 0; node < layout.nodes(); ++node) {
    servers.push_back(shim::rma::server_of(hierarchy.world_rank(layout.rank_of(node, 0))));
  }
  std::cout << "  server threads: running, one per node, in world rank" << (servers.size() == 1 ? " " : "s ")
            << index_ranges(servers) << '\n'
            << "  " << shim::describe_server_clusters() << '\n';
}

struct WindowDecision {
  std::string path;
  std::string reason;
};

// What MPI_Win_allocate on MPI_COMM_WORLD decides, from a window allocated
// through shim's own MPI_Win_allocate, as the application's would be.
WindowDecision decide_world_window() {
  double* base = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  require(MPI_Win_allocate(sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win),
          "MPI_Win_allocate on MPI_COMM_WORLD");
  WindowDecision decision{"native",
                          "shim did not create the window (SHIM_ENABLE=0, or shim's window keyval is "
                          "missing: see the line shim printed at MPI_Init)"};
  if (const shim::rma::ManagedWindow* window = shim::rma::ManagedWindow::of(win)) {
    decision = {std::string(shim::rma::name(window->path())), window->reason()};
  }
  require(MPI_Win_free(&win), "MPI_Win_free");
  return decision;
}

void print_accumulate_decisions(const shim::topo::Hierarchy& hierarchy, const WindowDecision& decision) {
  std::cout << "\nAccumulate decisions in this job\n";
  print_servers(hierarchy);
  const int nodes = hierarchy.layout().nodes();
  std::cout << "  MPI_Win_allocate on MPI_COMM_WORLD (" << nodes << (nodes == 1 ? " node" : " nodes")
            << "): every size -> " << decision.path << ": " << decision.reason << '\n';
}

void report() {
  shim::CommState* state = nullptr;
  require(shim::comm_state(MPI_COMM_WORLD, state), "attaching shim's state to MPI_COMM_WORLD");
  const shim::topo::Hierarchy* hierarchy = nullptr;
  require(state->hierarchy(MPI_COMM_WORLD, shim::config().node_size, hierarchy),
          "building the node hierarchy of MPI_COMM_WORLD");

  char processor_name[MPI_MAX_PROCESSOR_NAME] = {};
  int name_length = 0;
  require(PMPI_Get_processor_name(processor_name, &name_length), "MPI_Get_processor_name");
  const std::vector<std::string> processor_names = gather_text(std::string(processor_name, name_length));

  // One topology per node is enough, and loading one is slow on large machines.
  const NodeHardware hardware = hierarchy->leader() ? describe_this_node() : NodeHardware{};
  const std::vector<std::string> one_lines = gather_text(hardware.one_line);
  const std::vector<std::string> details = gather_text(hardware.details);
  const WindowDecision window = decide_world_window();

  if (shim::world_rank() != kRoot) return;
  std::cout << "shim-info " << SHIM_VERSION_STRING << ": " << hierarchy->layout().size() << " ranks\n\n";
  print_settings();
  print_node_map(*hierarchy, processor_names);
  print_hardware(hierarchy->layout(), one_lines, details);
  print_network_profile(*state, *hierarchy);
  print_policy();
  print_decisions(*state, *hierarchy);
  print_bcast_policy();
  print_bcast_decisions(*state, *hierarchy);
  print_accumulate_policy();
  print_accumulate_decisions(*hierarchy, window);
  std::cout << std::flush;
}

// For shimrun, which checks the SHIM_* names it is given against these.
void print_setting_names() {
  for (const shim::SettingSpec& spec : shim::setting_specs()) std::cout << spec.name << '\t' << spec.values << '\n';
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string_view(argv[1]) == "--settings") {
    print_setting_names();
    return EXIT_SUCCESS;
  }
  // shim's MPI_Init (linked in), as an application's call would reach it.
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
    std::cerr << "shim-info: MPI_Init failed\n";
    return EXIT_FAILURE;
  }
  // Errors come back to require(), which names the step that failed.
  PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  report();
  MPI_Finalize();
  return EXIT_SUCCESS;
}
