// Whether MPI_Win_lock returns only once MPI holds the lock, read from the
// MPI library's version text. MPICH's ch3 device grants passive-target locks
// lazily (at the first operation or at unlock); its ch4 device waits for the
// grant inside MPI_Win_lock and MPI_Win_lock_all (measured with MPICH 4.0.2
// ch4:ucx: a shared lock on a target another origin holds exclusively
// returns when that origin unlocks). Anything else is taken as lazy. No MPI.
#pragma once

#include <string_view>

namespace shim::rma {

// `library_version`: MPI_Get_library_version's text.
bool locks_held_on_return(std::string_view library_version);

}  // namespace shim::rma
