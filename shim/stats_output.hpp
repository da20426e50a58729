// Where the SHIM_STATS report goes, and the job-wide sums it shows: at
// MPI_Finalize, rank 0 writes the counts summed (and maximised) over the
// job to stderr or to SHIM_STATS's file; with %r in the file name every
// process writes its own.
#pragma once

namespace shim::stats {

// `job_wide`: shim started inside MPI_Init on every process, so the call is
// collective over MPI_COMM_WORLD; otherwise each process reports its own
// counts (on stderr with a "[rank N]" prefix, or to FILE.N unless FILE holds
// %r).
void write_report(bool job_wide);

}  // namespace shim::stats
