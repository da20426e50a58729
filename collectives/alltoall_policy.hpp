// Automatic alltoall selection (SHIM_ALLTOALL=auto) as a rule table: the
// first matching rule decides and explains itself (SHIM_VERBOSE, shim-info).
#pragma once

#include <cstdint>
#include <string>

#include "collectives/alltoall_algorithm.hpp"
#include "collectives/alltoall_schedules.hpp"
#include "collectives/schedule.hpp"
#include "collectives/scratch_buffer.hpp"
#include "collectives/send_cost.hpp"
#include "common/rule_table.hpp"
#include "topology/nic_class.hpp"

namespace shim::coll {

struct AlltoallThresholds {
  // SA while one aggregated inter-node message (ppn x block) stays this
  // small. 4 KiB is where SA stops beating MPICH's alltoall in the scale
  // model (docs/scale/small.md: onload platform, 4x4, 8x4 and 8x8 lose from
  // 8 KiB, up to 1.55x; 64x16 ties at 8 KiB in docs/scale/headline.md).
  // Kumar, Mamidala and Panda ("Scaling Alltoall Collective on Multi-core
  // Systems") measured SA ahead up to 16 KiB (2 KiB blocks x 8) on 64 x 8
  // InfiniPath; today's faster per-core copies move the crossover down.
  std::int64_t sa_max_bytes = 4 * 1024;
  // On offload NICs beyond the partners node pairs are weighed for
  // (kNodePairsMaxPartners), leader-based while its message between
  // leaders (ppn^2 x block) stays this small; beyond it the copies dominate.
  std::int64_t leader_max_bytes = 8 * 1024;
  // The rail step of SA, RD and leader-based (an alltoall among equal local
  // ranks, or among leaders) posts its messages at once, point to point,
  // while each is at most this big. MPICH's own alltoall would run Bruck
  // there below 256 B: log2(nodes) rounds that forward most bytes several
  // times, where aggregation has already cut the message count ppn-fold.
  // Beyond it MPICH paces large messages pairwise.
  std::int64_t rail_point_to_point_max_bytes = 32 * 1024;
};

struct AlltoallFacts {
  std::int64_t block_bytes = 0;  // bytes per block (count x type size)
  int nodes = 1;
  int ppn = 1;  // largest number of processes on one node
  topo::NicClass nic = topo::NicClass::onload;
  AlltoallThresholds thresholds;
  int send_cost_ns = kReferenceSendCostNs;  // per small message to another node (SHIM_SEND_COST_NS, the profile)
  int min_ppn = 0;                          // fewest processes on one node; 0: as many as ppn (a regular layout)
  // What one node's link carries to other nodes, bytes/s
  // (SHIM_NODE_BANDWIDTH, the profile); 0: unknown.
  std::int64_t node_bandwidth = 0;
  // MPI_IN_PLACE: MPICH then exchanges by p - 1 pairwise sendrecv_replace
  // steps, never Bruck, so no rule that counts on MPI's Bruck applies.
  bool in_place = false;
};

using AlltoallRule = Rule<AlltoallFacts, AlltoallAlgorithm>;
using AlltoallPolicy = RuleTable<AlltoallFacts, AlltoallAlgorithm>;

const AlltoallPolicy& alltoall_policy();

// The largest message of `algorithm`'s rail step anywhere in the layout:
// ppn x block for SA and RD, ppn^2 x block between leaders (0 for native
// and linear, which have no rail step).
// It depends only on facts every rank shares, so all take the same step.
std::int64_t largest_rail_message_bytes(AlltoallAlgorithm algorithm, const AlltoallFacts& facts);

// Bruck's algorithm on the rail (MPI_Alltoall: MPICH's choice for messages
// under 256 B) against the point-to-point window, as the scale model timed
// them (docs/scale/tiny.md, onload platform, 48-128 nodes of 2-16 ranks,
// 1-32 B blocks): a wave of the window took about 0.82 us; a Bruck round
// 0.68 us plus 0.11 us per KiB that a node sends in it (a round carries
// half of every rail's blocks: ceil(nodes / 2) x ppn^2 x block per node).
// Where the window needs at least as many waves, ceil((nodes - 1) /
// kRailWindow), as Bruck needs rounds, ceil(log2(nodes)) (from 42 nodes),
// Bruck is taken while its rounds cost less: while a round carries little
// (up to about 1 KiB at 48 nodes, 4 KiB at 64, 11 KiB at 128). A wave sends
// kRailWindow messages per rank and a round one, each costing the extra send
// cost (kReferenceSendCostNs) on top.
struct RailStepCosts {
  double wave_us = 0.82;
  double bruck_round_us = 0.68;
  double bruck_us_per_kib = 0.11;
};
inline constexpr RailStepCosts kRailStepCosts{};

// Where SA's rail step would be Bruck, MPI's own Bruck over all ranks wins
// once each rank holds more than this (nodes x ppn x block): its first
// log2(ppn) rounds stay inside the node, while SA's two intra-node
// exchanges move every byte twice. From the scale model (docs/scale/tiny.md,
// onload platform): SA against MPICH's Bruck 6.97 / 6.67 us at 96 x 2 and
// 16 B (3 KiB per rank), 11.4 / 9.5 at 128 x 2 and 32 B (8 KiB), 10.5 / 9.9
// at 128 x 4 and 8 B (4 KiB); SA ahead up to 1-2 KiB (64 x 4 at 4 B, 5.3 /
// 5.7; 128 x 2 at 4 B, 5.5 / 5.7).
inline constexpr std::int64_t kFlatBruckRankBytes = 2048;

// Where a message costs its sender at least kCostlySendNs (more than a
// whole Bruck round on the reference platform, 0.68 us), the messages each
// rank sends on the critical path decide: MPI's alltoall runs Bruck over all
// ranks for blocks up to kNativeBruckMaxBlockBytes from kNativeBruckMinRanks
// ranks, ceil(log2(ranks)) messages (MPICH 4.0.2's built-in selection takes
// Bruck up to 256 B, SMPI's copy of it below 256 B: 255 B is where both
// do; in place, MPICH exchanges pairwise instead, AlltoallFacts::in_place), and
// is taken where that is fewer than the best of SA's rail step (Bruck rounds
// between nodes, or one message per other node) and node pairs' partners.
// From the scale model (docs/scale/networks.md, eth-25g, 6.4 us per
// message): at 63 x 8 + 1 x 3 and 1 / 16 B MPICH's 9 rounds took 68.5 /
// 122.9 us where node pairs' 21 partners took 135.4 / 161.7; at 64 x 4 and
// 1 B SA's 6 Bruck rounds took 42.2 against MPICH's 8, 54.7.
inline constexpr int kCostlySendNs = 1000;
inline constexpr std::int64_t kNativeBruckMaxBlockBytes = 255;
inline constexpr int kNativeBruckMinRanks = 8;

// Beyond SHIM_ALLTOALL_SA_MAX, where messages are costly (kCostlySendNs)
// and the node's link bandwidth is known, SA is still taken while ppn x
// block is at most kCostlySendsAggregateSpan x what the link carries during
// one send cost. Why: MPI's exchange sends (nodes - 1) x ppn messages per
// rank to other nodes, so its ranks spend (nodes - 1) x ppn x send cost
// sending, while the node's link needs (nodes - 1) x ppn^2 x block /
// bandwidth for the bytes: the sending outlasts the link while ppn x block <
// send cost x bandwidth, and SA's ppn-fold fewer messages leave the link's
// time and the copies. The sending overlaps the link only in part, so the
// crossover lies beyond: from the scale model (eth-25g: 6.4 us per message,
// 2.99 GB/s, 19090 B per send cost; `bench/sim/simrun.py eth-25g NxP alltoall
// shim-sa,mpich SIZE`), SA against MPICH's exchange at ppn x block / 19090 B
// = 0.86: 0.62x at 8 x 16 (662.8 / 1065.3 us), 0.64x at 8 x 8, 0.65-0.67x
// at 16 x 8, 16 x 16 and 32 x 8, 0.92-0.93x at 16 x 4 and 32 x 4; at 1.72:
// 0.87x at 8 x 16 and 16 x 16, 0.95-0.98x at 8 x 4, 16 x 4, 16 x 8 and
// 32 x 4, 1.02x at 8 x 8; at 2.57: 0.95x at 8 x 16, 1.02-1.07x at 16 x 8,
// 8 x 8 and 32 x 4; at 3.43 (8 x 16, 4 KiB) 1.02x. Node pairs, weighed
// first, take most of these (within 5% of SA where they do).
inline constexpr int kCostlySendsAggregateSpan = 2;
// What the node's link carries during one send cost, send cost x
// bandwidth in bytes (at most 2^60: absurd figures stay below any
// saturated size); 0 where the bandwidth is unknown.
std::int64_t link_bytes_per_send(const AlltoallFacts& facts);

// On an offload NIC, where concurrent senders add no bandwidth, SA is still
// taken while ppn x block is at most kOffloadAggregateSpan x
// SHIM_ALLTOALL_SA_MAX: its ppn-fold fewer messages keep their edge over
// MPI's exchange there. From the scale model (`bench/sim/simrun.py
// ib-offload NxP alltoall shim-sa|mpich SIZE`, 2026-11-30), SA against
// MPICH's selection at 8-16 KiB aggregated: 0.78x at 128 x 2 (8 KiB
// blocks), 0.88x at 64 x 3, 0.90x at 64 x 4 and 48 x 4, 0.91x at 33 x 4,
// 0.94-0.95x at 32 x 8 and 24 x 8, 0.97x at 16 x 16 and 12 x 16 (1 KiB).
// Beyond, it no longer pays at every layout: at 48-64 KiB aggregated
// 1.36x at 64 x 3 (16 KiB blocks) and 1.06x at 12 x 16 (4 KiB), though
// 0.64x at 128 x 2 and 0.92x at 48 x 4. On the onload platform SA only ties there
// (32 x 8 at 1 / 4 KiB: 0.98x / 1.00x; 64 x 4 at 4 KiB 0.98x, at 16 KiB
// 1.10x), so the rule is the offload NIC's.
inline constexpr int kOffloadAggregateSpan = 4;

// Node pairs against SA, as the scale model timed them (docs/scale/tiny.md,
// onload platform, 16-96 nodes of 2-16 ranks, 1-32 B blocks): node pairs
// replace SA's rail step (kRailStepCosts: the window's waves or Bruck's
// rounds, whichever SA would run) by one message per partner node,
// ceil((nodes - 1) / ppn) of them, and a second intra-node exchange. Fitted
// over the 66 points (least squares), what they add costs about 0.96 us +
// 0.043 us per partner + 0.048 us per process per node + 0.022 us per KiB a
// node receives from other nodes (nodes x ppn^2 x block); taken where SA's
// rail step costs more, node pairs are within 10% of the better of the two
// at all 66. E.g. 64 x 16 at 1 / 4 / 16 B: 3.6 / 8.0 / 25.6 us against SA's
// 7.7 / 10.7 / 25.3; 48 x 2 at 1 B 1.5 against 4.1; 16 x 16 at 4 B 3.5
// against 3.4 (intra-node steps in one hop; two hops below). Each partner
// adds the extra send cost (kReferenceSendCostNs). Beyond kNodePairsInFlight
// partners (alltoall_schedules.hpp) the pairs step is paced; the same costs
// still pick the faster of the two there (see kNodePairsMaxPartners).
//
// Where their intra-node steps take two hops (node_pairs_take_two_hops in
// alltoall_schedules.hpp): fewer messages, each block copied twice. Against
// one hop that saved about 0.040 us per message a rank no longer sends in
// the two steps, less 0.061 us per KiB the rank sends in all (nodes x ppn x
// block); fitted (least squares) over 18 points at 16 x 16, 32 x 16, 64 x 16
// (1-16 B) and 32 x 12 (1, 4, 16 B), within 0.03 us at 16 per node and 0.14
// us at 12.
//
// Where SA's rail step is a single wave (up to kRailWindow + 1 nodes) node
// pairs cost less than that fit, made from 16 nodes, says: over 230 points
// at 2-9 nodes of 2-32 per node and 1-16 B (the few-nodes sweep and the
// tiny sweep's one-wave layouts) its residual has a median of -0.35 us.
// Taking 0.30 off picks node pairs at 1-4 B from 12 per node where they
// lead (8 x 16 at 1 B: 1.6 us against SA's 1.7; 2 x 32 1.9 against 2.3)
// and SA at 2-10 per node but 2 x 2; beyond 10% of the better of the two
// only at 8 x 24 and 2 B (SA 2.7 against 2.4) and 2 x 2 (node pairs 0.93
// against 0.82, where auto runs linear). 0.35 would lose 3 x 12 at 4 B
// (1.11x SA).
struct NodePairsCosts {
  double extra_us = 0.96;
  double us_per_partner = 0.043;
  double us_per_ppn = 0.048;
  double us_per_node_kib = 0.022;
  double two_hops_us_per_message_saved = 0.040;
  double two_hops_us_per_rank_kib = 0.061;
  double single_wave_us = -0.30;
};
inline constexpr NodePairsCosts kNodePairsCosts{};

// Node pairs are weighed against SA up to this many partners per rank,
// ceil((nodes - 1) / ppn): as far as the scale model timed the paced step
// (docs/scale/tiny.md, onload platform, 1-32 B). 128 x 4 (32 partners) at 1
// / 4 / 16 / 32 B: 2.0 / 2.3 / 4.7 / 8.3 us against SA's 5.5 / 7.6 / 14.1 /
// 15.6; 96 x 2 (48) 2.6 / 2.7 / 3.1 / 3.7 against 4.8 / 5.2 / 7.0 / 9.3;
// 128 x 2 (64) 3.5 / 3.6 / 4.1 / 4.8 against 4.9 / 5.5 / 8.0 / 11.4; the
// costs above pick node pairs at all 18 points. Beyond 64 nothing was timed.
inline constexpr int kNodePairsMaxPartners = 64;

// Paced (beyond kNodePairsInFlight partners), node pairs are weighed for
// blocks up to this size: the full sweep's 128 x 2 (64 partners) had them
// ahead of SA at 1-64 B (64 B: 8.4 us against 15.6) and behind from 256 B
// (32.1 / 49.1 us at 256 / 512 B against 29.9 / 37.5), where the costs above
// still put them ahead.
inline constexpr std::int64_t kNodePairsPacedMaxBlockBytes = 64;

// Linear (every block straight to its rank, all at once) while the
// communicator has at most this many processes (nodes x ppn) and blocks are
// at least kLinearMinBlockBytes. From the scale model (docs/scale/README.md,
// 16-64 ranks, onload platform): from 128 B blocks linear was within 2% of
// SA or faster at 4x4, 8x4-rr, 8x8 and 4x16, and from 512 B faster than
// MPICH's alltoall too; at 64 B it won at 4 processes per node and lost 5-7%
// at 8-16 (from 33 processes: kLinearManyRanksMinBlockBytes); at 16-32 B
// SA won or tied. The ranks limit is where the sweep stops, not a measured
// crossover. Where messages cost more than on that
// platform, linear's extra send cost, one per block to another node, must
// stay within one wave of the window (kRailStepCosts): on TCP (eth-25g, 8 x 4
// at 256 B) linear took 201 us where node pairs took 13.6.
inline constexpr int kLinearMaxRanks = 64;
inline constexpr std::int64_t kLinearMinBlockBytes = 64;

// Beyond kLinearSmallBlockMaxRanks processes linear starts at
// kLinearManyRanksMinBlockBytes: at 64 B aggregation's fewer messages win
// there. Scale model (`bench/sim/simrun.py ib-onload LAYOUT alltoall
// shim-linear|shim-sa|shim-node-pairs 64,128`; 16 x 4 from the full sweep's
// 16-node part), linear against the best of SA and node pairs at 64 / 128
// B: 16 x 4 3.08 / 3.84 us against 2.74 / 4.11, 8 x 8 4.01 / 6.45 against
// 3.78 / 6.44, 4 x 16 6.23 / 10.37 against 5.87 / 10.27, 32 x 2 3.09 / 3.28
// against 2.19 / 3.40, 24 x 2 2.32 / 2.46 against 1.87 / 2.77, 6 x 8 3.08
// against 3.01 at 64 B, 12 x 4 and 3 x 16 a tie; at 32 processes linear
// still ties or leads at 64 B (16 x 2 1.54 against 1.55, 8 x 4 1.54
// against 1.64, 4 x 8 2.14 against 2.24).
inline constexpr int kLinearSmallBlockMaxRanks = 32;
inline constexpr std::int64_t kLinearManyRanksMinBlockBytes = 128;

// Up to this many processes linear is taken for blocks of any size: SA's
// two intra-node exchanges cost more than the few extra messages. Scale
// model (onload, `bench/sim/simrun.py ib-onload LAYOUT alltoall
// shim-linear|shim-sa 1,4,16,64`), linear against SA at 1 / 16 B: 2 x 2 0.70
// / 0.70 us against 0.82 / 0.83, 2 x 4 0.80 / 0.80 against 0.87 / 0.90, 3 x 3
// 0.82 / 0.83 against 0.87 / 0.89, 2 x 5 and 5 x 2 0.85 / 0.86 against 0.89-
// 0.91 / 0.91-0.95, 2 x 6 and 6 x 2 0.90 / 0.91 against 0.92-0.96 / 0.94-1.02,
// 3 x 4 and 4 x 3 0.899 / 0.906 against 0.895-0.897 / 0.92-0.93; at 16
// processes SA led at 1 B (4 x 4 0.92 against 1.00, 8 x 2 0.97). On two
// nodes, where SA's rail step is one message per rank, linear led up to
// kLinearTwoNodesAnyBlockMaxRanks: 2 x 8 1.00 / 1.01 against 1.05 / 1.15,
// 2 x 16 1.46 / 1.59 against 1.45 / 1.81 (4 B 1.47 against 1.52).
inline constexpr int kLinearAnyBlockMaxRanks = 12;
inline constexpr int kLinearTwoNodesAnyBlockMaxRanks = 32;

// From kLinearAnySendCostMinBlockBytes linear is taken up to kLinearMaxRanks
// processes whatever a message costs its sender: every other choice sends
// as many messages there (SA and node pairs stop aggregating soon after),
// and on TCP the cost of a send falls once its block is a few KiB
// (docs/scale/measurements.json, two emulated hosts: 7.6 us at 8 B, 9.0 at
// 512 B, 2.1 at 4 KiB). Scale model (`bench/sim/simrun.py eth-25g|eth-1g
// LAYOUT alltoall shim-linear|shim-auto|mpich|ompi 2048,4096,16384,65536`),
// eth-25g, linear against the earlier choice at 4 KiB / 64 KiB: 2 x 8 95.2 /
// 1481.4 us against 141.6 (node pairs) / 1543.9 (MPICH's exchange), 3 x 5
// 74.7 against 100.0 (at 64 KiB SMPI's MPICH selection aborts on 15
// processes; Open MPI's took linear's 1158.9), 4 x 4 71.8 / 1112.8 against 92.2 /
// 1202.7, 4 x 8 280.1 / 4430.4 against 333.6 / 4603.4, 8 x 4 164.3 / 2587.3
// against 192.2 / 2787.7, 4 x 16 1112.9 / 17703.5 against 1120.5 /
// 18053.4 (Open MPI's selection, its linear exchange, ties linear
// everywhere); eth-1g: linear ahead by up to 2% from 4 KiB. At 2 KiB
// aggregation still wins where sends cost this much (8 x 4 98.6 against
// 228.8, 4 x 4 48.7 against 99.8). One process per node likewise
// (one-per-node-linear), at 4 / 64 KiB: 4 x 1 7.8 / 76.0 against MPICH's
// 7.9 / 89.8, 8 x 1 16.0 / 168.2 against 17.8 / 209.6, 16 x 1 32.4 / 352.5
// against 37.5 / 449.2.
inline constexpr std::int64_t kLinearAnySendCostMinBlockBytes = 4096;

// One process per node: from kOnePerNodeLinearMinNodes nodes up to
// kLinearMaxRanks, linear at every block size. MPI's Bruck (MPICH's choice
// for blocks under 256 B from 8 processes) pays log2(nodes) latencies where
// linear pays one, and MPICH's pairwise exchange for large blocks one per
// step. Scale model, onload (`bench/sim/simrun.py ib-onload Nx1 alltoall
// shim-linear|mpich|ompi 1,64,1024,16384,65536,262144,1048576`), linear
// against MPICH's selection at 1 B / 1 KiB / 64 KiB / 1 MiB: 4 x 1 0.70 /
// 0.96 / 19.3 / 298.8 us against 0.72 / 1.02 / 24.8 / 367.8; 8 x 1 0.80 /
// 1.33 / 41.3 / 651.1 against 1.94 / 2.07 / 57.7 / 858.1; 16 x 1 1.00 / 2.07 /
// 85.3 / 1355.7 against 2.59 / 4.18 / 123.7 / 1838.9; 32 x 1 and 64 x 1
// 0.39-0.83x at every size; at 16 KiB 1.02x at 3 x 1 and 4 x 1 (9.77 against
// 9.60). Offload, 4-32 x 1: 0.41-0.98x. At 3 x 1 MPICH's
// selection exchanges as linear does below 64 KiB (1 B 0.67 against 0.70),
// and its pairwise exchange beyond is SMPI's ring, which linear equals
// (1 MiB 210.7 us). At 2 x 1 both send one message each way, and linear's
// 16 KiB took 5.2 us against 4.8: native.
inline constexpr int kOnePerNodeLinearMinNodes = 3;

// Beyond kLinearMaxRanks nodes, up to kManyRanksLinearMaxRanks, one process per
// node takes linear for blocks from this size to kManyRanksLinearMaxBlockBytes
// (all at once up to 4 KiB, 16 in flight beyond: alltoall_schedules.hpp). At
// 128 x 1 (full sweep, `bench/sim/sweep full --layouts 128x1`) linear took
// 6.17 / 7.32 / 8.85 / 12.46 / 46.81 / 290.5 / 702.1 us at 64 B / 256 B / 512
// B / 1 KiB / 4 KiB / 16 KiB / 64 KiB against the best selection's 8.36 /
// 25.0 / 27.1 (MPICH's) / 12.46 / 46.81 / 290.4 / 702.1 (Open MPI's, its basic
// linear, then its paced exchange; MPICH's took 1047.7 at 64 KiB) and SA's
// 9.7 / 20.4 / 20.8 / 30.5 / 99.2 / 437.3 / 1634.8; at 1-16 B MPICH's Bruck
// led (4.6-5.5 against 5.85-5.92). At 96 x 1 (16 in flight at every size
// then; `bench/sim/simrun.py ib-onload 96x1 alltoall shim-linear|mpich|impi
// 256,4096,65536`) 6.80 / 43.45 / 525.8 against 18.7 / 54.2 / 591.1.
inline constexpr std::int64_t kOnePerNodeManyNodesLinearMinBlockBytes = 64;

// In place, linear first copies the whole buffer (ranks x block) and sends
// from the copy, where MPICH's pairwise in-place exchange needs one block:
// few-ranks-linear and one-per-node-linear take in-place calls only while
// that copy fits the scratch memory a communicator keeps between calls.
inline constexpr std::int64_t kLinearInPlaceCopyMaxBytes = ScratchBuffer::kRetainedBytes;

// Beyond kLinearMaxRanks processes linear (all at once below
// kLinearPacedFromBlockBytes, kLinearInFlight messages in flight from there:
// alltoall_schedules.hpp) is taken for blocks from
// kManyRanksLinearMinBlockBytes to kManyRanksLinearMaxBlockBytes up to
// kManyRanksLinearMaxRanks processes, as far as it was timed (in place, linear first copies the whole send buffer,
// so unbounded blocks would cost unbounded memory), where its extra send cost
// stays within one wave, as for few-ranks-linear. From the scale model
// (docs/scale/blocks.md, onload platform), at 1 / 4 / 16 / 64 KiB against
// the best other option: 32 x 4 46.9 / 174.0 / 695.9 / 2736.0 us against
// 63.8 (SA) / 199.5 / 784.8 / 3079.5 (MPICH's selection); 16 x 8 84.7 /
// 332.9 / 1336.5 / 5291.0 against 104.0 / 357.6 / 1419.2 / 5634.5; 15 x 8 +
// 1 x 3 81.3 / 319.0 / 1279.4 against 103.5 / 349.5 / 1459.6; at 64 KiB
// ahead of MVAPICH2's selection (scatter-destination) too. Offload, 8 x 16:
// 158.1 / 620.9 / 2490.4 / 9868.1 against 169.5 / 625.0 / 2476.7 / 9890.3.
// At 256 B on the onload platform linear took 0.74-1.05x the best other
// option (64 x 2 10.7 us against SA's 14.3, 16 x 8 round-robin 24.2 against
// node pairs' 28.4, 16 x 8 24.8 against 23.7; also 8 x 16, 24 x 4, 32 x 4,
// 42 x 3, 15 x 8 + 1 x 3); on the offload platform, where concurrent
// senders add no bandwidth and SA's fewer messages count, paced linear took
// 1.08-1.18x SA's time (16 x 8 27.3 against 23.7, 32 x 4 17.7 against 15.1,
// 8 x 16 45.3 against 42.4), but all at once (alltoall_schedules.hpp) 23.2
// / 12.5 / 42.3, 0.82-1.00x; at 512 B 0.77-1.00x on both
// (`bench/sim/simrun.py PLATFORM LAYOUT alltoall
// shim-linear|shim-sa|shim-node-pairs 256,512`). At 256 processes only 16
// KiB was simulated (0.94x / 0.97x MPICH at 32 x 8 / 16 x 16). On 25 GbE
// (6.4 us per message, outside the send-cost limit) linear lost at 4 KiB:
// 894.9 us at 32 x 4 against MPICH's 783.8.
inline constexpr std::int64_t kManyRanksLinearMinBlockBytes = 256;
inline constexpr std::int64_t kManyRanksLinearMaxBlockBytes = 64 * 1024;
inline constexpr int kManyRanksLinearMaxRanks = 128;

// Point to point unless the largest message is over
// SHIM_ALLTOALL_RAIL_P2P_MAX, or Bruck's rounds cost less than the
// point-to-point window's waves (kRailStepCosts).
RailStep rail_step_for(AlltoallAlgorithm algorithm, const AlltoallFacts& facts);
std::string explain_rail_step(AlltoallAlgorithm algorithm, const AlltoallFacts& facts);

// True when the table picks native for every block size: one node, or two
// nodes of one process each. Every sub-communicator of such a layout is one
// too.
bool alltoall_native_for_every_block(int nodes, int ppn);

}  // namespace shim::coll
