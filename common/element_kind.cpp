#include "common/element_kind.hpp"

#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace shim {

namespace {

template <typename T>
void add_scaled(void* dst_raw, const void* src_raw, const void* scale_raw, std::size_t n) {
  T* dst = static_cast<T*>(dst_raw);
  const T* src = static_cast<const T*>(src_raw);
  if constexpr (std::is_integral_v<T>) {
    // In unsigned arithmetic at least as wide as unsigned int, so narrow
    // types are not promoted to signed int: wraps instead of overflowing
    // (no UB), with the bits two's-complement signed arithmetic gives.
    using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
    const W scale = scale_raw ? static_cast<W>(*static_cast<const T*>(scale_raw)) : W{1};
    for (std::size_t i = 0; i < n; ++i)
      dst[i] = static_cast<T>(static_cast<W>(static_cast<W>(dst[i]) + scale * static_cast<W>(src[i])));
  } else if (scale_raw == nullptr) {
    for (std::size_t i = 0; i < n; ++i) dst[i] += src[i];
  } else {
    const T scale = *static_cast<const T*>(scale_raw);
    for (std::size_t i = 0; i < n; ++i) dst[i] += scale * src[i];
  }
}

template <typename Visit>
auto with_type(ElementKind kind, Visit visit) {
  switch (kind) {
    case ElementKind::int8:
      return visit(std::int8_t{});
    case ElementKind::int16:
      return visit(std::int16_t{});
    case ElementKind::int32:
      return visit(std::int32_t{});
    case ElementKind::int64:
      return visit(std::int64_t{});
    case ElementKind::uint8:
      return visit(std::uint8_t{});
    case ElementKind::uint16:
      return visit(std::uint16_t{});
    case ElementKind::uint32:
      return visit(std::uint32_t{});
    case ElementKind::uint64:
      return visit(std::uint64_t{});
    case ElementKind::float32:
      return visit(float{});
    case ElementKind::float64:
      return visit(double{});
    case ElementKind::long_double:
      return visit(static_cast<long double>(0));
    case ElementKind::complex_float32:
      return visit(std::complex<float>{});
    case ElementKind::complex_float64:
      return visit(std::complex<double>{});
    case ElementKind::complex_long_double:
      return visit(std::complex<long double>{});
  }
  return visit(std::int8_t{});
}

}  // namespace

std::size_t element_size(ElementKind kind) {
  return with_type(kind, [](auto value) { return sizeof(value); });
}

std::string_view element_name(ElementKind kind) {
  constexpr std::string_view names[] = {
      "int8",   "int16",   "int32",   "int64",       "uint8",           "uint16",          "uint32",
      "uint64", "float32", "float64", "long double", "complex float32", "complex float64", "complex long double"};
  return names[static_cast<int>(kind)];
}

void scaled_add(ElementKind kind, void* dst, const void* src, const void* scale, std::size_t n) {
  with_type(kind, [&](auto value) { add_scaled<decltype(value)>(dst, src, scale, n); });
}

bool all_zero_bytes(const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  // Word-sized steps where the data is aligned for them; bytes elsewhere.
  std::size_t i = 0;
  for (; i < bytes && reinterpret_cast<std::uintptr_t>(p + i) % sizeof(std::uint64_t) != 0; ++i)
    if (p[i] != 0) return false;
  for (; i + sizeof(std::uint64_t) <= bytes; i += sizeof(std::uint64_t)) {
    std::uint64_t word;
    std::memcpy(&word, p + i, sizeof word);
    if (word != 0) return false;
  }
  for (; i < bytes; ++i)
    if (p[i] != 0) return false;
  return true;
}

}  // namespace shim
