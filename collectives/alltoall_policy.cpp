#include "collectives/alltoall_policy.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "collectives/alltoall_schedules.hpp"
#include "common/format.hpp"

namespace shim::coll {

namespace {

// x * y, or int64 max when that would overflow, so absurd sizes never match
// a "small enough" rule.
std::int64_t saturating_product(std::int64_t x, std::int64_t y) {
  if (x != 0 && y > std::numeric_limits<std::int64_t>::max() / x) return std::numeric_limits<std::int64_t>::max();
  return x * y;
}

std::int64_t aggregated_bytes(const AlltoallFacts& f) { return saturating_product(f.ppn, f.block_bytes); }
std::int64_t leader_bytes(const AlltoallFacts& f) {
  return saturating_product(saturating_product(f.ppn, f.ppn), f.block_bytes);
}

int bruck_rounds(std::int64_t ranks) {
  int rounds = 0;
  while (rounds < 62 && (std::int64_t{1} << rounds) < ranks) ++rounds;
  return rounds;
}

int window_waves(int ranks) { return (ranks - 1 + kRailWindow - 1) / kRailWindow; }

// What one node sends in each Bruck round: half of its rails' blocks. In
// floating point, so that no layout wraps it into "small".
double bruck_round_bytes(const AlltoallFacts& facts) {
  const double ppn = facts.ppn;
  return static_cast<double>((facts.nodes + 1) / 2) * ppn * ppn * static_cast<double>(facts.block_bytes);
}

// What each message sent to another node costs beyond the platform the
// costs were fitted on (never less: those costs hold at least).
double extra_send_us(const AlltoallFacts& facts) {
  return std::max(0, facts.send_cost_ns - kReferenceSendCostNs) / 1000.0;
}

double bruck_us(const AlltoallFacts& facts) {
  return bruck_rounds(facts.nodes) * (kRailStepCosts.bruck_round_us + extra_send_us(facts) +
                                      kRailStepCosts.bruck_us_per_kib * bruck_round_bytes(facts) / 1024);
}

double window_us(const AlltoallFacts& facts) {
  return window_waves(facts.nodes) * (kRailStepCosts.wave_us + kRailWindow * extra_send_us(facts));
}

// Names the send cost where it differs from the reference platform's.
std::string send_cost_note(const AlltoallFacts& facts) {
  return facts.send_cost_ns == kReferenceSendCostNs
             ? ""
             : ", " + std::to_string(facts.send_cost_ns) + " ns per message sent to another node";
}

// Linear sends each of a rank's blocks for other nodes as its own message.
double linear_extra_send_us(const AlltoallFacts& facts) {
  return static_cast<double>(facts.nodes - 1) * facts.ppn * extra_send_us(facts);
}

// Weighed only where the window needs at least as many waves as Bruck
// needs rounds (from 42 nodes), where the costs were measured; at 2 nodes
// both are one exchange.
bool costs_weighed(int nodes) { return nodes > 2 && window_waves(nodes) >= bruck_rounds(nodes); }

bool bruck_beats_window(const AlltoallFacts& facts) {
  return costs_weighed(facts.nodes) && bruck_us(facts) < window_us(facts);
}

// Estimates beyond 1e15 us (absurd sizes) print as that, not as an
// overflowed integer.
std::string one_decimal(double value) {
  const long tenths = std::lround(std::min(value, 1e15) * 10);
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10);
}

// What SA's rail step costs, run as rail_step_for would run it.
bool uneven(const AlltoallFacts& facts) { return facts.min_ppn > 0 && facts.min_ppn < facts.ppn; }

// On uneven nodes SA's inter-node step runs point to point (one message per
// remote rank), never Bruck.
bool sa_rail_runs_bruck(const AlltoallFacts& facts) { return bruck_beats_window(facts) && !uneven(facts); }

double sa_rail_us(const AlltoallFacts& facts) { return sa_rail_runs_bruck(facts) ? bruck_us(facts) : window_us(facts); }

// The smallest node carries the most partners: its ranks share all its pairs.
int node_pair_partners(const AlltoallFacts& facts) {
  const int carriers = uneven(facts) ? facts.min_ppn : facts.ppn;
  return (facts.nodes - 1 + carriers - 1) / carriers;
}

// As coll::schedule_kind decides for node pairs (with nodes x ppn ranks).
bool two_hops_inside_nodes(const AlltoallFacts& facts) {
  return node_pairs_take_two_hops(facts.ppn, saturating_product(facts.nodes, facts.ppn), facts.block_bytes);
}

// What two hops save node pairs' intra-node steps (NodePairsCosts).
double node_pairs_two_hops_saving_us(const AlltoallFacts& facts) {
  if (!two_hops_inside_nodes(facts)) return 0.0;
  const int saved_messages = 2 * (facts.ppn - 1 - two_hop_messages(facts.ppn));
  const double rank_kib = facts.nodes * static_cast<double>(facts.ppn) * static_cast<double>(facts.block_bytes) / 1024;
  return kNodePairsCosts.two_hops_us_per_message_saved * saved_messages -
         kNodePairsCosts.two_hops_us_per_rank_kib * rank_kib;
}

// Up to kRailWindow + 1 nodes (NodePairsCosts::single_wave_us).
bool sa_rail_one_wave(const AlltoallFacts& facts) { return window_waves(facts.nodes) <= 1; }

double node_pairs_extra_us(const AlltoallFacts& facts) {
  const double ppn = facts.ppn;
  const double node_kib = facts.nodes * ppn * ppn * static_cast<double>(facts.block_bytes) / 1024;
  return kNodePairsCosts.extra_us +
         (kNodePairsCosts.us_per_partner + extra_send_us(facts)) * node_pair_partners(facts) +
         kNodePairsCosts.us_per_ppn * ppn + kNodePairsCosts.us_per_node_kib * node_kib -
         node_pairs_two_hops_saving_us(facts) + (sa_rail_one_wave(facts) ? kNodePairsCosts.single_wave_us : 0.0);
}

// As far as the scale model timed node pairs (kNodePairsMaxPartners).
bool node_pairs_fit(const AlltoallFacts& facts) {
  return facts.nodes > 1 && facts.ppn > 1 && node_pair_partners(facts) <= kNodePairsMaxPartners;
}

bool node_pairs_beat_sa(const AlltoallFacts& facts) {
  const bool paced = node_pair_partners(facts) > kNodePairsInFlight;
  return node_pairs_fit(facts) && (!paced || facts.block_bytes <= kNodePairsPacedMaxBlockBytes) &&
         sa_rail_us(facts) > node_pairs_extra_us(facts);
}

// Messages each rank sends to other nodes on the critical path, where a
// costly send makes their number decide (kCostlySendNs). The layout's ranks
// are counted as nodes x ppn: on uneven nodes at most one round too many.
std::int64_t layout_ranks(const AlltoallFacts& facts) { return saturating_product(facts.nodes, facts.ppn); }

int native_bruck_messages(const AlltoallFacts& facts) { return bruck_rounds(layout_ranks(facts)); }

int sa_rail_messages(const AlltoallFacts& facts) {
  return sa_rail_runs_bruck(facts) ? bruck_rounds(facts.nodes) : facts.nodes - 1;
}

int fewest_shim_messages(const AlltoallFacts& facts) {
  return node_pairs_fit(facts) ? std::min(sa_rail_messages(facts), node_pair_partners(facts)) : sa_rail_messages(facts);
}

bool native_bruck_sends_fewest(const AlltoallFacts& facts) {
  return !facts.in_place && facts.send_cost_ns >= kCostlySendNs && facts.block_bytes <= kNativeBruckMaxBlockBytes &&
         layout_ranks(facts) >= kNativeBruckMinRanks && native_bruck_messages(facts) < fewest_shim_messages(facts);
}

bool offload_small(const AlltoallFacts& facts) {
  return facts.nic == topo::NicClass::offload && leader_bytes(facts) <= facts.thresholds.leader_max_bytes;
}

std::string explain_offload(const AlltoallFacts& facts) {
  return "ppn^2 x block = " + format_bytes(leader_bytes(facts)) +
         " <= " + format_bytes(facts.thresholds.leader_max_bytes) + ", " + std::to_string(node_pair_partners(facts)) +
         " partners";
}

std::int64_t costly_sends_aggregate_max(const AlltoallFacts& facts) {
  return saturating_product(kCostlySendsAggregateSpan, link_bytes_per_send(facts));
}

bool sends_outlast_link(const AlltoallFacts& facts) {
  return facts.send_cost_ns >= kCostlySendNs && facts.node_bandwidth > 0 &&
         aggregated_bytes(facts) <= costly_sends_aggregate_max(facts);
}

std::int64_t sa_max_times(const AlltoallFacts& f, std::int64_t factor) {
  return saturating_product(factor, f.thresholds.sa_max_bytes);
}

std::string explain_sa_max_times(const AlltoallFacts& f, std::int64_t factor) {
  return "ppn x block = " + format_bytes(aggregated_bytes(f)) + " <= " + format_bytes(sa_max_times(f, factor)) + ", " +
         std::to_string(f.nodes) + " nodes x " + std::to_string(f.ppn);
}

std::int64_t offload_aggregate_max(const AlltoallFacts& facts) { return sa_max_times(facts, kOffloadAggregateSpan); }

std::int64_t linear_min_block(const AlltoallFacts& facts) {
  return layout_ranks(facts) <= kLinearSmallBlockMaxRanks ? kLinearMinBlockBytes : kLinearManyRanksMinBlockBytes;
}

bool linear_takes_any_block(const AlltoallFacts& facts) {
  const std::int64_t ranks = layout_ranks(facts);
  return ranks <= kLinearAnyBlockMaxRanks || (facts.nodes == 2 && ranks <= kLinearTwoNodesAnyBlockMaxRanks);
}

// Linear's extra sends (one message per block for another node) matter
// only for blocks under kLinearAnySendCostMinBlockBytes.
bool linear_send_cost_fits(const AlltoallFacts& facts) {
  return facts.block_bytes >= kLinearAnySendCostMinBlockBytes || linear_extra_send_us(facts) <= kRailStepCosts.wave_us;
}

bool linear_copy_fits(const AlltoallFacts& facts) {
  return !facts.in_place || saturating_product(layout_ranks(facts), facts.block_bytes) <= kLinearInPlaceCopyMaxBytes;
}

// Blocks linear takes beyond kLinearMaxRanks processes: from `min_block` to
// kManyRanksLinearMaxBlockBytes, its extra send cost within one wave.
bool linear_block_fits_many_ranks(const AlltoallFacts& facts, std::int64_t min_block) {
  return facts.block_bytes >= min_block && facts.block_bytes <= kManyRanksLinearMaxBlockBytes &&
         linear_extra_send_us(facts) <= kRailStepCosts.wave_us;
}

bool many_ranks_linear_fits(const AlltoallFacts& facts) {
  const std::int64_t ranks = layout_ranks(facts);
  return ranks > kLinearMaxRanks && ranks <= kManyRanksLinearMaxRanks &&
         linear_block_fits_many_ranks(facts, kManyRanksLinearMinBlockBytes);
}

std::string explain_many_ranks_linear(const AlltoallFacts& facts) {
  return std::to_string(facts.nodes) + " nodes x " + std::to_string(facts.ppn) + " processes, block " +
         format_bytes(facts.block_bytes) + " in " + format_bytes(kManyRanksLinearMinBlockBytes) + ".." +
         format_bytes(kManyRanksLinearMaxBlockBytes) + ", " +
         (facts.block_bytes < linear_paced_from_block_bytes(layout_ranks(facts), facts.ppn)
              ? std::string("all at once")
              : std::to_string(kLinearInFlight) + " in flight");
}

bool one_per_node_linear_fits(const AlltoallFacts& facts) {
  if (facts.ppn > 1 || facts.nodes < kOnePerNodeLinearMinNodes) return false;
  if (facts.nodes > kLinearMaxRanks) {
    return facts.nodes <= kManyRanksLinearMaxRanks &&
           linear_block_fits_many_ranks(facts, kOnePerNodeManyNodesLinearMinBlockBytes);
  }
  return linear_send_cost_fits(facts) && linear_copy_fits(facts);
}

// Processes per node from which SA pays up to twice SHIM_ALLTOALL_SA_MAX,
// and nodes from which it pays up to four times.
constexpr int kManyCores = 16;
constexpr int kManyNodes = 64;
// Below this many per node SA's aggregation saves too few messages there.
constexpr int kManyNodesAggregateMinPpn = 4;

constexpr std::array kRules = {
    AlltoallRule{"single-node", "nodes == 1", AlltoallAlgorithm::native,
                 "all ranks share one node: there is no inter-node traffic to aggregate",
                 [](const AlltoallFacts& f) { return f.nodes <= 1; }},
    AlltoallRule{
        "one-per-node-linear",
        "ppn == 1 && (3 <= nodes <= 64 && (its extra send cost <= one wave || block >= 4 KiB) && in place: nodes "
        "* block <= 64 MiB || nodes <= 128 && 64 B <= block <= 64 KiB && its extra send cost <= one wave)",
        AlltoallAlgorithm::linear,
        "one process per node: every block straight to its rank pays one latency where MPI's Bruck pays "
        "log2(nodes) and its pairwise exchange one per step (scale model, docs/scale/few-nodes.md)",
        [](const AlltoallFacts& f) { return one_per_node_linear_fits(f); },
        [](const AlltoallFacts& f) {
          if (f.nodes <= kLinearMaxRanks) return std::to_string(f.nodes) + " nodes x 1";
          return std::to_string(f.nodes) + " nodes x 1, block " + format_bytes(f.block_bytes) + " in " +
                 format_bytes(kOnePerNodeManyNodesLinearMinBlockBytes) + ".." +
                 format_bytes(kManyRanksLinearMaxBlockBytes);
        }},
    AlltoallRule{"one-per-node", "ppn == 1", AlltoallAlgorithm::native,
                 "one process per node: two nodes, beyond 64 for blocks under 64 B or over 64 KiB, beyond 128, or "
                 "where messages cost more: nothing to aggregate, and MPI's exchange is as good as linear's",
                 [](const AlltoallFacts& f) { return f.ppn <= 1; }},
    AlltoallRule{"offload-leader",
                 "nic == offload && ppn^2 * block <= SHIM_ALLTOALL_LEADER_MAX && ceil((nodes - 1) / ppn) > 64",
                 AlltoallAlgorithm::leader,
                 "offload NIC, beyond the partners node pairs are weighed for: one sender per node avoids "
                 "contention on the NIC (Kumar, Mamidala and Panda, Figures 4 and 10)",
                 [](const AlltoallFacts& f) { return offload_small(f) && !node_pairs_fit(f); },
                 [](const AlltoallFacts& f) { return explain_offload(f); }},
    AlltoallRule{
        "few-ranks-linear",
        "nodes * ppn <= 64 && (block >= 64 B (from 33 processes: 128 B) || nodes * ppn <= 12 (two nodes: 32)) && "
        "(its extra send cost <= one wave || block >= 4 KiB) && in place: nodes * ppn * block <= 64 MiB",
        AlltoallAlgorithm::linear,
        "few processes: every block straight to its rank, all at once below 4 KiB (Open MPI's basic "
        "linear) and 16 in flight from there, keeps the links busy without copies (scale model, "
        "docs/scale/small.md)",
        [](const AlltoallFacts& f) {
          return layout_ranks(f) <= kLinearMaxRanks &&
                 (f.block_bytes >= linear_min_block(f) || linear_takes_any_block(f)) && linear_send_cost_fits(f) &&
                 linear_copy_fits(f);
        },
        [](const AlltoallFacts& f) {
          const std::string shape = std::to_string(f.nodes) + " nodes x " + std::to_string(f.ppn);
          if (linear_takes_any_block(f)) {
            const int limit =
                layout_ranks(f) <= kLinearAnyBlockMaxRanks ? kLinearAnyBlockMaxRanks : kLinearTwoNodesAnyBlockMaxRanks;
            return shape + " <= " + std::to_string(limit) + " processes, any block";
          }
          return shape + " <= " + std::to_string(kLinearMaxRanks) + " processes, block " + format_bytes(f.block_bytes) +
                 " >= " + format_bytes(linear_min_block(f));
        }},
    AlltoallRule{"many-ranks-linear",
                 "64 < nodes * ppn <= 128 && 256 B <= block <= 64 KiB && its extra send cost <= one wave",
                 AlltoallAlgorithm::linear,
                 "blocks of a few hundred bytes or more between many processes: each straight to its rank, all at "
                 "once below 4 KiB and 16 in flight per rank from there, keep the links busier than MPI's paced "
                 "exchanges, without aggregation's copies (scale model, docs/scale/blocks.md)",
                 [](const AlltoallFacts& f) { return many_ranks_linear_fits(f); },
                 [](const AlltoallFacts& f) { return explain_many_ranks_linear(f); }},
    AlltoallRule{"costly-sends-bruck",
                 "not in place && send cost >= 1 us && block < 256 B && nodes * ppn >= 8 && log2(nodes * ppn) < "
                 "the fewest messages SA or node pairs send",
                 AlltoallAlgorithm::native,
                 "each message costs its sender more than the rest: MPI's Bruck over all ranks sends the fewest "
                 "(scale model, docs/scale/networks.md)",
                 [](const AlltoallFacts& f) { return native_bruck_sends_fewest(f); },
                 [](const AlltoallFacts& f) {
                   return std::to_string(native_bruck_messages(f)) + " Bruck rounds against " +
                          std::to_string(sa_rail_messages(f)) + " messages for SA's rail step" +
                          (node_pairs_fit(f) ? " and " + std::to_string(node_pair_partners(f)) + " node-pair partners"
                                             : "") +
                          ", " + std::to_string(f.send_cost_ns) + " ns per message";
                 }},
    AlltoallRule{"node-pairs", "ceil((nodes - 1) / ppn) <= 64 && SA's rail step costs more than what node pairs add",
                 AlltoallAlgorithm::node_pairs,
                 "per-message costs dominate: one message per pair of nodes, spread over the local ranks, where SA "
                 "sends one per rank and node (scale model, docs/scale/tiny.md)",
                 [](const AlltoallFacts& f) { return node_pairs_beat_sa(f); },
                 [](const AlltoallFacts& f) {
                   return "SA's rail step about " + one_decimal(sa_rail_us(f)) + " us against about " +
                          one_decimal(node_pairs_extra_us(f)) + " us that node pairs add (" +
                          std::to_string(node_pair_partners(f)) + " partners, " + std::to_string(f.nodes) +
                          " nodes x " + std::to_string(f.ppn) + send_cost_note(f) +
                          (two_hops_inside_nodes(f) ? ", two hops inside nodes" : "") +
                          (sa_rail_one_wave(f) ? ", SA's rail step one wave" : "") + ")";
                 }},
    AlltoallRule{"many-nodes-bruck", "not in place && rail step would be Bruck && nodes * ppn * block > 2 KiB",
                 AlltoallAlgorithm::native,
                 "between so many nodes SA's rail step would be Bruck too; MPI's Bruck over all ranks takes its "
                 "first rounds inside the node, where SA's two intra-node exchanges move every byte twice (scale "
                 "model, docs/scale/tiny.md)",
                 [](const AlltoallFacts& f) {
                   return !f.in_place && bruck_beats_window(f) &&
                          saturating_product(saturating_product(f.nodes, f.ppn), f.block_bytes) > kFlatBruckRankBytes;
                 },
                 [](const AlltoallFacts& f) {
                   return std::to_string(f.nodes) + " nodes x " + std::to_string(f.ppn) + " x block " +
                          format_bytes(f.block_bytes) + " > " + format_bytes(kFlatBruckRankBytes) + ", rail step " +
                          std::to_string(bruck_rounds(f.nodes)) + " Bruck rounds";
                 }},
    AlltoallRule{"aggregate", "ppn * block <= SHIM_ALLTOALL_SA_MAX", AlltoallAlgorithm::sa,
                 "start-up cost dominates: ppn times fewer, larger inter-node messages, sent by all cores "
                 "(Kumar, Mamidala and Panda, Figure 7)",
                 [](const AlltoallFacts& f) { return aggregated_bytes(f) <= sa_max_times(f, 1); },
                 [](const AlltoallFacts& f) { return explain_sa_max_times(f, 1); }},
    AlltoallRule{
        "aggregate-many-cores", "ppn >= 16 && ppn * block <= 2 * SHIM_ALLTOALL_SA_MAX", AlltoallAlgorithm::sa,
        "sixteen or more senders per node still gain from aggregation at twice the bytes (scale model, "
        "8 KiB aggregated: 0.89-0.91x MPICH at 16-64 nodes x 16, 1.01-1.15x at 8-32 nodes x 8)",
        [](const AlltoallFacts& f) { return f.ppn >= kManyCores && aggregated_bytes(f) <= sa_max_times(f, 2); },
        [](const AlltoallFacts& f) { return explain_sa_max_times(f, 2); }},
    AlltoallRule{"offload-aggregate", "nic == offload && ppn * block <= 4 * SHIM_ALLTOALL_SA_MAX",
                 AlltoallAlgorithm::sa,
                 "offload NIC: concurrent senders add no bandwidth, so ppn times fewer messages still pay at four "
                 "times the bytes (scale model, 0.78-0.97x MPICH at 12-128 nodes)",
                 [](const AlltoallFacts& f) {
                   return f.nic == topo::NicClass::offload && aggregated_bytes(f) <= offload_aggregate_max(f);
                 },
                 [](const AlltoallFacts& f) {
                   return "ppn x block = " + format_bytes(aggregated_bytes(f)) +
                          " <= " + format_bytes(offload_aggregate_max(f)) + ", offload NIC";
                 }},
    AlltoallRule{"aggregate-many-nodes", "nodes >= 64 && ppn >= 4 && ppn * block <= 4 * SHIM_ALLTOALL_SA_MAX",
                 AlltoallAlgorithm::sa,
                 "from 64 nodes ppn times fewer messages still pay at four times the bytes (scale model, 8 KiB "
                 "aggregated: 0.83-0.92x MPICH at 64-128 nodes x 4-8, against 0.98x at 32-48 nodes x 8; 16 KiB: "
                 "0.90-1.01x at 64-128 nodes x 4-16; with 2 per node they do not: 1.11x at 128 x 2, 4 KiB blocks)",
                 [](const AlltoallFacts& f) {
                   return f.nodes >= kManyNodes && f.ppn >= kManyNodesAggregateMinPpn &&
                          aggregated_bytes(f) <= sa_max_times(f, 4);
                 },
                 [](const AlltoallFacts& f) { return explain_sa_max_times(f, 4); }},
    AlltoallRule{"costly-sends-aggregate", "send cost >= 1 us && ppn * block <= 2 x send cost x SHIM_NODE_BANDWIDTH",
                 AlltoallAlgorithm::sa,
                 "MPI's exchange keeps its senders busier than the link: ppn times fewer messages leave the link's "
                 "time and the copies (scale model, docs/scale/blocks.md)",
                 [](const AlltoallFacts& f) { return sends_outlast_link(f); },
                 [](const AlltoallFacts& f) {
                   return "ppn x block = " + format_bytes(aggregated_bytes(f)) +
                          " <= " + std::to_string(kCostlySendsAggregateSpan) + " x " +
                          format_bytes(link_bytes_per_send(f)) + " the link carries in " +
                          std::to_string(f.send_cost_ns) + " ns";
                 }},
    AlltoallRule{"bandwidth-bound", "otherwise", AlltoallAlgorithm::native,
                 "bandwidth-bound: aggregation would only add copies", [](const AlltoallFacts&) { return true; },
                 [](const AlltoallFacts& f) {
                   return "ppn x block = " + format_bytes(aggregated_bytes(f)) + " > " +
                          format_bytes(f.thresholds.sa_max_bytes);
                 }},
};

constexpr AlltoallPolicy kPolicy{kRules};

}  // namespace

