// Makes shim's MPI calls fail on purpose. fault_injection.cpp defines a set
// of PMPI_* functions; the test executable exports them, so they take the
// place of MPICH's for every caller in the process, libshim included. They
// count the calls the armed thread makes, fail the chosen one with
// MPI_ERR_OTHER without calling MPI, and forward everything else to MPICH.
// They also count the communicators, windows, groups, infos and datatypes
// created and freed through them, so a test can see that a call that failed
// half-way left nothing behind.
//
// Every process of a collective makes the same sequence of these calls, so
// arming all of them with the same number fails the same step everywhere,
// as a real collective failure would.
#pragma once

namespace fault {

// The calls that can fail: creation, collectives and the point-to-point
// steps of shim's protocols. Frees are counted, never failed.
// `fail_at` 1 fails this thread's first such call after arming; 0 disarms.
void arm(long fail_at);
// Whether the armed failure happened since arm(), and in which function.
bool fired();
const char* fired_in();
// Handles created minus handles freed through the wrappers, all threads.
long live_handles();

}  // namespace fault
