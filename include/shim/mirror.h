/*
 * shim mirrored windows (after Palmer, Nieplocha and Aprà, "Shared memory
 * mirroring for reducing communication overhead on commodity networks").
 *
 * A mirrored window holds `count` elements of a predefined integer,
 * floating-point or complex datatype over a communicator. Every node keeps
 * one full copy in shared memory, distributed over the node's processes in
 * consecutive blocks (local rank r holds block r; the first count % ppn
 * blocks hold one element more). Any process reads and writes any part of
 * its node's copy with plain memory copies: no network, no MPI call.
 * Merging makes every node's copy the element-wise sum of all copies.
 * A distributed array (block-distributed over the communicator's ranks, as
 * an MPI window) converts to and from a mirrored window.
 *
 * Nodes are the communicator's shared-memory nodes, or SHIM_NODE_SIZE's
 * virtual nodes (which must then fit inside a host). Every function returns
 * MPI_SUCCESS or an MPI error class (MPI_ERR_SIZE, MPI_ERR_TYPE, ...), and
 * prints the reason as one "shim: error: ..." line on stderr (for a
 * collective call, on the communicator's rank 0). Errors are raised on the
 * error handler the communicator had when the object was created (a null
 * handle: on MPI_COMM_SELF's), as MPI raises them.
 *
 * Synchronisation (the user manages consistency, as in the paper):
 *  - get, put and acc imply no synchronisation. accs are atomic per element
 *    against other accs on the node (they hold a lock per 4 KiB stripe), so
 *    concurrent accs into the same elements are exact. Any other mix of
 *    writers, or a reader of another process's writes, needs
 *    shim_mirror_sync in between.
 *  - shim_mirror_sync is a memory fence plus a barrier over the node
 *    (collective over the node's processes; call it on every process).
 *  - zero, merge and the copies are collective over the communicator and
 *    include a sync before and after.
 *  - A distributed array must have no RMA epoch in progress during a copy.
 *    After a copy, its data are in every owner's window memory; access them
 *    in a new epoch (fence, lock, ...), as for any local store.
 *
 * Free every mirrored window and distributed array before MPI_Finalize.
 */
#ifndef SHIM_MIRROR_H
#define SHIM_MIRROR_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shim_mirror_s *shim_mirror;
typedef struct shim_distributed_s *shim_distributed;

/* ---- create and free (collective over comm) ---- */

/* count >= 0 elements of `type`, all zero. Unsupported types (derived,
 * MPI_CHAR, MPI_BYTE, pair types, ...) give MPI_ERR_TYPE. */
int shim_mirror_create(MPI_Count count, MPI_Datatype type, MPI_Comm comm, shim_mirror *mirror);
/* Sets *mirror to NULL. */
int shim_mirror_free(shim_mirror *mirror);

/* ---- queries (local) ---- */

/* Element count and datatype. */
int shim_mirror_size(shim_mirror mirror, MPI_Count *count, MPI_Datatype *type);
/* This process's node (0 .. nodes-1, in order of the nodes' lowest rank),
 * its rank within the node, and the node's process count. */
int shim_mirror_node(shim_mirror mirror, int *node, int *nodes, int *local_rank, int *local_size);
/* The elements [*first, *first + *count) that local rank `local_rank` of
 * this node holds. */
int shim_mirror_range(shim_mirror mirror, int local_rank, MPI_Count *first, MPI_Count *count);
/* The communicator rank, on this node, that holds element `index`. */
int shim_mirror_holder(shim_mirror mirror, MPI_Count index, int *rank);
/* The address of element `index` in this node's copy. Elements of one
 * holder's range are consecutive in memory (in practice the whole copy is,
 * but only the per-holder layout is promised). */
int shim_mirror_address(shim_mirror mirror, MPI_Count index, void **address);

/* ---- local access to this node's copy (local, any range) ---- */

/* buffer: count contiguous elements of the window's datatype. */
int shim_mirror_get(shim_mirror mirror, MPI_Count first, MPI_Count count, void *buffer);
int shim_mirror_put(shim_mirror mirror, MPI_Count first, MPI_Count count, const void *buffer);
/* copy[first + i] += scale * buffer[i]; scale points to one element of the
 * window's datatype (NULL: 1). The AXPY of the paper's DFT kernel. */
int shim_mirror_acc(shim_mirror mirror, MPI_Count first, MPI_Count count, const void *buffer, const void *scale);

/* Fence + node barrier: orders every process's get/put/acc on the node. */
int shim_mirror_sync(shim_mirror mirror);
/* Collective over the communicator: every node's copy becomes zero. */
int shim_mirror_zero(shim_mirror mirror);

/* ---- merge (collective over the communicator) ---- */

/* Every copy becomes the sum of all copies. Local rank r sums slice r of
 * the array with local rank r of every other node (MPI_Allreduce over that
 * rail), all slices in parallel. Floating-point sums are identical on
 * every node. */
int shim_mirror_merge(shim_mirror mirror);
/* The same, for [first, first + count) only; the rest stays as it is. */
int shim_mirror_merge_patch(shim_mirror mirror, MPI_Count first, MPI_Count count);
/* The same as shim_mirror_merge, moving only blocks of `block_elements`
 * that hold a non-zero byte on some node: for copies that are mostly zero
 * (each node filled its own part). Every process must pass the same block. */
int shim_mirror_merge_sparse(shim_mirror mirror, MPI_Count block_elements);

/* ---- distributed arrays (collective over comm for create/free) ---- */

/* count elements of `type` (same types as mirrored windows), zeroed, rank r
 * holding the r-th of size balanced consecutive blocks. */
