#include <catch2/catch.hpp>
#include <vector>

#include "topology/node_grouping.hpp"

using shim::topo::group_nodes;
using shim::topo::hash_processor_name;
using shim::topo::NodeEvidence;

namespace {
std::uint64_t h(const char* name) { return hash_processor_name(name); }
}  // namespace

TEST_CASE("shared-memory groups confirmed by names are used as they are", "[topology]") {
  const std::vector<NodeEvidence> evidence = {{h("a"), 0}, {h("a"), 0}, {h("b"), 2}, {h("b"), 2}};
  const auto grouping = group_nodes(evidence);
  CHECK_FALSE(grouping.by_name);
  CHECK(grouping.node_keys == std::vector<std::int64_t>{0, 0, 2, 2});
}

TEST_CASE("singleton shared-memory groups fall back to names", "[topology]") {
  const std::vector<NodeEvidence> evidence = {{h("a"), 0}, {h("a"), 1}, {h("b"), 2}, {h("b"), 3}};
  const auto grouping = group_nodes(evidence);
  CHECK(grouping.by_name);
  CHECK(grouping.node_keys == std::vector<std::int64_t>{0, 0, 2, 2});
  CHECK(grouping.source.find("single rank") != std::string::npos);
}

TEST_CASE("names that split a shared-memory group win", "[topology]") {
  // Namespaces on one kernel: shared memory spans hosts with their own names.
  const std::vector<NodeEvidence> evidence = {{h("h1"), 0}, {h("h2"), 0}, {h("h1"), 0}, {h("h2"), 0}};
  const auto grouping = group_nodes(evidence);
  CHECK(grouping.by_name);
  CHECK(grouping.node_keys == std::vector<std::int64_t>{0, 1, 0, 1});
  CHECK(grouping.source.find("disagree") != std::string::npos);
}

TEST_CASE("one name over several shared-memory groups also disagrees", "[topology]") {
  const std::vector<NodeEvidence> evidence = {{h("x"), 0}, {h("x"), 0}, {h("x"), 2}, {h("x"), 2}};
  const auto grouping = group_nodes(evidence);
  CHECK(grouping.by_name);
  CHECK(grouping.node_keys == std::vector<std::int64_t>{0, 0, 0, 0});
}

TEST_CASE("a single rank is its own node", "[topology]") {
  const std::vector<NodeEvidence> evidence = {{h("solo"), 0}};
  const auto grouping = group_nodes(evidence);
  CHECK_FALSE(grouping.by_name);
  CHECK(grouping.node_keys == std::vector<std::int64_t>{0});
}

TEST_CASE("virtual nodes are consecutive blocks of world ranks", "[topology]") {
  CHECK(shim::topo::virtual_node_of(0, 3) == 0);
  CHECK(shim::topo::virtual_node_of(2, 3) == 0);
  CHECK(shim::topo::virtual_node_of(3, 3) == 1);
  CHECK(shim::topo::virtual_node_of(7, 3) == 2);
}

TEST_CASE("processor-name hash is FNV-1a", "[topology]") {
  CHECK(hash_processor_name("") == 14695981039346656037ULL);
  CHECK(hash_processor_name("a") == 0xaf63dc4c8601ec8cULL);
  CHECK(hash_processor_name("node01") != hash_processor_name("node10"));
}
