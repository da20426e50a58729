#include "shim/stats_report.hpp"

#include <algorithm>
#include <array>
#include <cstdio>

namespace shim::stats {

namespace {

constexpr std::size_t kRuleWidth = 78;

std::string section(std::string_view title) {
  std::string line = "@--- " + std::string(title) + " ";
  if (line.size() < kRuleWidth) line.append(kRuleWidth - line.size(), '-');
  return line;
}

std::string number(std::uint64_t value) { return std::to_string(value); }

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

void append(std::vector<std::string>& lines, const std::vector<std::string>& more) {
  lines.insert(lines.end(), more.begin(), more.end());
}

void collective_section(std::vector<std::string>& lines, const Table& table, Collective collective) {
  const bool alltoall = collective == Collective::alltoall;
  lines.push_back(
      section(alltoall ? "Alltoall (per algorithm and block size)" : "Broadcast (per algorithm and message size)"));
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {
      "Algorithm",  alltoall ? "Block" : "Size", "Calls", "Ops", "Bytes", "Inter msgs", "Inter bytes", "Intra msgs",
      "Intra bytes"};
  if (alltoall) {
    header.push_back("Flat inter msgs");
    header.push_back("Flat inter bytes");
  }
  rows.push_back(header);
  const int c = static_cast<int>(collective);
  for (int a = 0; a < kAlgorithmSlots; ++a) {
    for (int s = 0; s < kSizeClasses; ++s) {
      const Counters& row = table[c][a][s];
      if (row[calls] == 0) continue;
      // Native MPI's own messages are not visible to shim.
      const auto traffic = [&](int field) { return a == 0 ? std::string("n/a") : number(row[field]); };
      std::string size = size_class_label(s);
      std::erase(size, ' ');  // "<=8B": one word per cell
      std::vector<std::string> cells = {std::string(algorithm_name(collective, a)),
                                        size,
                                        number(row[calls]),
                                        number(row[collective_calls]),
                                        number(row[payload_bytes]),
                                        traffic(inter_messages),
                                        traffic(inter_bytes),
                                        traffic(intra_messages),
                                        traffic(intra_bytes)};
      if (alltoall) {
        cells.push_back(number(row[flat_inter_messages]));
        cells.push_back(number(row[flat_inter_bytes]));
      }
      rows.push_back(std::move(cells));
    }
  }
  if (rows.size() == 1) {
    lines.push_back("(no calls)");
    return;
  }
  append(lines, aligned(rows, 2));
}

constexpr std::array<const char*, kAccumulateOps> kOpNames = {"Accumulate", "Get_accumulate", "Fetch_and_op",
                                                              "Compare_and_swap"};
constexpr std::array<const char*, kAccumulatePaths> kPathNames = {"same-node", "server", "caller", "native"};

void accumulate_section(std::vector<std::string>& lines, const ReportInput& input) {
  lines.push_back(section("Accumulate family (operations and target bytes per path)"));
  const bool several = input.processes > 1;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"Operation", "Path", "Ops", "Bytes"};
  if (several) {
    header.push_back("Max ops/proc");
    header.push_back("Max bytes/proc");
  }
  rows.push_back(header);
  std::array<RmaCounters, kAccumulatePaths> per_path{};
  for (int o = 0; o < kAccumulateOps; ++o) {
    for (int p = 0; p < kAccumulatePaths; ++p) {
      const RmaCounters& sum = input.sums.accumulate[o][p];
      if (sum[rma_ops] == 0) continue;
      for (int f = 0; f < kRmaFieldCount; ++f) per_path[p][f] += sum[f];
      std::vector<std::string> cells = {kOpNames[o], kPathNames[p], number(sum[rma_ops]), number(sum[rma_bytes])};
      if (several) {
        cells.push_back(number(input.maxima.accumulate[o][p][rma_ops]));
        cells.push_back(number(input.maxima.accumulate[o][p][rma_bytes]));
      }
      rows.push_back(std::move(cells));
    }
  }
  if (rows.size() == 1) {
    lines.push_back("(no calls)");
    return;
  }
  for (int p = 0; p < kAccumulatePaths; ++p) {
    if (per_path[p][rma_ops] == 0) continue;
    std::vector<std::string> cells = {"total", kPathNames[p], number(per_path[p][rma_ops]),
                                      number(per_path[p][rma_bytes])};
    if (several) cells.resize(6);
    rows.push_back(std::move(cells));
  }
  append(lines, aligned(rows, 2));
}

void server_section(std::vector<std::string>& lines, const std::vector<ServerRow>& servers) {
  lines.push_back(section("Accumulate servers (one per node, in its lowest world rank)"));
  if (servers.empty()) {
    lines.push_back("(no server thread ran)");
    return;
  }
  std::vector<std::vector<std::string>> rows = {
      {"Node", "World rank", "Requests", "Bytes", "Busy ms", "Busy %", "Idle CPU %", "Up s"}};
  for (const ServerRow& s : servers) {
    const double busy = static_cast<double>(s.busy_ns);
    const double wall = static_cast<double>(s.wall_ns);
    // The CPU the thread used while not handling requests, as a share of the
    // time it was not handling them: what polling costs an idle server.
    std::string idle_cpu = "n/a";
    if (s.cpu_ns != 0 && wall > busy) {
      idle_cpu = fixed(100.0 * std::max(0.0, static_cast<double>(s.cpu_ns) - busy) / (wall - busy), 1);
    }
    rows.push_back({s.node >= 0 ? std::to_string(s.node) : std::string("?"), std::to_string(s.world_rank),
                    number(s.requests), number(s.bytes), fixed(busy / 1e6, 3),
                    wall > 0 ? fixed(100.0 * busy / wall, 2) : std::string("n/a"), idle_cpu, fixed(wall / 1e9, 2)});
  }
  append(lines, aligned(rows, 0));
  // Their request pools and where messages went (SHIM_SERVER_CLUSTER).
  lines.push_back(section("Server request pools (SHIM_SERVER_CLUSTER)"));
  rows = {{"Node", "Direct KiB", "Forward KiB", "Peak bufs", "Applied", "Forwarded", "From servers", "Peers"}};
  for (const ServerRow& s : servers) {
    rows.push_back({s.node >= 0 ? std::to_string(s.node) : std::string("?"), number(s.direct_buffer_bytes / 1024),
                    number(s.forward_buffer_bytes / 1024), number(s.peak_buffers_in_use), number(s.messages_direct),
                    number(s.messages_forwarded), number(s.messages_from_servers), number(s.distinct_peers)});
  }
  append(lines, aligned(rows, 0));
}

constexpr std::array<const char*, kMirrorOps> kMirrorNames = {"get",
                                                              "put",
                                                              "acc",
                                                              "zero",
                                                              "merge",
                                                              "merge_patch",
                                                              "merge_sparse",
                                                              "copy_from_distributed",
                                                              "copy_to_distributed"};

void mirror_section(std::vector<std::string>& lines, const ReportInput& input) {
  lines.push_back(section("Mirrored windows (shim_mirror_*)"));
  const bool several = input.processes > 1;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"Operation", "Calls", "Ops", "Bytes"};
  if (several) header.push_back("Max calls/proc");
  rows.push_back(header);
  for (int m = 0; m < kMirrorOps; ++m) {
    const RmaCounters& sum = input.sums.mirror[m];
    if (sum[rma_calls] == 0) continue;
    std::vector<std::string> cells = {kMirrorNames[m], number(sum[rma_calls]), number(sum[rma_ops]),
                                      number(sum[rma_bytes])};
    if (several) cells.push_back(number(input.maxima.mirror[m][rma_calls]));
    rows.push_back(std::move(cells));
  }
  if (rows.size() == 1) {
    lines.push_back("(no calls)");
    return;
  }
  append(lines, aligned(rows, 1));
}

}  // namespace

