/*
 * Linked into every MPI test program: a rank that finds nothing to do in
 * MPI's progress loop gives its core away after a few idle polls.
 *
 * The suite runs up to 17 ranks on 2 cores. MPICH 4.0.2's ch4 progress loop
 * spins without yielding (ch3's MPIR_CVAR_POLLS_BEFORE_YIELD has no effect
 * there), so a rank waiting for a message from a rank that shares its core
 * spins out its whole time slice first, and every step of a collective
 * costs a slice: bcast_matrix on 8 ranks took 26 s, 4 s with this. Results
 * and message counts do not depend on it; only which rank runs when does,
 * which oversubscription leaves to the scheduler either way.
 *
 * Every progress iteration of MPICH's UCX netmod polls UCX's worker once,
 * the only call of that loop that reaches another shared library, so it is
 * where the executable can interpose (tests/support/yield_when_idle.list
 * exports this one symbol). Benchmarks and tools/demo do not link it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <ucp/api/ucp.h>

enum { kIdlePollsBeforeYield = 16 };

typedef unsigned (*progress_fn)(ucp_worker_h);

/* The communication server thread polls beside the application's threads. */
static _Thread_local unsigned idle_polls;

unsigned ucp_worker_progress(ucp_worker_h worker) {
  static _Atomic(progress_fn) real;
  progress_fn progress = real;
  if (progress == NULL) {
    *(void **)&progress = dlsym(RTLD_NEXT, "ucp_worker_progress"); /* POSIX's way to a function pointer */
    real = progress;
  }
  const unsigned events = progress(worker);
  if (events != 0) {
    idle_polls = 0;
  } else if (++idle_polls >= kIdlePollsBeforeYield) {
    idle_polls = 0;
    sched_yield();
  }
  return events;
}
