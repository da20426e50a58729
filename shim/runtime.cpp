#include "shim/runtime.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "collectives/alltoall_policy.hpp"
#include "collectives/bcast_pipeline.hpp"
#include "collectives/bcast_policy.hpp"
#include "common/datatype_checks.hpp"
#include "common/local_comm.hpp"
#include "common/log.hpp"
#include "shim/comm_state.hpp"
#include "shim/rma_startup.hpp"
#include "shim/stats_output.hpp"
#include "topology/network_picture.hpp"
#include "topology/pipeline_shape.hpp"

namespace shim {

std::atomic<bool> detail::alltoall_fast_path{false};
std::atomic<bool> detail::bcast_fast_path{false};

namespace {

enum class Phase : int { not_started, running, stopped };

std::atomic<Phase> g_phase{Phase::not_started};
std::mutex g_lifecycle;
Config g_config;
StartMode g_mode = StartMode::collective;
std::atomic<bool> g_alltoall_always_native{false};
std::atomic<bool> g_bcast_always_native{false};
std::optional<topo::NetworkPicture> g_picture;
// ECO broadcasts' segments and, per segment length, the fan-out inside
// subnets, from the profile: worked out once when it loads.
std::optional<topo::SegmentRange> g_profile_segments;
std::vector<std::pair<std::int64_t, int>> g_profile_subnet_fanouts;
int g_world_rank = 0;
int g_world_size = 1;

int run_finalize_hook(MPI_Comm, int, void*, void*) {
  stop_runtime(StopCause::self_attribute_hook);
  return MPI_SUCCESS;
}

void read_settings(StartMode mode) {
  const ParsedConfig parsed = parse_config([](const char* name) { return std::getenv(name); });
  g_config = parsed.config;
  // Collective start: only rank 0's settings count. Lazy start: every process
  // reads its own, normally the same environment; one complaint is enough.
  if (g_world_rank == 0) {
    for (const std::string& problem : parsed.problems) print_line(problem);
  }
  // Inside MPI_Init, MPI_COMM_WORLD still has MPI's fatal handler: a
  // failure ends the job in MPI, so there is no code to look at.
  if (mode == StartMode::collective && g_world_size > 1) {
    static_cast<void>(PMPI_Bcast(&g_config, sizeof(Config), MPI_BYTE, 0, MPI_COMM_WORLD));
  }
}

// Collective: every rank gets the same picture or none. A profile that
// cannot be used costs one line on rank 0, and the job runs without it.
void load_profile() {
  const std::string path(g_config.profile_path.data());
  if (path.empty()) return;
  std::string error;
  g_picture = topo::load_network_picture(path, g_config.node_size, error);
  if (!g_picture) {
    if (g_world_rank == 0) print_line("SHIM_PROFILE: " + error + "; continuing without a network profile");
    return;
  }
  if (!g_config.nic_explicit) g_config.nic = g_picture->profile.nic;
  if (!g_config.send_cost_explicit && g_picture->profile.send_cost_s > 0) {
    g_config.send_cost_ns = static_cast<int>(std::lround(std::min(g_picture->profile.send_cost_s, 0.1) * 1e9));
  }
  if (!g_config.node_bandwidth_explicit) g_config.node_bandwidth = g_picture->profile.node_bandwidth();
  g_profile_segments = topo::profile_segment_range(g_picture->profile, g_config.send_cost_ns / 1e9);
  std::vector<std::int64_t> segments;
  if (g_config.bcast_segment_bytes > 0) segments.push_back(g_config.bcast_segment_bytes);
  if (g_profile_segments) {
    for (std::int64_t s = g_profile_segments->shortest; s <= g_profile_segments->longest; s *= 2) segments.push_back(s);
  }
  for (const std::int64_t s : segments) {
    g_profile_subnet_fanouts.emplace_back(s, topo::profile_subnet_fanout(g_picture->profile, s));
  }
}

// Built eagerly so that jobs where every call goes native (one node, say)
// are recognised before the first call.
void inspect_world() {
  CommState* world = nullptr;
  const topo::Hierarchy* hierarchy = nullptr;
  if (comm_state(MPI_COMM_WORLD, world) != MPI_SUCCESS ||
      world->hierarchy(MPI_COMM_WORLD, g_config.node_size, hierarchy) != MPI_SUCCESS) {
    return;
  }
  const bool unobserved = !g_config.verbose && !g_config.stats;
  const topo::Layout& layout = hierarchy->layout();
  g_alltoall_always_native.store(unobserved && !g_config.alltoall &&
                                 coll::alltoall_native_for_every_block(layout.nodes(), layout.max_ppn()));
  g_bcast_always_native.store(
      unobserved && !g_config.bcast &&
      coll::bcast_native_for_every_size(layout.nodes(), layout.max_ppn(), world->subnets_spanned()));
  refresh_fast_paths();
}

}  // namespace

void start_runtime(StartMode mode) {
  std::lock_guard lock(g_lifecycle);
  if (g_phase.load() != Phase::not_started) return;
  g_mode = mode;
  // MPI is initialised (the callers check): MPI_COMM_WORLD answers.
  static_cast<void>(PMPI_Comm_rank(MPI_COMM_WORLD, &g_world_rank));
  static_cast<void>(PMPI_Comm_size(MPI_COMM_WORLD, &g_world_size));
  read_settings(mode);

  // The hook's keyval is released at once: the attribute keeps it alive
  // until MPI_Finalize deletes MPI_COMM_SELF's attributes.
  int hook = MPI_KEYVAL_INVALID;
  if (create_comm_state_keyval() != MPI_SUCCESS || open_local_comm() != MPI_SUCCESS ||
      PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, run_finalize_hook, &hook, nullptr) != MPI_SUCCESS ||
      PMPI_Comm_set_attr(MPI_COMM_SELF, hook, nullptr) != MPI_SUCCESS || PMPI_Comm_free_keyval(&hook) != MPI_SUCCESS) {
    print_line("could not create MPI attribute keyvals or a private communicator; shim stays off (pass-through)");
    g_config.enabled = false;
  }
  if (mode == StartMode::collective && g_config.enabled) {
    load_profile();
    inspect_world();
  } else if (g_config.profile_path[0] != '\0' && g_world_rank == 0) {
    print_line(
        "SHIM_PROFILE: not loaded: shim started on the first MPI call (mpi_f08 MPI_Init), not in MPI_Init, "
        "so it cannot read the profile collectively");
  }
  start_rma_wing(mode);
  g_phase.store(Phase::running);
}

