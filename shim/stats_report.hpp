// The SHIM_STATS report as people read it: a title block, then one aligned
// table per family (alltoall, broadcast, the accumulate family and its
// servers, mirrored windows), laid out as mpiP lays out its report, then
// the key=value lines scripts read. Also SHIM_STATS's file names, with
// their placeholders. No MPI here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shim/stats.hpp"

namespace shim::stats {

// One node server's figures.
struct ServerRow {
  std::int64_t node = -1;  // -1: not known
  std::int64_t world_rank = 0;
  std::uint64_t requests = 0;
  std::uint64_t bytes = 0;
  std::uint64_t busy_ns = 0;
  std::uint64_t wall_ns = 0;
  std::uint64_t cpu_ns = 0;  // 0: not known
  // Its request pools and routes (server clustering).
  std::uint64_t direct_buffer_bytes = 0;
  std::uint64_t forward_buffer_bytes = 0;
  std::uint64_t peak_buffers_in_use = 0;
  std::uint64_t messages_direct = 0;
  std::uint64_t messages_forwarded = 0;
  std::uint64_t messages_from_servers = 0;
  std::uint64_t distinct_peers = 0;
};

struct ReportInput {
  // "@ key : value" lines of the title block, in order.
  std::vector<std::pair<std::string, std::string>> facts;
  int processes = 1;  // how many processes' counts the tables hold
  Table collectives{};
  RmaTable sums{};
  RmaTable maxima{};  // the largest one process's count, per counter
  std::vector<ServerRow> servers;
};

std::vector<std::string> report_text(const ReportInput& input);

// Columns padded to their widest cell: the first `text_columns` left-aligned,
// the rest (numbers) right-aligned; two spaces between columns.
std::vector<std::string> aligned(const std::vector<std::vector<std::string>>& rows, std::size_t text_columns);

// A SHIM_STATS file name: %r is the process's world rank, %j the job's id,
// %% a percent sign.
struct FilePattern {
  std::string text;
  bool per_rank = false;  // holds %r: each process writes its own report
  bool job = false;       // holds %j
};
// nullopt, with the reason in `error`, for any other % sequence.
std::optional<FilePattern> parse_file_pattern(std::string_view text, std::string& error);
std::string expand_file_pattern(const FilePattern& pattern, int rank, std::string_view job);

}  // namespace shim::stats
