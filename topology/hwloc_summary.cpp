#include "topology/hwloc_summary.hpp"

#include <hwloc.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <memory>
#include <optional>
#include <system_error>

namespace shim::topo {

namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology_t topology) const { hwloc_topology_destroy(topology); }
};
using Topology = std::unique_ptr<hwloc_topology, TopologyDeleter>;

// `error` is the errno of the failed hwloc call, saved before building
// `what`, whose allocations may overwrite errno.
HwlocSummaryResult failure(int error, std::string what) {
  what += ": ";
  what += std::generic_category().message(error);
  return {HwlocSummary{}, std::move(what)};
}

// hwloc parses the file in hwloc_topology_set_xml() and builds the tree in
// hwloc_topology_load(); both report malformed or inconsistent content as
// EINVAL, and an unreadable file with the errno of the failed open.
HwlocSummaryResult xml_failure(int error, const std::string& xml_path) {
  return failure(error, error == EINVAL ? "hwloc: '" + xml_path + "' is not a valid hwloc topology XML file"
                                        : "hwloc: cannot read topology XML '" + xml_path + "'");
}

std::string cpu_list(hwloc_const_cpuset_t cpuset) {
  char* text = nullptr;
  if (hwloc_bitmap_list_asprintf(&text, cpuset) < 0) return "?";
  std::string list(text);
  std::free(text);
  return list;
}

int count_of(hwloc_topology_t topology, hwloc_obj_type_t type) {
  // hwloc answers -1 only for types found at several depths, which these
  // types never are; an absent type (no Package on some VMs) counts 0.
  return std::max(0, hwloc_get_nbobjs_by_type(topology, type));
}

NetworkDevice describe_device(hwloc_topology_t topology, hwloc_obj_t device, NetworkDeviceKind kind) {
  NetworkDevice described;
  described.name = device->name != nullptr ? device->name : "(unnamed)";
  described.kind = kind;
  // I/O objects have no cpuset; their locality is that of the CPU-side object
  // their bus hangs off (a package, or the whole machine on many boards).
  const hwloc_obj_t anchor = hwloc_get_non_io_ancestor_obj(topology, device);
  described.local_cpus = cpu_list(anchor->cpuset);
  for (hwloc_obj_t package = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_PACKAGE, nullptr); package != nullptr;
       package = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_PACKAGE, package)) {
    if (hwloc_bitmap_intersects(package->cpuset, anchor->cpuset)) {
      described.packages.push_back(static_cast<int>(package->logical_index));
    }
  }
  // By nodeset rather than cpuset, so memory-only NUMA nodes (HBM, CXL) that
  // sit beside the device count as local too.
  for (hwloc_obj_t node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, nullptr); node != nullptr;
       node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, node)) {
    if (hwloc_bitmap_intersects(node->nodeset, anchor->nodeset)) {
      described.numa_nodes.push_back(static_cast<int>(node->logical_index));
    }
  }
  return described;
}

std::optional<NetworkDeviceKind> network_kind(hwloc_obj_t os_device) {
  switch (os_device->attr->osdev.type) {
    case HWLOC_OBJ_OSDEV_NETWORK:
      return NetworkDeviceKind::network;
    case HWLOC_OBJ_OSDEV_OPENFABRICS:
      return NetworkDeviceKind::openfabrics;
    default:
      return std::nullopt;
  }
}

HwlocSummary summarize(hwloc_topology_t topology) {
  HwlocSummary summary;
  summary.packages = count_of(topology, HWLOC_OBJ_PACKAGE);
  summary.numa_nodes = count_of(topology, HWLOC_OBJ_NUMANODE);
  summary.cores = count_of(topology, HWLOC_OBJ_CORE);
  summary.pus = count_of(topology, HWLOC_OBJ_PU);
  for (hwloc_obj_t device = hwloc_get_next_osdev(topology, nullptr); device != nullptr;
       device = hwloc_get_next_osdev(topology, device)) {
    if (const auto kind = network_kind(device)) {
      summary.network_devices.push_back(describe_device(topology, device, *kind));
    }
  }
  return summary;
}

