// The send cost both policies weigh: what a core spends per small message it
// sends to another node (SHIM_SEND_COST_NS, or the profile's).
#pragma once

namespace shim::coll {

// On the platform the costs of the policies were fitted on (the scale
// model's onload platform: MPI_Isend of 8 B through shared memory here, 25
// ns, docs/scale/platforms.md); also the default where nothing measured it.
// Every alltoall estimate adds what a platform's messages cost beyond it,
// once per message on the estimate's critical path: on TCP (6.4 us per
// message, docs/scale/platforms.md) that sum decides.
inline constexpr int kReferenceSendCostNs = 25;

}  // namespace shim::coll
