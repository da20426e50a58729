// Schedule builders for the hierarchical alltoall algorithms of Kumar,
// Mamidala and Panda, "Scaling Alltoall Collective on Multi-core Systems".
// Each returns the calling rank's part of the collective; run on every rank of
// the layout, the parts deliver block (s -> d) from rank s's send buffer to
// rank d's receive buffer, exactly once.
//
// Uneven nodes: a node with fewer processes than another still needs someone
// to aggregate (SA) or receive (RD) for each foreign local rank y; local rank
// y % ppn of that node does it. The inter-node step then is no longer an
// alltoall within one rail, so it runs as a point-to-point exchange.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "collectives/alltoall_algorithm.hpp"
#include "collectives/schedule.hpp"
#include "topology/layout.hpp"

namespace shim::coll {

// SA, send-side aggregation: (1) intra-node exchange leaving local rank x with
// everything its node sends to local rank x of every node; (2) alltoall among
// equal local ranks.
Schedule build_sa_schedule(const topo::Layout& layout, int rank);

// RD, receive-side distribution: (1) alltoall among equal local ranks carrying
// everything a rank sends to a whole node; (2) intra-node distribution.
Schedule build_rd_schedule(const topo::Layout& layout, int rank);

// Leader-based: (1) gather to local rank 0; (2) alltoall among leaders;
// (3) scatter.
Schedule build_leader_schedule(const topo::Layout& layout, int rank);

// Linear: every block sent straight to its rank. Not hierarchical: it wins
// where the node's link gains from many concurrent flows and aggregation's
// copies cost more than per-message overheads save. Rank r sends to r+1,
// r+2, ... and receives from r-1, r-2, ..., so no rank is every sender's
// first target. Up to kLinearAllAtOnceMaxRanks processes, blocks below
// kLinearPacedFromBlockBytes are posted all at once (Open MPI's "basic
// linear"); larger blocks, and any beyond that many processes, kLinearInFlight
// per rank and direction (a paced exchange, as MVAPICH2's scatter-destination
// alltoall throttles itself); with one process per node, at any process
// count, blocks from kLinearOnePerNodePacedFromBlockBytes. Not in-place safe
// (Schedule::in_place_safe).
Schedule build_linear_schedule(const topo::Layout& layout, int rank);

// Small blocks all at once up to kLinearAllAtOnceMaxRanks, as far as the
// scale model timed them (16-128 processes; the policy takes linear up to
// kManyRanksLinearMaxRanks); beyond, untimed (SMPI did not finish such runs here),
// every block is paced rather than putting a message for every process on the
// NIC and into the receivers' queues at once.
// Paced with 16 in flight, 16 KiB to 64 KiB blocks (onload platform,
// `bench/sim/simrun.py ib-onload 32x4 alltoall shim-linear
// 16384,32768,65536`): at 32 x 4 732.8 / 1463.6 /
// 2736.0 us with 8 in flight, 695.9 / 1393.5 / 2736.0 with 16, 710.0 /
// 1425.4 / 2736.0 with 32; at 16 x 8 1365.3 / 2728.3 / 5291.0 with 8,
// 1336.5 / 2674.4 / 5291.0 with 16, 1351.0 / 2708.0 / 5291.0 with 32. At 16 x
// 4 (64 processes) 16 in flight took 345.4 / 693.6 / 1326.4 us where all at
// once took 392 us at 16 KiB and 1326.4 at 64 KiB.
// Up to 64 processes the window pays from kLinearPacedFromBlockBytes (the
// same model, onload platform, 17-64 processes, `bench/sim/simrun.py
// ib-onload NxP alltoall shim-linear 256,1024,4096,16384,65536` with all at
// once against 16 in flight): at 16 KiB 16 in flight saved 3-21% (32 x 2
// 182.3 against 231.8 us, 16 x 4 345.4 / 391.8, 8 x 8 631.2 / 678.0, 8 x 4
// 169.1 / 185.6, 4 x 8 278.5 / 295.4, 4 x 16 1080.5 / 1118.1), at 4 KiB
// 1-2%, at 64 KiB nothing; but small blocks lose the start of every message
// at once: at 256 B 42% more at 32 x 2 (5.33 against 3.74 us) and 10% at 16
// x 4, at 1 KiB 6% at 32 x 2. Up to kLinearInFlight processes the window
// holds every message anyway. At 128 processes (full sweep's 64 x 2, where
// Open MPI's basic linear beat 16 in flight at 1 KiB, 23.69 against 27.46 us;
// `bench/sim/simrun.py ib-onload 64x2|32x4|16x8 alltoall shim-linear
// 256,512,1024,2048` with each limit) all at once took 7.32 / 12.54 / 23.69 /
// 45.89 us at 64 x 2 against 10.61 / 15.93 / 27.46 / 50.88 paced.
inline constexpr int kLinearAllAtOnceMaxRanks = 128;
inline constexpr int kLinearInFlight = 16;
inline constexpr std::int64_t kLinearPacedFromBlockBytes = 4096;

// With one process per node each node's link carries that rank's window
// alone: beyond two waves (33-64 nodes) 4 KiB blocks lost by pacing, all at
// once they took 14.93 / 17.83 / 23.63 us at 40 / 48 / 64 x 1 against 15.17 /
// 19.39 / 27.41 in 16-message waves; up to 32 nodes waves were ahead by no
// more than 1.8% (20, 24, 32 x 1: 7.56 / 8.98 / 11.84 against 7.69 / 9.14 /
// 12.04). From 8 KiB waves led again (64 x 1 59.0 against 62.3, 32 x 1 29.5
// against 31.3). So too beyond kLinearAllAtOnceMaxRanks: at 128 x 1 all at
// once took 12.46 / 46.81 us at 1 / 4 KiB against 17.85 / 59.49 in waves,
// 124.2 against 119.9 at 8 KiB. Onload platform, `bench/sim/simrun.py
// ib-onload Nx1 alltoall shim-linear 1024,4096,8192` with each threshold.
inline constexpr std::int64_t kLinearOnePerNodePacedFromBlockBytes = 8192;

// The block size from which linear's exchange among more than
// kLinearInFlight processes is paced (0: every block), from the constants
// above; the policy's explanations ask it too.
std::int64_t linear_paced_from_block_bytes(std::int64_t ranks, int max_ppn);

// Node pairs: (1) intra-node exchange leaving local rank x with everything
// its node sends to the nodes x carries (those d with d % ppn == x), and its
// node's blocks for itself; (2) one message per pair of nodes and direction,
// between the local ranks that carry the pair; (3) intra-node distribution.
// SA's aggregation and RD's distribution around an inter-node step of
// ceil((nodes - 1) / ppn) messages per rank instead of nodes - 1: where
// per-message costs dominate (tiny blocks, many nodes), that is what counts.
// Not in-place safe.
Schedule build_node_pairs_schedule(const topo::Layout& layout, int rank, bool two_hops);

// Messages of node pairs' inter-node step in flight per rank and direction.
// Up to this many partners every message is posted at once, as the scale
// model timed them (docs/scale/tiny.md: at 64 x 4, 48 x 2 and 96 x 4 a
// window of 8 took 1.87 / 2.37 / 2.52 us at 1 B against 1.45 / 1.53 / 1.67
// all at once); beyond, so many nodes per rank are paced rather than put on
// the NIC and into receivers' queues at once.
inline constexpr int kNodePairsInFlight = 24;

// Node pairs' intra-node steps take two hops for blocks of at most
// kNodePairsTwoHopsMaxBlockBytes where the largest node holds at least
// kNodePairsTwoHopsMinPpn processes. Scale model, onload platform, node pairs
// in one hop against two (`bench/sim/simrun.py ib-onload NxP alltoall
// shim-node-pairs SIZES`, 2026-12-01): 64 x 8 lost at every block (1.87 /
// 3.04 / 7.75 us at 1 / 4 / 16 B against 1.93 / 3.27 / 8.64); 32 x 12 gained
// up to 4 B (2.21 / 3.47 / 8.51 against 1.82 / 3.16 / 8.55); with 16 per
// node two hops took 1.75 / 2.13 / 2.87 / 4.36 / 7.35 us at 1-16 B at 16 x 16
// (one hop 2.45 / 2.82 / 3.53 / 4.97 / 7.84), 2.16 / 2.91 / 4.41 / 7.43 /
// 13.46 at 32 x 16 (2.86 / 3.58 / 5.03 / 7.92 / 13.71) and 2.98 / 4.50 /
// 7.55 / 13.65 / 25.84 at 64 x 16 (3.64 / 5.10 / 8.02 / 13.88 / 25.61). From
// 64 B they lost at every layout timed: 2 x 16, 4 x 16, 8 x 16 at 64 B 6.53
// / 9.61 / 15.45 us against 6.39 / 9.22 / 14.97, at 256 B 21.3 / 36.8 /
// 61.2 against 13.8 / 25.0 / 47.9; 64 x 16 at 64 B 118.9 against 100.2.
// And where a rank sends more than kNodePairsTwoHopsMaxRankBytes in all
// (ranks x block) two hops lost at 16 B too: 64 x 16 (16 KiB) 25.84 against
// 25.61 us, 128 x 16 (32 KiB) 55.71 against 49.42; up to 8 KiB they won (64
// x 16 at 8 B, 32 x 16 at 16 B) or tied (32 x 12 at 16 B, 6 KiB).
inline constexpr int kNodePairsTwoHopsMinPpn = 12;
inline constexpr std::int64_t kNodePairsTwoHopsMaxBlockBytes = 16;
inline constexpr std::int64_t kNodePairsTwoHopsMaxRankBytes = 8 * 1024;
// Whether node pairs take two hops inside nodes for `ranks` processes, at
// most `max_ppn` per node, exchanging blocks of `block_bytes`.
bool node_pairs_take_two_hops(int max_ppn, std::int64_t ranks, std::int64_t block_bytes);

// The schedule an algorithm runs for blocks of `block_bytes`: node pairs
// has two (its intra-node steps in one hop or in two), the others one.
struct ScheduleKind {
  AlltoallAlgorithm algorithm = AlltoallAlgorithm::native;
  bool two_hops = false;
  friend bool operator==(const ScheduleKind&, const ScheduleKind&) = default;
};
ScheduleKind schedule_kind(AlltoallAlgorithm algorithm, const topo::Layout& layout, std::int64_t block_bytes);

// Messages a rank of a full row sends to other local ranks over both hops
// of the two-hop exchange on a node of `ppn`: (width - 1) + (rows - 1).
int two_hop_messages(int ppn);

// Dispatches to the builders above; native has no schedule.
Schedule build_alltoall_schedule(ScheduleKind kind, const topo::Layout& layout, int rank);
// The algorithm's one-hop schedule.
Schedule build_alltoall_schedule(AlltoallAlgorithm algorithm, const topo::Layout& layout, int rank);

// The ranks of the whole layout whose blocks local rank `local` of `node`
// handles on behalf of its node (those with local rank y, y % ppn(node) ==
// local), in node-major order. On uniform layouts: the rail of `local`.
std::vector<int> ranks_proxied_by(const topo::Layout& layout, int node, int local);

// The rank on `node` that handles blocks for or from `rank` of another node.
int proxy_on_node(const topo::Layout& layout, int node, int rank);

// An exchange among the ranks of `rank`'s node: at step j it sends to local
// rank local + j the runs sent_to(that local rank) and receives from local -
// j the runs received_from(that local rank), so no local rank is everyone's
// first peer. A transfer without runs is left out, on both sides alike.
Phase intra_node_exchange(const topo::Layout& layout, int rank, const std::function<std::vector<Run>(int)>& sent_to,
                          const std::function<std::vector<Run>(int)>& received_from);

// What an intra-node exchange moves: the calling rank's runs to and from
// each local rank, and how many blocks any local rank sends any other (the
// same count on both sides; a rank that relays blocks needs it).
struct IntraNodeTransfers {
  std::function<std::vector<Run>(int)> sent_to;
  std::function<std::vector<Run>(int)> received_from;
  std::function<std::int64_t(int, int)> blocks;
};

// The same exchange in two hops through a grid of the node's local ranks
// (rows of ceil(sqrt(ppn))): first within a row, then within a column, so a
// rank sends about 2 (sqrt(ppn) - 1) messages instead of ppn - 1, each
// block travelling twice. Where a message's fixed costs outweigh its bytes
// (tiny blocks, many processes per node), that is the cheaper exchange.
// A hub keeps what it relays in stage from `relay_base`, relay_blocks long.
struct TwoHopExchange {
  Phase first;
  Phase second;
  std::int64_t relay_blocks = 0;
};
TwoHopExchange intra_node_exchange_two_hops(const topo::Layout& layout, int rank, const IntraNodeTransfers& transfers,
                                            std::int64_t relay_base);

// On a uniform, non-consecutive layout, a local copy between the user's
// buffer `user` (indexed by rank) and `stage` from `stage_base` on, where
// every node's blocks lie together in node order: into stage when
// `to_stage`, out of it otherwise.
Phase regroup_by_node(const topo::Layout& layout, int rank, Buffer user, std::int64_t stage_base, bool to_stage);

}  // namespace shim::coll