const AlltoallPolicy& alltoall_policy() { return kPolicy; }

std::int64_t link_bytes_per_send(const AlltoallFacts& facts) {
  const double bytes = static_cast<double>(facts.send_cost_ns) * 1e-9 * static_cast<double>(facts.node_bandwidth);
  return bytes >= 0x1p60 ? std::int64_t{1} << 60 : static_cast<std::int64_t>(bytes);
}

bool alltoall_native_for_every_block(int nodes, int ppn) {
  return nodes <= 1 || (ppn <= 1 && nodes < kOnePerNodeLinearMinNodes);
}

std::int64_t largest_rail_message_bytes(AlltoallAlgorithm algorithm, const AlltoallFacts& facts) {
  switch (algorithm) {
    case AlltoallAlgorithm::native:
    case AlltoallAlgorithm::linear:
    case AlltoallAlgorithm::node_pairs:
      return 0;
    case AlltoallAlgorithm::sa:
    case AlltoallAlgorithm::rd:
      return aggregated_bytes(facts);
    case AlltoallAlgorithm::leader:
      return leader_bytes(facts);
  }
  return 0;
}

RailStep rail_step_for(AlltoallAlgorithm algorithm, const AlltoallFacts& facts) {
  const std::int64_t bytes = largest_rail_message_bytes(algorithm, facts);
  return bytes > facts.thresholds.rail_point_to_point_max_bytes || (bytes > 0 && bruck_beats_window(facts))
             ? RailStep::native_alltoall
             : RailStep::point_to_point;
}

