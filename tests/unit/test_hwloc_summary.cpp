// The fixtures in tests/data are hand-written hwloc 2.x topologies:
//   two_socket_ib.xml  2 packages x 4 cores x 2 PUs, a NUMA node per package;
//                      an InfiniBand HCA per package (OpenFabrics device
//                      mlx5_N with its IPoIB interface ibN) and an Ethernet
//                      NIC eno1 on package 0.
//   one_socket_eth.xml 1 package x 4 cores x 1 PU, one NUMA node; Ethernet
//                      NIC enp3s0 behind a host bridge attached to the
//                      machine rather than to the package.
//   truncated.xml      the start of one_socket_eth.xml, cut mid-tree.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "topology/hwloc_summary.hpp"

using shim::topo::HwlocSummary;
using shim::topo::HwlocSummaryResult;
using shim::topo::NetworkDevice;
using shim::topo::NetworkDeviceKind;

namespace {

// Appended in place: g++ 12 warns falsely (-Warray-bounds) about
// `std::string(...) + "/" + name` once inlining sees through it.
std::string fixture(const std::string& name) {
  std::string path = SHIM_TEST_DATA_DIR;
  path += '/';
  path += name;
  return path;
}

HwlocSummary load_fixture(const std::string& name) {
  const HwlocSummaryResult result = shim::topo::summarize_xml_file(fixture(name));
  INFO(result.error);
  REQUIRE(result.ok());
  return result.summary;
}

void check_device(const NetworkDevice& device, const std::string& name, NetworkDeviceKind kind, int package,
                  const std::string& local_cpus) {
  INFO("device " << device.name);
  CHECK(device.name == name);
  CHECK(device.kind == kind);
  CHECK(device.packages == std::vector<int>{package});
  // Every fixture has one NUMA node per package, numbered alike.
  CHECK(device.numa_nodes == std::vector<int>{package});
  CHECK(device.local_cpus == local_cpus);
}

// Sets HWLOC_XMLFILE for one scope and puts back what was there before.
class ScopedXmlFile {
 public:
  explicit ScopedXmlFile(const std::string& path) {
    if (const char* previous = std::getenv(kVariable)) previous_ = previous;
    setenv(kVariable, path.c_str(), 1);
  }
  ScopedXmlFile(const ScopedXmlFile&) = delete;
  ScopedXmlFile& operator=(const ScopedXmlFile&) = delete;
  ~ScopedXmlFile() {
    if (previous_) {
      setenv(kVariable, previous_->c_str(), 1);
    } else {
      unsetenv(kVariable);
    }
  }

 private:
  static constexpr const char* kVariable = "HWLOC_XMLFILE";
  std::optional<std::string> previous_;
};

}  // namespace

TEST_CASE("two sockets with an InfiniBand HCA each and Ethernet on socket 0", "[hwloc]") {
  const HwlocSummary summary = load_fixture("two_socket_ib.xml");
  CHECK(summary.packages == 2);
  CHECK(summary.numa_nodes == 2);
  CHECK(summary.cores == 8);
  CHECK(summary.pus == 16);
  REQUIRE(summary.network_devices.size() == 5);
  check_device(summary.network_devices[0], "mlx5_0", NetworkDeviceKind::openfabrics, 0, "0-7");
  check_device(summary.network_devices[1], "ib0", NetworkDeviceKind::network, 0, "0-7");
  check_device(summary.network_devices[2], "eno1", NetworkDeviceKind::network, 0, "0-7");
  check_device(summary.network_devices[3], "mlx5_1", NetworkDeviceKind::openfabrics, 1, "8-15");
  check_device(summary.network_devices[4], "ib1", NetworkDeviceKind::network, 1, "8-15");

  CHECK(shim::topo::describe_one_line(summary) ==
        "2 packages, 2 NUMA nodes, 8 cores, 16 PUs; NICs: mlx5_0 (openfabrics, package 0, NUMA 0), "
        "ib0 (network, package 0, NUMA 0), eno1 (network, package 0, NUMA 0), "
        "mlx5_1 (openfabrics, package 1, NUMA 1), ib1 (network, package 1, NUMA 1)");
  CHECK(shim::topo::describe_lines(summary) == std::vector<std::string>{
                                                   "2 packages, 2 NUMA nodes, 8 cores, 16 PUs",
                                                   "NIC mlx5_0: openfabrics, package 0, NUMA 0, local CPUs 0-7",
                                                   "NIC ib0: network, package 0, NUMA 0, local CPUs 0-7",
                                                   "NIC eno1: network, package 0, NUMA 0, local CPUs 0-7",
                                                   "NIC mlx5_1: openfabrics, package 1, NUMA 1, local CPUs 8-15",
                                                   "NIC ib1: network, package 1, NUMA 1, local CPUs 8-15",
                                               });
}

TEST_CASE("single socket with a machine-level Ethernet NIC", "[hwloc]") {
  const HwlocSummary summary = load_fixture("one_socket_eth.xml");
  CHECK(summary.packages == 1);
  CHECK(summary.numa_nodes == 1);
  CHECK(summary.cores == 4);
  CHECK(summary.pus == 4);
  REQUIRE(summary.network_devices.size() == 1);
  check_device(summary.network_devices[0], "enp3s0", NetworkDeviceKind::network, 0, "0-3");
  CHECK(shim::topo::describe_one_line(summary) ==
        "1 package, 1 NUMA node, 4 cores, 4 PUs; NICs: enp3s0 (network, package 0, NUMA 0)");
}

TEST_CASE("a machine without NICs says so", "[hwloc]") {
  const HwlocSummary summary{1, 1, 2, 4, {}};
  CHECK(shim::topo::describe_one_line(summary) == "1 package, 1 NUMA node, 2 cores, 4 PUs; no NICs");
  CHECK(shim::topo::describe_lines(summary) ==
        std::vector<std::string>{"1 package, 1 NUMA node, 2 cores, 4 PUs", "no network devices"});
}

TEST_CASE("unusable XML files give an error string", "[hwloc]") {
  SECTION("missing file") {
    const HwlocSummaryResult result = shim::topo::summarize_xml_file(fixture("no_such_topology.xml"));
    CHECK_FALSE(result.ok());
    CHECK(result.error ==
          "hwloc: cannot read topology XML '" + fixture("no_such_topology.xml") + "': No such file or directory");
    CHECK(result.summary.network_devices.empty());
  }
  SECTION("truncated file") {
    const HwlocSummaryResult result = shim::topo::summarize_xml_file(fixture("truncated.xml"));
    CHECK_FALSE(result.ok());
    CHECK(result.error ==
          "hwloc: '" + fixture("truncated.xml") + "' is not a valid hwloc topology XML file: Invalid argument");
  }
}

TEST_CASE("the running machine's summary follows HWLOC_XMLFILE", "[hwloc]") {
  SECTION("a valid file replaces discovery") {
    const ScopedXmlFile xml_file(fixture("two_socket_ib.xml"));
    const HwlocSummaryResult result = shim::topo::summarize_this_machine();
    INFO(result.error);
    REQUIRE(result.ok());
    CHECK(result.summary.packages == 2);
    CHECK(result.summary.network_devices.size() == 5);
  }
  SECTION("an unusable file is an error, not the real machine") {
    const ScopedXmlFile xml_file(fixture("truncated.xml"));
    const HwlocSummaryResult result = shim::topo::summarize_this_machine();
    CHECK_FALSE(result.ok());
    CHECK(result.error.find("truncated.xml") != std::string::npos);
  }
}