void stop_runtime(StopCause cause) {
  std::lock_guard lock(g_lifecycle);
  if (g_phase.load() != Phase::running) return;
  if (g_config.stats) stats::write_report(g_mode == StartMode::collective);
  stop_rma_wing();
  drop_comm_state(MPI_COMM_WORLD);
  // Inside the hook, MPI is already deleting MPI_COMM_SELF's attributes and
  // takes ours with them; from the wrapper, the hook's attribute stays and
  // later finds the runtime stopped.
  if (cause == StopCause::finalize_wrapper) drop_comm_state(MPI_COMM_SELF);
  g_alltoall_always_native.store(false);
  g_bcast_always_native.store(false);
  refresh_fast_paths();
  g_picture.reset();
  g_profile_segments.reset();
  g_profile_subnet_fanouts.clear();
  free_comm_state_keyval();
  free_datatype_answers_keyval();
  close_local_comm();
  g_phase.store(Phase::stopped);
}

bool runtime_running() {
  const Phase phase = g_phase.load(std::memory_order_acquire);
  if (phase == Phase::running) return true;
  if (phase == Phase::stopped) return false;
  int initialized = 0;
  int finalized = 0;
  if (PMPI_Initialized(&initialized) != MPI_SUCCESS || PMPI_Finalized(&finalized) != MPI_SUCCESS || !initialized ||
      finalized) {
    return false;
  }
  start_runtime(StartMode::lazy);
  return g_phase.load(std::memory_order_acquire) == Phase::running;
}

bool shim_active() { return runtime_running() && g_config.enabled; }

