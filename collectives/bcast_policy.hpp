// Automatic broadcast selection (SHIM_BCAST=auto) as a rule table: the first
// matching rule decides and explains itself (SHIM_VERBOSE, shim-info).
#pragma once

#include <cstdint>

#include "collectives/bcast_algorithm.hpp"
#include "collectives/send_cost.hpp"
#include "common/rule_table.hpp"

namespace shim::coll {

struct BcastFacts {
  std::int64_t bytes = 0;
  int nodes = 1;
  int ppn = 1;               // largest number of processes on one node
  int subnets = 0;           // subnets the communicator spans by the network profile; 0 without one
  bool consecutive = false;  // each node's ranks are one ascending block (topo::Layout::consecutive)
  int send_cost_ns = kReferenceSendCostNs;
  // What one node's link carries to other nodes, bytes per second
  // (SHIM_NODE_BANDWIDTH, the profile); 0: unknown.
  std::int64_t node_bandwidth = 0;
  // The two-level tree for this message is a chain between nodes, or one
  // chain through every rank (bcast_tree: chain_between_nodes,
  // one_chain_through_ranks), streaming it at a link's rate.
  bool twolevel_chains = false;
};

// Where a node's link is slow, a tree's relays are held up by the link: each
// sends the whole message to each child, where scatter-allgather between node
// leaders puts about the message once each way through every link
// (collectives/bcast_scatter_allgather). Scale model, 1 GbE platform
// (`bench/sim/simrun.py eth-1g LAYOUT bcast shim-scatter-allgather SIZES`),
// scatter-allgather against the best of MPICH's selection and the two-level
// tree, 1 KiB / 4 KiB / 16 KiB / 64 KiB / 256 KiB / 1 MiB: 8 x 4 60.8 /
// 125.4 / 381.0 / 1434.7 / 3997.8 / 15862.1 us against 52.4 / 206.9 / 474.9
// / 1521.5 / 4903.0 / 10143.2; 16 x 4 75.3 / 146.9 / 430.2 / 1642.7 / 4564.8
// / 17000.5 against 70.0 / 337.9 / 615.9 / 1799.0 / 5182.1 / 11289.7; 32 x 4
// 89.2 / 164.1 / 461.5 / 1769.8 / 4850.5 / 17577.2 against 87.5 / 499.0 /
// 755.8 / 2084.0 / 5464.2 / 18987.9; 64 x 4 102.7 / 178.6 / 488.0 / 1824.0 /
// 5058.5 / 18144.2 against 105.1 / 556.3 / 896.7 / 2369.1 / 5749.4 /
// 19272.4. It loses at 1 KiB, where the sends count more than the link, and
// wherever the two-level tree is a chain, streaming the message at the
// link's rate: 1 MiB on 8 and 16 nodes of 4 (chain between nodes), 256 KiB
// / 1 MiB on 8 x 1 (one chain through every rank: scatter-allgather 3977.8 /
// 15782.9 us against the chain's 3182.0 / 10116.2; at 16 / 64 KiB, no chain
// yet, 375.9 / 1429.5 against the tree's 474.4 / 1519.6). On 25 GbE it loses at every size (64 x 4, 1 KiB-1 MiB: 84.9 /
// 94.1 / 90.8 / 130.8 / 273.7 / 873.7 us against 51.7 / 22.6 / 42.8 / 87.8
// / 228.2 / 781.3): a 16 KiB message takes 5 us on such a link, less than
// the sends of its 2 log2(nodes) steps. Between 1 and 25 Gb/s the model has
// no platform, so the rule takes node links of up to twice 1 GbE; it starts
// at 8 nodes, the fewest the model ran.
inline constexpr std::int64_t kBcastSlowLinkMaxBytesPerSecond = 250'000'000;
inline constexpr int kBcastScatterAllgatherMinNodes = 8;
inline constexpr std::int64_t kBcastScatterAllgatherMinBytes = 4096;

// Where each message costs its sender at least kBcastCostlySendNs, a short
// broadcast is the root's and the relays' sends one after another: MPI's
// binomial tree needs log2(ranks) of them on its longest path, the
// two-level tree's 8-wide fan-out between nodes up to 7 at the root, and
// ECO's trees as many. Scale model (`bench/sim/sweep few-nodes`, TCP
// platforms, 6.4 us per send), 1 B / 256 B / 1 KiB / 4 KiB, two-level
// against MPICH's selection: eth-25g 8 x 4 45.0 / 50.4 / 57.3 / 16.7 us
// against 19.8 / 22.4 / 26.1 / 11.8; eth-1g 8 x 16 45.3 / 52.9 / 70.5 /
// 246.7 against 20.4 / 29.2 / 52.9 / 207.8; ECO on the ECO-like platform,
// 4 x 8, 20.6 / 29.4 / 51.9 against 13.8 / 19.7 / 35.3. So up to
// kBcastCostlySendMaxBytes such broadcasts stay with MPI; between measured
// subnets only up to kBcastCostlySendSubnetsMaxBytes, since at 4 KiB the
// slow links between subnets count more than the sends, and ECO crosses
// each once (4 x 8 91.0 us against MPICH's 107.3; 8 x 4 107.5 against
// 208.5).
inline constexpr int kBcastCostlySendNs = 1000;
inline constexpr std::int64_t kBcastCostlySendMaxBytes = 4096;
inline constexpr std::int64_t kBcastCostlySendSubnetsMaxBytes = 1024;
// ... and only while MPI's tree pushes little through the slow links. Its
// messages between nodes are about one per node, whatever the processes per
// node, and where subnets interleave in rank order most of them cross: about
// (nodes per subnet) x bytes over one subnet's link. Scale model, ECO-like
// platform (node i in subnet i % 4, docs/scale/full.md), MPICH against ECO:
// 64 x 8 and 64 x 1 (16 nodes per subnet) 47.1 / 63.6 / 143.9 us and 46.8 /
// 63.2 / 142.2 against 59.7 / 61.4 / 72.6 and 59.3 / 61.0 / 72.2 at 16 / 64 /
// 256 B: the same at 1 and 8 processes per node; 128 x 1 (32 per subnet)
// 62.6 / 101.1 / 257.3 against 72.2 / 74.0 / 86.7 at 16 / 64 / 256 B; 16 x
// 1 and 16 x 8 (4 per subnet) 47.6 / 48.1 against 50.5 / 51.0 at 256 B,
// 125.5 against 75.7 at 1 KiB; 4 x 8 (1 per subnet) 35.3 against 51.9 at
// 1 KiB. MPICH leads below 1 KiB across, the two tie (within 5%) at 1 KiB,
// ECO leads from 2 KiB.
inline constexpr std::int64_t kBcastCostlySendSubnetCrossingBytes = 1024;

// Two nodes of one process each: one message either way, which segments
// only cut up (scale model, onload, 2 x 1, 1 MiB: MPICH's selection 84.5 us
// against the two-level tree's 123.7). From three nodes the tree over nodes
// ties or wins at every size since it chains long messages
// (coll::chain_between_nodes, coll::one_chain_through_ranks), except at 64
// KiB-96 KiB on 3-4 nodes, which few-nodes-whole covers. MPICH's selection
// against two-level (docs/scale/bcast.md), 1 B / 16 KiB / 64 KiB / 256 KiB /
// 1 MiB: 4 x 1 1.3 / 9.1 / 11.7 / 43.1 / 169.0 us against 0.7 / 6.2 / 14.1 /
// 36.6 / 128.4; 3 x 1 at 64 KiB / 128 KiB / 256 KiB / 1 MiB 11.7 / 22.2 /
// 43.1 / 169.0 against 12.4 / 19.0 / 34.3 / 125.9; 5 x 1 17.5 / 33.3 / 64.7
// / 253.5 against 15.2 / 26.0 / 38.9 / 130.9. Left over: 4 x 1 at 96 KiB,
// 16.9 against 19.6 (from 128 KiB the tree wins, 21.3 against 22.2).
// The model has 4 KiB segments ahead of the one message on two nodes of one
// at 5-48 KiB (2 x 1 at 16 KiB 2.7 against 4.2 us, from its per-message cost
// curve of this machine's shared memory), but between two emulated hosts
// they took 1.9-3.2x native's time at 8-16 KiB (README, "Broadcast"), so
// those stay native too.

// Where MPICH's own broadcast beats shim's pipelined two-level tree: each
// node's ranks one block, at most kBcastFewNodes nodes, messages of
// [kBcastWholeMin, kBcastWholeMax) bytes. Its binomial tree sends the whole
// message in log2(ranks) steps, only two of which cross the network with at
// most 4 nodes; the tree's 8 KiB segments each pay a message's fixed cost at
// every hop. Scale model, onload, MPICH's selection against two-level at 64
// KiB: 2 x 2 8.4 / 10.1 us, 2 x 8 13.5 / 14.6, 4 x 4 16.8 / 17.9, 4 x 8 19.3 /
// 19.2, 8 x 4 22.6 / 22.4; at 48 KiB 21.8-55.5 against 8.3-16.2, at 96 KiB
// 2 x 2 12.2 / 13.9 and 4 x 4 24.5 / 23.9.
inline constexpr int kBcastFewNodes = 4;
inline constexpr std::int64_t kBcastWholeMin = 64 * 1024;
inline constexpr std::int64_t kBcastWholeMax = 96 * 1024;

using BcastRule = Rule<BcastFacts, BcastAlgorithm>;
using BcastPolicy = RuleTable<BcastFacts, BcastAlgorithm>;

const BcastPolicy& bcast_policy();

// True when the table picks native for every message and root.
bool bcast_native_for_every_size(int nodes, int ppn, int subnets);

}  // namespace shim::coll
