// libshim is built with hidden visibility; only the MPI_* interposers and the
// shim_* control API are exported, so shim's C++ internals never collide with
// an application's symbols.
#pragma once

#define SHIM_EXPORT extern "C" __attribute__((visibility("default")))
