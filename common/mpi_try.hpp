// shim's one idiom for MPI errors inside its own code: a failing PMPI call
// returns its code to the caller at once. Whatever the function acquired so
// far is held by owners (common/mpi_handle.hpp) and released on the way out;
// the interposer at the top raises the code on the user's error handler.
#pragma once

#include <mpi.h>

#define SHIM_TRY(call)                                    \
  do {                                                    \
    const int shim_try_rc_ = (call);                      \
    if (shim_try_rc_ != MPI_SUCCESS) return shim_try_rc_; \
  } while (false)
