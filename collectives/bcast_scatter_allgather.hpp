// A broadcast for long messages over slow node links: scatter between node
// leaders, allgather between them, then a tree inside each node (van de
// Geijn's scatter-allgather broadcast, as in Barnett, Shuler, van de Geijn,
// Gupta, Payne and Watts, "Interprocessor Collective Communication Library
// (InterCom)", applied over nodes as MVAPICH2's two-level broadcast does).
//
// A tree sends the whole message down every edge, so each relay's link
// carries it once in and k times out; here every leader's link carries about
// the message once each way, whatever the number of nodes, in 2 log2(nodes)
// steps. It pays where a node's link is slow next to a message's fixed costs.
//
// The schedule addresses the stage buffer only: the message packed and cut
// into one block per node (block j is bytes [j c, (j + 1) c) for a chunk c of
// ceil(message / nodes)), so it depends on the layout, the root and the rank,
// never on the message.
#pragma once

#include "collectives/schedule.hpp"
#include "topology/layout.hpp"

namespace shim::coll {

// Leaders are the root on its node and local rank 0 elsewhere. Node v after
// the root's (in node order, wrapping) owns block v. Phases, the same number
// on every rank (empty where a rank has no part):
//  1. binomial scatter from the root: ceil(log2 nodes) phases, after which
//     each leader holds its own block;
//  2. Bruck's allgather between leaders: ceil(log2 nodes) phases, in which
//     a leader sends what it holds to the leader 2^k nodes behind it;
//  3. a binomial tree inside each node from its leader: ceil(log2 max_ppn)
//     phases, each carrying all blocks.
Schedule build_scatter_allgather_bcast(const topo::Layout& layout, int root, int rank);

}  // namespace shim::coll
