// ECO's partition of hosts into subnets (Lowekamp and Beguelin, "ECO: Efficient Collective
// Operations for Communication on Heterogeneous Networks", Section 4.1, Figure 2),
// from a matrix of measured communication costs.
#pragma once

#include <vector>

namespace shim::topo {

// cost[a][b]: measured cost between hosts a and b (seconds, or any unit);
// only a < b is read, so a matrix with one triangle filled works too.
using CostMatrix = std::vector<std::vector<double>>;

// ECO's rule: visiting edges by increasing cost, an edge joins the subnets of
// its two hosts when it is within `tolerance` (20%) of the cheapest edge of
// each host and of the cheapest edge inside each subnet involved. A joining
// host is not checked against every member, so one inflated measurement
// cannot split a subnet. Returns the subnet of each host, numbered by first
// appearance.
std::vector<int> partition_subnets(const CostMatrix& cost, double tolerance = 0.20);

}  // namespace shim::topo