void refresh_fast_paths() {
  const bool steered = any_communicator_steered();
  detail::alltoall_fast_path.store(g_alltoall_always_native.load() && !steered);
  detail::bcast_fast_path.store(g_bcast_always_native.load() && !steered);
}

const topo::NetworkPicture* network_picture() { return g_picture ? &*g_picture : nullptr; }

int bcast_tree_k() { return g_config.bcast_k > 0 ? g_config.bcast_k : g_picture ? g_picture->profile.bcast_k : 2; }

bool eco_segments_sent_once(const topo::Layout& layout, int subnets) {
  return g_profile_segments && subnets >= 2 && layout.nodes() == subnets && bcast_tree_k() == 1;
}

coll::BcastFanout bcast_fanout(coll::BcastAlgorithm algorithm, std::int64_t bytes, const topo::Layout& layout,
                               int subnets) {
  const int k = bcast_tree_k();
  const std::int64_t segment = bcast_segment_bytes(algorithm, bytes, eco_segments_sent_once(layout, subnets));
  const std::int64_t segments = coll::plan_segments(bytes, 1, segment).segments;
  if (algorithm != coll::BcastAlgorithm::eco) {
    coll::BcastFanout fanout{k, k, false, coll::intra_node_fanout(bytes),
                             coll::chain_nodes_up_to(segments, layout.max_ppn())};
    if (g_config.bcast_k > 0) return fanout;
    const bool chain = coll::chain_between_nodes(segments, layout.nodes());
    fanout.between_subnets = fanout.within_subnet = chain ? 1 : coll::two_level_fanout(k, bytes);
    fanout.one_chain = coll::one_chain_through_ranks(segments, layout.nodes(), layout.size());
    fanout.entries_per_node = coll::two_level_entries(layout.nodes(), bytes, g_config.send_cost_ns);
    return fanout;
  }
  // Where a sender feeds one subnet at a time (k = 1), a chain of subnets
  // makes a segment cross them one after another; taking turns at the
  // entries carries the same bytes on every link in two crossings. That
  // pays while the chain would spend most of its time filling up: a message
  // of 2 to topo::kSegmentsPerMessage segments. Longer ones stream through
  // the chain with one flow per link, where the turns' flows share each
  // entry's link. Scale model, ECO-like platform, 64 x 8
  // (docs/scale/headline.md): 16 KiB in 4 segments, 260.3 us with turns
  // against 314.7 chained; 64 KiB in 16, 754.1 against 750.0; 256 KiB,
  // 2527.0 against 2490.4.
  const bool rotate = k == 1 && segments >= 2 && segments <= topo::kSegmentsPerMessage;
  int within = k;
  if (g_config.bcast_k == 0) {
    for (const auto& [length, fanout] : g_profile_subnet_fanouts) {
      if (length == segment) within = fanout;
    }
  }
  return {k, within, rotate};
}

std::int64_t bcast_segment_bytes(coll::BcastAlgorithm algorithm, std::int64_t bytes, bool sent_once) {
  if (g_config.bcast_segment_bytes > 0) return g_config.bcast_segment_bytes;
  if (algorithm == coll::BcastAlgorithm::eco && g_profile_segments) {
    return sent_once ? g_profile_segments->for_message_sent_once(bytes) : g_profile_segments->for_message(bytes);
  }
  return bytes <= kShortBcastMessageBytes ? kShortBcastSegmentBytes : kDefaultBcastSegmentBytes;
}

const Config& config() { return g_config; }

bool server_wanted_before_init() {
  const Config settings = parse_config([](const char* name) { return std::getenv(name); }).config;
  return settings.enabled && settings.server && settings.accumulate != rma::AccumulatePath::native;
}

namespace {
std::atomic<int> g_thread_level_asked{-1};
}  // namespace

void remember_thread_level_asked(int level) { g_thread_level_asked.store(level); }
int thread_level_asked() { return g_thread_level_asked.load(); }
int world_rank() { return g_world_rank; }

std::string mpi_library_version() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  if (PMPI_Get_library_version(version, &length) != MPI_SUCCESS) return {};
  return std::string(version, static_cast<std::size_t>(length));
}

}  // namespace shim
