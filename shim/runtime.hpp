// Process-wide lifecycle: settings, the attribute keyval, and the finalize
// hook. Started right after PMPI_Init* by the MPI_Init wrappers, or lazily by
// the first intercepted call when MPI was initialised behind shim's back
// (MPICH's mpi_f08 MPI_Init does not go through the C MPI_Init).
#pragma once

#include <atomic>
#include <string>

#include "collectives/bcast_tree.hpp"
#include "shim/config.hpp"

namespace shim {

namespace topo {
struct NetworkPicture;
}

namespace detail {
extern std::atomic<bool> alltoall_fast_path;
extern std::atomic<bool> bcast_fast_path;
}  // namespace detail

enum class StartMode {
  // Inside MPI_Init on every process: rank 0's settings are broadcast so all
  // processes decide alike, and MPI_COMM_WORLD's hierarchy is built eagerly.
  collective,
  // From whichever call came first on this process: settings are read
  // locally, and the stats report is printed per process.
  lazy,
};

void start_runtime(StartMode mode);

enum class StopCause {
  finalize_wrapper,
  // MPI_COMM_SELF's attributes are deleted first thing in MPI_Finalize, while
  // MPI is fully usable; this catches a Finalize that bypassed the wrapper.
  self_attribute_hook,
};
// Prints the stats report and releases per-communicator state. Idempotent.
void stop_runtime(StopCause cause);

// Started (lazily if needed), not stopped, and SHIM_ENABLE is on.
bool shim_active();
// Started (lazily if needed) and not stopped, whatever SHIM_ENABLE says.
bool runtime_running();

// True while every alltoall (broadcast) would go to native MPI anyway: the
// policy table says native for every size on this job's layout (one node;
// two nodes of one process each for alltoall; one process per node without a
// profile that splits the job into subnets for broadcast),
// and nothing observes or steers shim (no SHIM_VERBOSE, no SHIM_STATS, no
// algorithm forced by setting or control API). Such calls skip shim
// entirely, counters included. Inline: it is all that stands between such a
// job's MPI_Alltoall and PMPI_Alltoall.
inline bool alltoall_fast_path() { return detail::alltoall_fast_path.load(std::memory_order_relaxed); }
inline bool bcast_fast_path() { return detail::bcast_fast_path.load(std::memory_order_relaxed); }
// Recomputes the above; called when one of their inputs changes.
void refresh_fast_paths();

// The network profile (SHIM_PROFILE) as mapped onto this job, or nullptr.
const topo::NetworkPicture* network_picture();
// The fan-out of broadcast trees between nodes for long messages:
// SHIM_BCAST_K, else the profile's, else 2.
int bcast_tree_k();
// Fan-outs of the tree of a broadcast of `bytes` over `layout`: SHIM_BCAST_K
// for both, else for ECO the profile's between subnets and
// topo::profile_subnet_fanout's inside them for its segment; two-level trees
// use between_subnets, bcast_tree_k() widened by coll::two_level_fanout or a
// chain (coll::chain_between_nodes), and inside nodes coll::intra_node_fanout
// or, for nodes of up to coll::chain_nodes_up_to ranks, a chain, entering
// each other node at coll::two_level_entries ranks; or one chain through
// every rank (coll::one_chain_through_ranks; not with SHIM_BCAST_K).
// ECO's subnet entries take turns when the fan-out between subnets is 1 and
// the message is cut into segments.
// `subnets`: those the communicator spans (CommState::subnets_spanned).
coll::BcastFanout bcast_fanout(coll::BcastAlgorithm algorithm, std::int64_t bytes, const topo::Layout& layout,
                               int subnets);
// Whether every node of an ECO tree passes each segment on to one other
// node: each subnet holds one node of the communicator and the subnets form
// a chain (fan-out 1); its segments are then the profile's for one send
// (topo::SegmentRange::for_message_sent_once). False where the profile
// gives no segments (one subnet, or one message size measured).
bool eco_segments_sent_once(const topo::Layout& layout, int subnets);
// Pipeline segment of a broadcast of `bytes`: SHIM_BCAST_SEGMENT, else for
// ECO the profile's (topo::profile_segment_range; `sent_once`:
// eco_segments_sent_once), else
// kDefaultBcastSegmentBytes, or kShortBcastSegmentBytes for messages up to
// kShortBcastMessageBytes.
// 8 KiB: every level of a two-level tree works at once from the second
// segment on. Scale model, two-level at 16 KiB / 64 KiB / 256 KiB / 1 MiB
// (bench/sim/simrun.py PLATFORM LAYOUT bcast shim-twolevel SIZES --set
// SHIM_BCAST_SEGMENT=S): onload 8 x 4 round-robin 11.7 / 22.4 / 65.4 / 237.4
// us against 20.0 / 39.5 / 78.0 / 207.3 with 64 KiB; 64 x 16 21.9 / 32.9 /
// 76.3 / 248.5 against 40.7 / 86.6 / 136.6 / 269.8; 25 GbE 8 x 8 27.0 /
// 62.5 / 204.2 / 770.8 against 40.2 / 124.6 / 284.8 / 826.5; 1 GbE 8 x 8
// 0.55-0.96x the time. 4 KiB is faster still on the InfiniBand-like
// platforms but 1.3-1.5x slower than 8 KiB at 25 GbE, where a message's
// fixed cost is larger.
inline constexpr std::int64_t kDefaultBcastSegmentBytes = 8 * 1024;
// A message of at most two such segments would cross each hop in one or two
// pieces, and each hop would wait for the whole of the first: up to
// kShortBcastMessageBytes the segments are kShortBcastSegmentBytes. Scale
// model, two-level at 8 KiB / 16 KiB, 4 KiB against 8 KiB segments: onload
// 16 x 16 7.8 / 9.4 against 15.0 / 16.8 us, 32 x 16 9.2 / 10.9 against 17.6 /
// 19.4 (Intel MPI's selection 17.3 at 16 KiB), 32 x 1 7.8 / 9.3 against 12.4
// / 14.1; 25 GbE 8 x 8 17.2 / 26.2 against 20.7 / 27.0, 16 x 4 22.5 / 31.5
// against 27.7 / 34.4; 1 GbE 8 x 8 331 / 475 against 351 / 671. At 32 KiB
// the fixed cost of twice the messages shows at 25 GbE (8 x 8: 44.2 against
// 38.9 us), so longer messages keep 8 KiB. Four emulated hosts on this
// machine's 2 cores (README, "Algorithms") tie at 100 Mbit/s and lose
// 1.1-2.0x on unshaped links, where TCP's CPU cost per message is the limit.
inline constexpr std::int64_t kShortBcastMessageBytes = 16 * 1024;
inline constexpr std::int64_t kShortBcastSegmentBytes = 4 * 1024;
std::int64_t bcast_segment_bytes(coll::BcastAlgorithm algorithm, std::int64_t bytes, bool sent_once);

const Config& config();

// Before MPI_Init: whether the environment asks for server threads, which
// need MPI_THREAD_MULTIPLE underneath.
bool server_wanted_before_init();
// The thread level the application asked for when shim asked MPI for more,
// so MPI_Query_thread can answer as the application expects; -1 if shim
// did not change it.
void remember_thread_level_asked(int level);
int thread_level_asked();
int world_rank();
// MPI_Get_library_version's whole text; empty if MPI cannot say.
std::string mpi_library_version();

}  // namespace shim
