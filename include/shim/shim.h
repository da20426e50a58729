/*
 * shim control API.
 *
 * libshim interposes MPI calls (LD_PRELOAD=libshim.so, or link with -lshim)
 * and needs no code changes. This header is for programs that want to ask it
 * something or steer it at run time: benchmarks that compare algorithms in
 * one run, or applications that switch it off around a phase.
 *
 * Every function returns MPI_SUCCESS or an MPI error class. The functions
 * that take a communicator are collective over it, raise errors on its error
 * handler as MPI would, and affect collectives on that communicator only
 * (not on communicators derived from it later).
 */
#ifndef SHIM_SHIM_H
#define SHIM_SHIM_H

#include <mpi.h>
#include <shim/version.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version, "major.minor.patch"; may differ from the header's
 * SHIM_VERSION_STRING when the program runs with a newer libshim. */
const char *shim_version(void);

/* Collective over comm: switch shim on (1) or off (0) for collectives on
 * comm. Off means pure pass-through to PMPI_*. Every process must pass the
 * same value, or all get MPI_ERR_ARG and nothing changes. SHIM_ENABLE=0 in
 * the environment overrides it (shim stays off everywhere). */
int shim_set_enabled(MPI_Comm comm, int enabled);

/* Local: whether shim handles collectives on comm (1) or passes them through. */
int shim_get_enabled(MPI_Comm comm, int *enabled);

typedef enum shim_alltoall_algorithm {
  SHIM_ALLTOALL_AUTO = 0,      /* the policy table (SHIM_ALLTOALL's default) */
  SHIM_ALLTOALL_NATIVE = 1,    /* PMPI_Alltoall */
  SHIM_ALLTOALL_SA = 2,        /* send-side aggregation */
  SHIM_ALLTOALL_RD = 3,        /* receive-side distribution */
  SHIM_ALLTOALL_LEADER = 4,    /* leader-based */
  SHIM_ALLTOALL_LINEAR = 5,    /* every block straight to its rank, all at once */
  SHIM_ALLTOALL_NODE_PAIRS = 6 /* one message per node pair, spread over the local ranks */
} shim_alltoall_algorithm;

/* Collective over comm: the alltoall algorithm for comm, overriding
 * SHIM_ALLTOALL. SHIM_ALLTOALL_AUTO returns to the policy table. Every
 * process must pass the same value, or all get MPI_ERR_ARG. */
int shim_set_alltoall_algorithm(MPI_Comm comm, shim_alltoall_algorithm algorithm);

typedef enum shim_bcast_algorithm {
  SHIM_BCAST_AUTO = 0,             /* the policy table (SHIM_BCAST's default) */
  SHIM_BCAST_NATIVE = 1,           /* PMPI_Bcast */
  SHIM_BCAST_ECO = 2,              /* trees over the subnets of the network profile */
  SHIM_BCAST_TWOLEVEL = 3,         /* a tree over nodes, then inside each node */
  SHIM_BCAST_SCATTER_ALLGATHER = 4 /* scatter and allgather between node leaders,
                                      then a tree inside each node */
} shim_bcast_algorithm;

/* Collective over comm: the broadcast algorithm for comm, overriding
 * SHIM_BCAST. ECO without a network profile (SHIM_PROFILE) runs over a
 * single subnet, which is two-level. */
int shim_set_bcast_algorithm(MPI_Comm comm, shim_bcast_algorithm algorithm);

typedef struct shim_counters {
  uint64_t calls;               /* calls made by this process */
  uint64_t collective_calls;    /* of which this process was rank 0: summed over
                                   processes, the number of collective operations */
  uint64_t payload_bytes;       /* alltoall: bytes this process contributed
                                   (size x block); bcast: the message */
  uint64_t inter_node_messages; /* sent by this process to other nodes, as the
                                   algorithm sends them; 0 for native, whose
                                   own messages are not visible to shim */
  uint64_t inter_node_bytes;
  uint64_t intra_node_messages;
  uint64_t intra_node_bytes;
  uint64_t flat_inter_node_messages; /* alltoall: what a flat (direct)
                                        exchange of the same calls sends to
                                        other nodes; 0 for bcast */
  uint64_t flat_inter_node_bytes;
} shim_counters;

/* Local: this process's counters for one algorithm since start or the last
 * reset; ..._AUTO gives the sum over all algorithms. Not counted: calls shim
 * leaves to MPI untouched (intercommunicators, empty messages, shim switched
 * off) and, in a job that runs on one node or with one process per node,
 * alltoall calls made while no algorithm is forced and neither SHIM_STATS nor
 * SHIM_VERBOSE is set: those go straight to PMPI_Alltoall. */
int shim_get_alltoall_counters(shim_alltoall_algorithm algorithm, shim_counters *counters);
int shim_get_bcast_counters(shim_bcast_algorithm algorithm, shim_counters *counters);

/* Local: zero this process's counters. */
int shim_reset_counters(void);

/* Local: the path the accumulate family takes on win, as a string:
 * "owner" (owner-computes: same-node targets in node shared memory, other
 * nodes through their communication server), "caller" (caller-computes:
 * lock, get, compute, put, unlock) or "native" (MPI's own; every window
 * shim did not create with MPI_Win_allocate). Truncated to path_len - 1
 * characters. The path is chosen at MPI_Win_allocate by SHIM_ACCUMULATE or
 * the window info key "shim_accumulate" (auto|owner|caller|native). */
int shim_win_accumulate_path(MPI_Win win, char *path, int path_len);

typedef struct shim_server_counters {
  int64_t direct_buffer_bytes;   /* request buffers for the origins assigned to this server */
  int64_t forward_buffer_bytes;  /* request buffers for the other servers of its cluster */
  int64_t peak_buffers_in_use;   /* most buffers holding a message not yet released at once */
  int64_t messages_direct;       /* from origins, applied here */
  int64_t messages_forwarded;    /* from origins, forwarded to another server of the cluster */
  int64_t messages_from_servers; /* forwarded here by another server */
  int64_t distinct_peers;        /* processes that sent to this server */
  int64_t busy_ns;               /* time spent handling messages */
} shim_server_counters;

/* Local: the counters of the communication server this process runs (the
 * lowest world rank of each node runs its node's). *runs_server is 0, and
 * the counters zero, in every other process and when no servers run. */
int shim_get_server_counters(shim_server_counters *counters, int *runs_server);

#ifdef __cplusplus
}
#endif

#endif /* SHIM_SHIM_H */
