#include <catch2/catch.hpp>

#include "rma/accumulate_policy.hpp"
#include "shim/config.hpp"

using shim::AccumulateChoice;
using shim::rma::AccumulatePath;
using shim::rma::choose_accumulate_path;
using shim::rma::WindowFacts;

namespace {

WindowFacts facts(AccumulateChoice requested, int nodes, bool running, bool reach) {
  WindowFacts f;
  f.requested = requested;
  f.nodes = nodes;
  f.servers_running = running;
  f.servers_reach = reach;
  return f;
}

}  // namespace

TEST_CASE("accumulate path: explicit requests win", "[accumulate]") {
  for (int nodes : {1, 4}) {
    CHECK(choose_accumulate_path(facts(AccumulateChoice::native, nodes, true, true)).path == AccumulatePath::native);
    CHECK(choose_accumulate_path(facts(AccumulateChoice::caller, nodes, false, false)).path == AccumulatePath::caller);
  }
  WindowFacts by_info = facts(AccumulateChoice::caller, 2, true, true);
  by_info.from_info_key = true;
  CHECK_THAT(choose_accumulate_path(by_info).reason, Catch::Contains("info key shim_accumulate"));
  CHECK_THAT(choose_accumulate_path(facts(AccumulateChoice::caller, 2, true, true)).reason,
             Catch::Contains("SHIM_ACCUMULATE"));
}

TEST_CASE("accumulate path: owner wherever every target is reachable", "[accumulate]") {
  for (AccumulateChoice choice : {AccumulateChoice::automatic, AccumulateChoice::owner}) {
    // One node needs no server at all.
    CHECK(choose_accumulate_path(facts(choice, 1, false, false)).path == AccumulatePath::owner);
    CHECK(choose_accumulate_path(facts(choice, 3, true, true)).path == AccumulatePath::owner);
    // Spanning nodes without servers, or with a node's server outside the
    // window's group: native, with the reason.
    const auto no_threads = choose_accumulate_path(facts(choice, 3, false, true));
    CHECK(no_threads.path == AccumulatePath::native);
    CHECK_THAT(no_threads.reason, Catch::Contains("no server threads"));
    const auto unreachable = choose_accumulate_path(facts(choice, 3, true, false));
    CHECK(unreachable.path == AccumulatePath::native);
    CHECK_THAT(unreachable.reason, Catch::Contains("not in the window's group"));
  }
}

TEST_CASE("accumulate policy explains every rule", "[accumulate]") {
  const std::string table = shim::rma::describe_accumulate_policy();
  for (const char* path : {"-> native", "-> caller", "-> owner"}) CHECK_THAT(table, Catch::Contains(path));
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
  CHECK(parsed.config.accumulate == AccumulateChoice::caller);
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
  CHECK(bad.config.accumulate == AccumulateChoice::automatic);
  CHECK(bad.config.server_poll_max_us == 1000);
}
