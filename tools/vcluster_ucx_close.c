/*
 * Preloaded into every rank vcluster launches, to get around a finalize
 * deadlock between MPICH 4.0.2 and UCX 1.13's TCP transport (both Debian 12).
 *
 * MPICH's finalize closes every UCX endpoint in flush mode and waits for the
 * closes before its PMI barrier. Over TCP such a close can need an answer from
 * the peer, but a peer that has finished its own closes sits in the PMI
 * barrier and no longer progresses UCX: the job hangs in MPI_Finalize, with
 * or without shim, whenever enough data crossed the network (reproduced with
 * plain MPI programs on 3 and 6 emulated hosts). Later MPICH releases barrier
 * first and close after.
 *
 * Here each close first flushes the endpoint (so every byte MPI handed to
 * UCX has left for the peer), with a deadline, and then closes it without the
 * disconnect handshake that needs the peer.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <time.h>
#include <ucp/api/ucp.h>

enum { kMaxWorkers = 64 };
static ucp_worker_h workers[kMaxWorkers];
static int worker_count;

typedef ucs_status_t (*worker_create_fn)(ucp_context_h, const ucp_worker_params_t *, ucp_worker_h *);

/* Endpoints do not name their worker in this UCX API; remember the workers
 * MPICH creates so the flush below can progress them. */
ucs_status_t ucp_worker_create(ucp_context_h context, const ucp_worker_params_t *params, ucp_worker_h *worker) {
  worker_create_fn real;
  *(void **)&real = dlsym(RTLD_NEXT, "ucp_worker_create"); /* POSIX's way to a function pointer */
  const ucs_status_t status = real(context, params, worker);
  if (status == UCS_OK && worker_count < kMaxWorkers) workers[worker_count++] = *worker;
  return status;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void flush_done(void *request, ucs_status_t status) {
  (void)request;
  (void)status;
}

ucs_status_ptr_t ucp_disconnect_nb(ucp_ep_h ep) {
  if (ep == NULL) return UCS_STATUS_PTR(UCS_OK);
  ucs_status_ptr_t flush = ucp_ep_flush_nb(ep, 0, flush_done);
  if (UCS_PTR_IS_PTR(flush)) {
    const double deadline = now() + 5.0;
    while (ucp_request_check_status(flush) == UCS_INPROGRESS && now() < deadline) {
      for (int i = 0; i < worker_count; ++i) ucp_worker_progress(workers[i]);
    }
    ucp_request_free(flush);
  }
  ucs_status_ptr_t close = ucp_ep_close_nb(ep, UCP_EP_CLOSE_MODE_FORCE);
  return UCS_PTR_IS_ERR(close) ? UCS_STATUS_PTR(UCS_OK) : close;
}