// Without an XML path, hwloc discovers the running machine.
HwlocSummaryResult load_and_summarize(const std::string* xml_path) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    const int error = errno;
    return failure(error, "hwloc: cannot create a topology");
  }
  const Topology topology(raw);
  // hwloc drops every I/O object by default. "Important" keeps network and
  // OpenFabrics devices with the PCI devices and bridges leading to them.
  if (hwloc_topology_set_io_types_filter(topology.get(), HWLOC_TYPE_FILTER_KEEP_IMPORTANT) != 0) {
    const int error = errno;
    return failure(error, "hwloc: cannot keep I/O devices");
  }
  if (xml_path != nullptr && hwloc_topology_set_xml(topology.get(), xml_path->c_str()) != 0) {
    const int error = errno;
    return xml_failure(error, *xml_path);
  }
  if (hwloc_topology_load(topology.get()) != 0) {
    const int error = errno;
    return xml_path != nullptr ? xml_failure(error, *xml_path)
                               : failure(error, "hwloc: cannot discover this machine's topology");
  }
  return {summarize(topology.get()), ""};
}

std::string counted(int count, std::string_view singular, std::string_view plural) {
  return std::to_string(count) + " " + std::string(count == 1 ? singular : plural);
}

// "package 0", "packages 0,1"; empty when there are none.
std::string index_list(std::string_view singular, std::string_view plural, const std::vector<int>& indexes) {
  if (indexes.empty()) return "";
  std::string text(indexes.size() == 1 ? singular : plural);
  for (std::size_t i = 0; i < indexes.size(); ++i) {
    text += (i == 0 ? " " : ",") + std::to_string(indexes[i]);
  }
  return text;
}

std::string counts(const HwlocSummary& summary) {
  return counted(summary.packages, "package", "packages") + ", " +
         counted(summary.numa_nodes, "NUMA node", "NUMA nodes") + ", " + counted(summary.cores, "core", "cores") +
         ", " + counted(summary.pus, "PU", "PUs");
}

// "openfabrics, package 0, NUMA 0"
std::string kind_and_place(const NetworkDevice& device) {
  std::string text(name(device.kind));
  for (const std::string& part :
       {index_list("package", "packages", device.packages), index_list("NUMA", "NUMA", device.numa_nodes)}) {
    if (!part.empty()) text += ", " + part;
  }
  return text;
}

}  // namespace

HwlocSummaryResult summarize_this_machine() {
  // hwloc honours HWLOC_XMLFILE by itself, but when the file cannot be loaded
  // it silently discovers the real machine instead; loading the file
  // explicitly turns that into a reported error.
  if (const char* xml_path = std::getenv("HWLOC_XMLFILE"); xml_path != nullptr && *xml_path != '\0') {
    return summarize_xml_file(xml_path);
  }
  return load_and_summarize(nullptr);
}

HwlocSummaryResult summarize_xml_file(const std::string& xml_path) { return load_and_summarize(&xml_path); }

std::string describe_one_line(const HwlocSummary& summary) {
  std::string text = counts(summary);
  if (summary.network_devices.empty()) return text + "; no NICs";
  text += "; NICs:";
  for (std::size_t i = 0; i < summary.network_devices.size(); ++i) {
    const NetworkDevice& device = summary.network_devices[i];
    text += (i == 0 ? " " : ", ") + device.name + " (" + kind_and_place(device) + ")";
  }
  return text;
}

std::vector<std::string> describe_lines(const HwlocSummary& summary) {
  std::vector<std::string> lines = {counts(summary)};
  if (summary.network_devices.empty()) {
    lines.emplace_back("no network devices");
    return lines;
  }
  for (const NetworkDevice& device : summary.network_devices) {
    lines.push_back("NIC " + device.name + ": " + kind_and_place(device) + ", local CPUs " + device.local_cpus);
  }
  return lines;
}

}  // namespace shim::topo
