// Element values, computed in plain C++, independent of shim: small integers
// mapped linearly into each element type, so that every sum is predicted by
// a sum of long longs; what each node writes before a merge, and the merged
// sums; element-by-element comparison with them.
#pragma once

#include <mpi.h>

#include <complex>
#include <string>
#include <vector>

#include "tests/mpi/mirror/job.hpp"

namespace shim::test::mirror {

using shim::test::is_complex;
using shim::test::show;

// A linear map from integers to elements: make(a) + make(b) == make(a + b)
// and scalar(s) * make(a) == make(s * a) exactly (integers wrap modulo
// 2^bits, as C++20 conversions do; floating point holds these small integers
// exactly), so every sum is predicted by a sum of long longs.
template <typename T>
T make(long long v) {
  if constexpr (is_complex<T>::value) {
    using R = typename T::value_type;
    return T(static_cast<R>(v), static_cast<R>(-2 * v));
  } else {
    return static_cast<T>(v);
  }
}

// A scale factor: real, so that it commutes with make() for complex types.
template <typename T>
T scalar(long long s) {
  if constexpr (is_complex<T>::value) {
    return T(static_cast<typename T::value_type>(s), 0);
  } else {
    return static_cast<T>(s);
  }
}

// Element by element: got[k] is element first + k.
template <typename T, typename Want>
void expect_elements(const std::vector<T>& got, MPI_Count first, Want want, const std::string& where) {
  check->expect_elements(
      got.size(), [&](std::size_t k) { return got[k] == want(first + static_cast<MPI_Count>(k)); },
      [&](std::size_t k) {
        const MPI_Count i = first + static_cast<MPI_Count>(k);
        return "element " + str(i) + ": got " + show(got[k]) + ", expected " + show(want(i));
      },
      where);
}

// What node n writes at element i before a merge: negative values for the
// signed types, wrap-around in an unsigned char as soon as two nodes add.
inline long long node_value(int node, MPI_Count i) { return (node + 1) * 100LL - static_cast<long long>(i % 173); }
inline long long merged_value(int nodes, MPI_Count i) {
  long long sum = 0;
  for (int n = 0; n < nodes; ++n) sum += node_value(n, i);
  return sum;
}

}  // namespace shim::test::mirror