std::vector<std::string> aligned(const std::vector<std::vector<std::string>>& rows, std::size_t text_columns) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::vector<std::string> lines;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (c > 0) line += "  ";
      const std::string padding(widths[c] - row[c].size(), ' ');
      line += c < text_columns ? row[c] + padding : padding + row[c];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    lines.push_back(std::move(line));
  }
  return lines;
}

std::vector<std::string> report_text(const ReportInput& input) {
  std::vector<std::string> lines;
  lines.push_back(section("shim report (SHIM_STATS)"));
  std::size_t key_width = 0;
  for (const auto& fact : input.facts) key_width = std::max(key_width, fact.first.size());
  for (const auto& [key, value] : input.facts) {
    lines.push_back("@ " + key + std::string(key_width - key.size(), ' ') + " : " + value);
  }
  collective_section(lines, input.collectives, Collective::alltoall);
  collective_section(lines, input.collectives, Collective::bcast);
  accumulate_section(lines, input);
  server_section(lines, input.servers);
  mirror_section(lines, input);
  lines.push_back(section("Machine-readable (tools/demo_report.py reads these)"));
  const std::string scope =
      input.processes > 1 ? "summed over " + std::to_string(input.processes) + " processes" : "one process";
  append(lines, report_lines(input.collectives, scope));
  return lines;
}

std::optional<FilePattern> parse_file_pattern(std::string_view text, std::string& error) {
  FilePattern pattern{std::string(text)};
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') continue;
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    if (next == 'r') {
      pattern.per_rank = true;
    } else if (next == 'j') {
      pattern.job = true;
    } else if (next != '%') {
      error = next == '\0' ? "it ends in a lone %" : std::string("%") + next + " is not a placeholder";
      return std::nullopt;
    }
    ++i;
  }
  return pattern;
}

std::string expand_file_pattern(const FilePattern& pattern, int rank, std::string_view job) {
  std::string path;
  const std::string_view text = pattern.text;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%' || i + 1 >= text.size()) {
      path += text[i];
      continue;
    }
    const char next = text[++i];
    if (next == 'r') {
      path += std::to_string(rank);
    } else if (next == 'j') {
      path += job;
    } else {
      path += next;
    }
  }
  return path;
}

}  // namespace shim::stats