std::string explain_rail_step(AlltoallAlgorithm algorithm, const AlltoallFacts& facts) {
  const std::int64_t bytes = largest_rail_message_bytes(algorithm, facts);
  const std::string largest = "largest message " + format_bytes(bytes);
  const std::string limit =
      "SHIM_ALLTOALL_RAIL_P2P_MAX " + format_bytes(facts.thresholds.rail_point_to_point_max_bytes);
  if (bytes > facts.thresholds.rail_point_to_point_max_bytes) {
    return "rail step by MPI_Alltoall (" + largest + " > " + limit + ")";
  }
  const std::string costs = std::to_string(bruck_rounds(facts.nodes)) + " Bruck rounds of " +
                            format_bytes(static_cast<std::int64_t>(std::min(bruck_round_bytes(facts), 0x1p62))) +
                            " per node, about " + one_decimal(bruck_us(facts)) + " us, against " +
                            std::to_string(window_waves(facts.nodes)) + " waves of " + std::to_string(kRailWindow) +
                            ", about " + one_decimal(window_us(facts)) + " us";
  if (bytes > 0 && bruck_beats_window(facts)) return "rail step by MPI_Alltoall (" + largest + "; " + costs + ")";
  return "rail step point-to-point (" + largest + " <= " + limit + (costs_weighed(facts.nodes) ? "; " + costs : "") +
         ")";
}

}  // namespace shim::coll
