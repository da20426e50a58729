#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "shim/config.hpp"
#include "shim/stats_report.hpp"

namespace stats = shim::stats;

namespace {

shim::ParsedConfig parse_stats(const char* value) {
  return shim::parse_config(
      [value](const char* name) -> const char* { return std::string(name) == "SHIM_STATS" ? value : nullptr; });
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

// The line of `lines` whose words begin with `first`, split into words.
std::vector<std::string> row(const std::vector<std::string>& lines, const std::vector<std::string>& first) {
  for (const std::string& line : lines) {
    const std::vector<std::string> w = words(line);
    if (w.size() >= first.size() && std::equal(first.begin(), first.end(), w.begin())) return w;
  }
  return {};
}

}  // namespace

TEST_CASE("SHIM_STATS takes a switch or a file name", "[stats][config]") {
  auto parsed = parse_stats("/tmp/run-%j/rank-%r.txt");
  CHECK(parsed.problems.empty());
  CHECK(parsed.config.stats);
  CHECK(std::string(parsed.config.stats_path.data()) == "/tmp/run-%j/rank-%r.txt");
  parsed = parse_stats("1");
  CHECK(parsed.config.stats);
  CHECK(parsed.config.stats_path[0] == '\0');
  parsed = parse_stats("off");
  CHECK_FALSE(parsed.config.stats);
  parsed = parse_stats("");
  REQUIRE(parsed.problems.size() == 1);
  CHECK(parsed.problems[0].find("SHIM_STATS=''") != std::string::npos);
  CHECK_FALSE(parsed.config.stats);
  const std::string too_long(2000, 'x');
  parsed = parse_stats(too_long.c_str());
  CHECK(parsed.problems.size() == 1);
  CHECK_FALSE(parsed.config.stats);
}

TEST_CASE("file names: %r the rank, %j the job, %% a percent sign", "[stats]") {
  std::string error;
  auto pattern = stats::parse_file_pattern("run/%j/r%r-100%%.txt", error);
  REQUIRE(pattern);
  CHECK(pattern->per_rank);
  CHECK(pattern->job);
  CHECK(stats::expand_file_pattern(*pattern, 3, "77") == "run/77/r3-100%.txt");
  pattern = stats::parse_file_pattern("stats-%%r.txt", error);
  REQUIRE(pattern);
  CHECK_FALSE(pattern->per_rank);
  CHECK_FALSE(pattern->job);
  CHECK(stats::expand_file_pattern(*pattern, 3, "77") == "stats-%r.txt");

  CHECK_FALSE(stats::parse_file_pattern("stats-%q.txt", error));
  CHECK(error == "%q is not a placeholder");
  CHECK_FALSE(stats::parse_file_pattern("stats-%", error));
  CHECK(error == "it ends in a lone %");
}

TEST_CASE("tables: text columns left, numbers right, two spaces apart", "[stats]") {
  const auto lines = stats::aligned({{"Op", "Path", "Ops"}, {"Accumulate", "server", "7"}, {"x", "native", "1234"}}, 2);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "Op          Path     Ops");
  CHECK(lines[1] == "Accumulate  server     7");
  CHECK(lines[2] == "x           native  1234");
}

TEST_CASE("the report: one section per family, counts as recorded", "[stats]") {
  stats::reset();
  stats::record_accumulate(stats::AccumulateOp::accumulate, stats::AccumulatePath::server, 24);
  stats::record_accumulate(stats::AccumulateOp::accumulate, stats::AccumulatePath::server, 8);
  stats::record_accumulate(stats::AccumulateOp::compare_and_swap, stats::AccumulatePath::same_node, 8);
  stats::record_mirror(stats::MirrorOp::get, 80, false);
  stats::record_mirror(stats::MirrorOp::merge, 800, true);
  stats::record_mirror(stats::MirrorOp::merge, 800, false);

  stats::ReportInput input;
  input.facts = {{"Command", "./app"}, {"Job", "2 processes"}};
  input.processes = 2;
  input.collectives = stats::snapshot();
  input.sums = stats::rma_snapshot();
  input.maxima = input.sums;
  input.maxima.accumulate[0][1] = {1, 1, 24};
  input.servers = {{1, 2, 2, 32, 1000000, 4000000, 2000000}, {0, 0, 0, 0, 0, 4000000, 0}};
  const auto lines = stats::report_text(input);

  CHECK(lines[0].rfind("@--- shim report (SHIM_STATS) ---", 0) == 0);
  CHECK(lines[1] == "@ Command : ./app");
  CHECK(lines[2] == "@ Job     : 2 processes");
  CHECK(row(lines, {"Accumulate", "server"}) == std::vector<std::string>{"Accumulate", "server", "2", "32", "1", "24"});
  CHECK(row(lines, {"Compare_and_swap"}) ==
        std::vector<std::string>{"Compare_and_swap", "same-node", "1", "8", "1", "8"});
  CHECK(row(lines, {"total", "server"}) == std::vector<std::string>{"total", "server", "2", "32"});
  CHECK(row(lines, {"Fetch_and_op"}).empty());  // no calls, no row
  // Busy 1 ms of 4 ms; 2 ms of CPU, so 1 ms of it in the 3 ms idle.
  CHECK(row(lines, {"1", "2"}) == std::vector<std::string>{"1", "2", "2", "32", "1.000", "25.00", "33.3", "0.00"});
  CHECK(row(lines, {"0", "0"}) == std::vector<std::string>{"0", "0", "0", "0", "0.000", "0.00", "n/a", "0.00"});
  // Local calls are operations; a collective is one, counted by rank 0.
  CHECK(row(lines, {"get"}) == std::vector<std::string>{"get", "1", "1", "80", "1"});
  CHECK(row(lines, {"merge"}) == std::vector<std::string>{"merge", "2", "1", "800", "2"});
  CHECK(std::count(lines.begin(), lines.end(), "(no calls)") == 2);  // alltoall and broadcast
  stats::reset();
  CHECK(stats::rma_snapshot().mirror[0][stats::rma_calls] == 0);
}
