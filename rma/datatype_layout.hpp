// What the accumulate paths need to know about a datatype: the one
// predefined type it is built from (MPI requires that of accumulate operands)
// and, for shipping an operation to another node's server, where each byte
// of its packed form lives in memory. Both are cached on the datatype through
// an attribute, so they are computed once per type and die with it.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace shim::rma {

// A contiguous piece of a datatype's memory, in the order of its packed
// form: `bytes` bytes at `offset` from the buffer address.
struct ByteRun {
  std::int64_t offset;
  std::int64_t bytes;
};

struct DatatypeLayout {
  MPI_Datatype basic = MPI_DATATYPE_NULL;  // the predefined type of every element
  MPI_Count size = 0;                      // packed bytes of one datatype
  MPI_Count extent = 0;
  MPI_Count true_lb = 0;
  MPI_Count true_extent = 0;
  MPI_Count basic_size = 0;  // packed bytes of one basic element
  // A named predefined type (MPICH's "predefined" for MPI_Fetch_and_op and
  // MPI_Compare_and_swap: no derived type, duplicate or Fortran
  // parameterised type).
  bool named = false;
  // One datatype's memory is one block starting at offset 0 (a predefined
  // type, or a contiguous run of one): packing is a plain copy.
  bool dense = false;
  // Packed-order runs of one datatype; empty until runs() is asked.
  std::vector<ByteRun> runs;
  std::vector<MPI_Count> run_starts;  // packed position of each run
};

// The layout of `type`, or nullptr with `rc` set: MPI_ERR_TYPE when the type
// mixes predefined types or cannot be decoded.
DatatypeLayout* datatype_layout(MPI_Datatype type, int& rc);

// Fills layout.runs (once; thread-safe); MPI_SUCCESS or an MPI error code.
// Predefined types come with their runs.
int compute_runs(MPI_Datatype type, DatatypeLayout& layout);

// Appends to `out` the runs of packed bytes [first, first + bytes) of `count`
// consecutive datatypes described by `layout` (offsets from the buffer
// address), merging runs that touch.
void runs_of_stream(const DatatypeLayout& layout, MPI_Count first, MPI_Count bytes, std::vector<ByteRun>& out);

void free_datatype_layout_keyval();

}  // namespace shim::rma
