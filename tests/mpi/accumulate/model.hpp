// The model of a window: its bytes as the test expects them, built from the
// seeds with the oracle's arithmetic (elements.hpp) and updated by replaying
// planned operations; which byte is which element of which block, and the
// guard bytes around the blocks, which no operation may touch.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "tests/mpi/accumulate/elements.hpp"
#include "tests/mpi/accumulate/job.hpp"
#include "tests/mpi/accumulate/operations.hpp"

namespace shim::test::accumulate {

// What window byte i of target t holds outside every element.
unsigned char guard_byte(int t, MPI_Aint i);

struct Model {
  struct Element {
    const TypeInfo* type;
    int label;        // into labels
    int position;     // within its block
    bool mpich_6083;  // MPICH 4.0.2 computes this one wrong (see compare_memory)
  };
  std::vector<unsigned char> bytes;
  std::vector<int> element_at;  // index into elements at an element's first byte, else -1
  std::vector<unsigned char> covered;
  std::vector<Element> elements;
  std::vector<MPI_Aint> element_offset;
  std::vector<std::string> labels;

  void reset(MPI_Aint size, int t) {
    bytes.resize(static_cast<std::size_t>(size));
    for (MPI_Aint i = 0; i < size; ++i) bytes[static_cast<std::size_t>(i)] = guard_byte(t, i);
    element_at.assign(static_cast<std::size_t>(size), -1);
    covered.assign(static_cast<std::size_t>(size), 0);
    elements.clear();
    element_offset.clear();
    labels.clear();
  }
  int label(const std::string& s) {
    labels.push_back(s);
    return static_cast<int>(labels.size()) - 1;
  }
  void define(MPI_Aint off, const TypeInfo& t, long long seed, int label_index, int position, bool mpich_6083) {
    if (off < 0 || off + static_cast<MPI_Aint>(t.size) > static_cast<MPI_Aint>(bytes.size()))
      test_bug("element outside the window");
    for (std::size_t b = 0; b < t.size; ++b) {
      if (covered[static_cast<std::size_t>(off) + b]) test_bug("overlapping elements in " + labels[label_index]);
      covered[static_cast<std::size_t>(off) + b] = 1;
    }
    element_at[static_cast<std::size_t>(off)] = static_cast<int>(elements.size());
    elements.push_back({&t, label_index, position, mpich_6083});
    element_offset.push_back(off);
    t.make(&bytes[static_cast<std::size_t>(off)], seed);
  }
  // A block of n elements of one type at `off`, seeds from seed(position).
  template <typename Seed>
  void block(MPI_Aint off, const TypeInfo& t, int n, const std::string& what, Seed seed, bool mpich_6083 = false) {
    const int l = label(what);
    for (int k = 0; k < n; ++k) define(off + k * static_cast<MPI_Aint>(t.size), t, seed(k), l, k, mpich_6083);
  }
  bool mpich_6083_at(MPI_Aint off) const {
    const int e = element_at[static_cast<std::size_t>(off)];
    return e >= 0 && elements[static_cast<std::size_t>(e)].mpich_6083;
  }
  unsigned char* at(MPI_Aint off) { return &bytes[static_cast<std::size_t>(off)]; }
  std::string where(MPI_Aint off) const {
    const int e = element_at[static_cast<std::size_t>(off)];
    if (e < 0) return "guard byte " + str(off);
    const auto& el = elements[static_cast<std::size_t>(e)];
    return labels[static_cast<std::size_t>(el.label)] + " element " + str(el.position) + " (window byte " + str(off) +
           ")";
  }
};

// Applies one operation to a model; the old values of the target elements
// go to `old` (each element's bytes) when asked for.
void apply_op(Model& m, const RmaOp& op, std::vector<std::vector<unsigned char>>* old);

extern const char* const kMpich6083;

// Reported once per program: a wrong value on a window whose operations
// MPICH performs itself, where MPICH 4.0.2 is known to be wrong.
void known_mpich_defect(const std::string& defect, const std::string& text);

// Compares memory with a model: typed elements by value, guard bytes by byte.
// With `excuse_6083`, the window's operations are MPICH's own and elements
// MPICH is known to get wrong are reported, not failed.
void compare_memory(const unsigned char* mem, const Model& m, const std::string& where, bool excuse_6083);

}  // namespace shim::test::accumulate
