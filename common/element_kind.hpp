// The element types a mirrored window can hold: those MPI_SUM is defined on
// (merge sums copies) and that have a multiplication (accumulate scales).
// Kernels work on raw memory so the MPI side only maps a datatype to a kind.
#pragma once

#include <cstddef>
#include <string_view>

namespace shim {

enum class ElementKind {
  int8,
  int16,
  int32,
  int64,
  uint8,
  uint16,
  uint32,
  uint64,
  float32,
  float64,
  long_double,
  complex_float32,
  complex_float64,
  complex_long_double,
};

std::size_t element_size(ElementKind kind);
std::string_view element_name(ElementKind kind);

// dst[i] += scale * src[i] for i < n, in the arithmetic of `kind`; scale
// points to one element of the kind, nullptr meaning 1 (a plain sum).
// Integer arithmetic wraps, as MPI_SUM on integers does in practice.
void scaled_add(ElementKind kind, void* dst, const void* src, const void* scale, std::size_t n);

// Whether every byte of [data, data + bytes) is zero: such a block adds
// nothing to a sum, whatever the element type.
bool all_zero_bytes(const void* data, std::size_t bytes);

}  // namespace shim