int shim_distributed_create(MPI_Count count, MPI_Datatype type, MPI_Comm comm, shim_distributed *array);
int shim_distributed_free(shim_distributed *array);
/* The array's window: disp_unit is the element size. Use it with MPI_Get,
 * MPI_Put, MPI_Accumulate and their synchronisation calls; do not free it. */
int shim_distributed_window(shim_distributed array, MPI_Win *window);
/* The elements [*first, *first + *count) that communicator rank `rank` holds. */
int shim_distributed_range(shim_distributed array, int rank, MPI_Count *first, MPI_Count *count);
/* Where element `index` lives: its owner's rank and its displacement there. */
int shim_distributed_locate(shim_distributed array, MPI_Count index, int *rank, MPI_Aint *displacement);

/* ---- copies (collective over the communicator) ---- */

/* Distributed -> mirrored: zero every copy, each process copies the block it
 * owns into its node's copy, then merge. A different element count
 * (MPI_ERR_SIZE), datatype (MPI_ERR_TYPE) or set or order of processes
 * (MPI_ERR_COMM) is reported on every process and touches no data. */
int shim_mirror_copy_from_distributed(shim_mirror mirror, shim_distributed array);
/* Mirrored -> distributed: each process copies its block from its node's
 * copy (shared memory only). The copies should be equal (merged). */
int shim_mirror_copy_to_distributed(shim_mirror mirror, shim_distributed array);

#ifdef __cplusplus
} /* extern "C" */

#include <exception>
#include <string>
#include <utility>

namespace shim {

/* Thrown by the wrappers when a call returns an error (only reachable when
 * the communicator's error handler returns, e.g. MPI_ERRORS_RETURN). */
class mirror_error : public std::exception {
 public:
  explicit mirror_error(int code) : code_(code) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    if (MPI_Error_string(code, text, &length) == MPI_SUCCESS) message_.assign(text, static_cast<std::size_t>(length));
  }
  int code() const noexcept { return code_; }
  const char *what() const noexcept override { return message_.c_str(); }

 private:
  int code_;
  std::string message_;
};

namespace detail {
inline void check(int rc) {
  if (rc != MPI_SUCCESS) throw mirror_error(rc);
}

/* Owns one handle of the C API and frees it (collectively) when it goes;
 * moving hands the handle over. */
template <typename Handle, int (*free_handle)(Handle *)>
class Owner {
 public:
  Owner(Owner &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Owner &operator=(Owner &&other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  ~Owner() {
    if (handle_ != nullptr) free_handle(&handle_);
  }
  Handle handle() const { return handle_; }

 protected:
  Owner() = default;
  Handle handle_ = nullptr;
};
}  // namespace detail

/* A distributed array; freed (collectively) by its destructor. */
class Distributed : public detail::Owner<shim_distributed, shim_distributed_free> {
 public:
  Distributed(MPI_Count count, MPI_Datatype type, MPI_Comm comm) {
    detail::check(shim_distributed_create(count, type, comm, &handle_));
  }

  MPI_Win window() const {
    MPI_Win window = MPI_WIN_NULL;
    detail::check(shim_distributed_window(handle_, &window));
    return window;
  }
  std::pair<MPI_Count, MPI_Count> range(int rank) const {
    MPI_Count first = 0, count = 0;
    detail::check(shim_distributed_range(handle_, rank, &first, &count));
    return {first, count};
  }
  std::pair<int, MPI_Aint> locate(MPI_Count index) const {
    int rank = 0;
    MPI_Aint displacement = 0;
    detail::check(shim_distributed_locate(handle_, index, &rank, &displacement));
    return {rank, displacement};
  }
};

/* A mirrored window; freed (collectively) by its destructor. */
class Mirror : public detail::Owner<shim_mirror, shim_mirror_free> {
 public:
  Mirror(MPI_Count count, MPI_Datatype type, MPI_Comm comm) {
    detail::check(shim_mirror_create(count, type, comm, &handle_));
  }

  std::pair<MPI_Count, MPI_Count> range(int local_rank) const {
    MPI_Count first = 0, count = 0;
    detail::check(shim_mirror_range(handle_, local_rank, &first, &count));
    return {first, count};
  }
  template <typename T>
  T *address(MPI_Count index) const {
    void *address = nullptr;
    detail::check(shim_mirror_address(handle_, index, &address));
    return static_cast<T *>(address);
  }
  void get(MPI_Count first, MPI_Count count, void *buffer) const {
    detail::check(shim_mirror_get(handle_, first, count, buffer));
  }
  void put(MPI_Count first, MPI_Count count, const void *buffer) {
    detail::check(shim_mirror_put(handle_, first, count, buffer));
  }
  void acc(MPI_Count first, MPI_Count count, const void *buffer, const void *scale = nullptr) {
    detail::check(shim_mirror_acc(handle_, first, count, buffer, scale));
  }
  void sync() { detail::check(shim_mirror_sync(handle_)); }
  void zero() { detail::check(shim_mirror_zero(handle_)); }
  void merge() { detail::check(shim_mirror_merge(handle_)); }
  void merge_patch(MPI_Count first, MPI_Count count) { detail::check(shim_mirror_merge_patch(handle_, first, count)); }
  void merge_sparse(MPI_Count block_elements) { detail::check(shim_mirror_merge_sparse(handle_, block_elements)); }
  void copy_from(const Distributed &array) {
    detail::check(shim_mirror_copy_from_distributed(handle_, array.handle()));
  }
  void copy_to(Distributed &array) { detail::check(shim_mirror_copy_to_distributed(handle_, array.handle())); }
};

}  // namespace shim
#endif /* __cplusplus */

#endif /* SHIM_MIRROR_H */
