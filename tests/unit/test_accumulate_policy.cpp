#include <catch2/catch.hpp>
#include <optional>
#include <string>

#include "rma/accumulate_policy.hpp"
#include "shim/config.hpp"

using shim::rma::AccumulatePath;
using shim::rma::AccumulatePolicy;
using shim::rma::WindowFacts;

namespace {

WindowFacts facts(std::optional<AccumulatePath> requested, int nodes, bool running, bool reach) {
  WindowFacts f;
  f.requested = requested;
  f.nodes = nodes;
  f.servers_running = running;
  f.servers_reach = reach;
  return f;
}

AccumulatePath path(const WindowFacts& f) { return shim::rma::accumulate_policy().choose(f).outcome; }

std::string reason(const WindowFacts& f) {
  return AccumulatePolicy::explain(shim::rma::accumulate_policy().choose(f), f);
}

}  // namespace

TEST_CASE("accumulate path: explicit requests win", "[accumulate]") {
  for (int nodes : {1, 4}) {
    CHECK(path(facts(AccumulatePath::native, nodes, true, true)) == AccumulatePath::native);
    CHECK(path(facts(AccumulatePath::caller, nodes, false, false)) == AccumulatePath::caller);
  }
  WindowFacts by_info = facts(AccumulatePath::caller, 2, true, true);
  by_info.requested_by_info_key = true;
  CHECK_THAT(reason(by_info), Catch::Contains("info key shim_accumulate"));
  CHECK_THAT(reason(facts(AccumulatePath::caller, 2, true, true)), Catch::Contains("SHIM_ACCUMULATE"));
}

TEST_CASE("accumulate path: owner wherever every target is reachable", "[accumulate]") {
  for (std::optional<AccumulatePath> choice : {std::optional<AccumulatePath>{}, std::optional(AccumulatePath::owner)}) {
    // One node needs no server at all.
    CHECK(path(facts(choice, 1, false, false)) == AccumulatePath::owner);
    CHECK(path(facts(choice, 3, true, true)) == AccumulatePath::owner);
    // Spanning nodes without servers, or with a node's server outside the
    // window's group: native, with the reason.
    CHECK(path(facts(choice, 3, false, true)) == AccumulatePath::native);
    CHECK_THAT(reason(facts(choice, 3, false, true)), Catch::Contains("no server threads"));
    CHECK(path(facts(choice, 3, true, false)) == AccumulatePath::native);
    CHECK_THAT(reason(facts(choice, 3, true, false)), Catch::Contains("not in the window's group"));
  }
}

TEST_CASE("accumulate policy: every path has a rule, every rule explains itself", "[accumulate]") {
  for (AccumulatePath wanted : shim::rma::kAccumulatePaths) {
    bool found = false;
    for (const auto& rule : shim::rma::accumulate_policy().rules()) found = found || rule.outcome == wanted;
    CHECK(found);
  }
  for (const auto& rule : shim::rma::accumulate_policy().rules()) {
    CHECK_FALSE(rule.condition.empty());
    CHECK_FALSE(rule.why.empty());
  }
  CHECK(shim::rma::accumulate_policy().rules().back().condition == "otherwise");
}

TEST_CASE("accumulate settings parse, and bad values are reported", "[accumulate][config]") {
  const auto parsed = shim::parse_config([](const char* name) -> const char* {
    const std::string variable(name);
    if (variable == "SHIM_ACCUMULATE") return "caller";
    if (variable == "SHIM_SERVER") return "0";
    if (variable == "SHIM_SERVER_POLL") return "50";
    return nullptr;
  });
  CHECK(parsed.problems.empty());
  CHECK(parsed.config.accumulate == AccumulatePath::caller);
  CHECK_FALSE(parsed.config.server);
  CHECK(parsed.config.server_poll_max_us == 50);

  const auto bad = shim::parse_config([](const char* name) -> const char* {
    const std::string variable(name);
    if (variable == "SHIM_ACCUMULATE") return "fastest";
    if (variable == "SHIM_SERVER_POLL") return "0";
    return nullptr;
  });
  REQUIRE(bad.problems.size() == 2);
  CHECK_THAT(bad.problems[0], Catch::Contains("SHIM_ACCUMULATE='fastest'"));
  CHECK_THAT(bad.problems[1], Catch::Contains("SHIM_SERVER_POLL='0'"));
  CHECK_FALSE(bad.config.accumulate.has_value());
  CHECK(bad.config.server_poll_max_us == 1000);
}
