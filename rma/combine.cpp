#include "rma/combine.hpp"

#include <complex>
#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "common/element_type.hpp"
#include "common/local_comm.hpp"
#include "common/mpi_try.hpp"

namespace shim::rma {

namespace {

// Integer arithmetic wraps, as MPI reductions on integers do in practice;
// computed in the unsigned type so signed overflow is not undefined.
template <typename T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

template <typename T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    // Promote below int, so the product of two unsigned shorts cannot
    // overflow a signed int.
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}

// inout[i] = in[i] op inout[i] elementwise; false when op is not an
// arithmetic or bit op of this kernel family.
template <typename T>
bool apply_typed(MPI_Op op, const void* origin, void* target, MPI_Count count) {
  const T* in = static_cast<const T*>(origin);
  T* inout = static_cast<T*>(target);
  auto each = [&](auto f) {
    for (MPI_Count i = 0; i < count; ++i) inout[i] = f(in[i], inout[i]);
    return true;
  };
  if (op == MPI_SUM) return each([](T a, T b) { return wrap_add(a, b); });
  if (op == MPI_PROD) return each([](T a, T b) { return wrap_mul(a, b); });
  if constexpr (!std::is_same_v<T, std::complex<float>> && !std::is_same_v<T, std::complex<double>> &&
                !std::is_same_v<T, std::complex<long double>>) {
    // As MPICH orders the operands (target first), so unordered values
    // (NaN) and signed zeros come out alike.
    if (op == MPI_MAX) return each([](T in, T inout) { return inout > in ? inout : in; });
    if (op == MPI_MIN) return each([](T in, T inout) { return inout < in ? inout : in; });
    if constexpr (std::is_integral_v<T>) {
      if (op == MPI_LAND) return each([](T a, T b) { return static_cast<T>(a != 0 && b != 0); });
      if (op == MPI_LOR) return each([](T a, T b) { return static_cast<T>(a != 0 || b != 0); });
      if (op == MPI_LXOR) return each([](T a, T b) { return static_cast<T>((a != 0) != (b != 0)); });
      if (op == MPI_BAND) return each([](T a, T b) { return static_cast<T>(a & b); });
      if (op == MPI_BOR) return each([](T a, T b) { return static_cast<T>(a | b); });
      if (op == MPI_BXOR) return each([](T a, T b) { return static_cast<T>(a ^ b); });
    }
  }
  return false;
}

// shim's own kernels for every integer, floating-point and complex kind:
// MPICH 4.0.2's MPI_Reduce_local compares MPI_UNSIGNED as signed under
// MPI_MAX (4294967292 > 4 comes out false), so it is not trusted with them.
bool apply_kind(shim::ElementKind kind, MPI_Op op, const void* origin, void* target, MPI_Count count) {
  using shim::ElementKind;
  switch (kind) {
    case ElementKind::int8:
      return apply_typed<std::int8_t>(op, origin, target, count);
    case ElementKind::int16:
      return apply_typed<std::int16_t>(op, origin, target, count);
    case ElementKind::int32:
      return apply_typed<std::int32_t>(op, origin, target, count);
    case ElementKind::int64:
      return apply_typed<std::int64_t>(op, origin, target, count);
    case ElementKind::uint8:
      return apply_typed<std::uint8_t>(op, origin, target, count);
    case ElementKind::uint16:
      return apply_typed<std::uint16_t>(op, origin, target, count);
    case ElementKind::uint32:
      return apply_typed<std::uint32_t>(op, origin, target, count);
    case ElementKind::uint64:
      return apply_typed<std::uint64_t>(op, origin, target, count);
    case ElementKind::float32:
      return apply_typed<float>(op, origin, target, count);
    case ElementKind::float64:
      return apply_typed<double>(op, origin, target, count);
    case ElementKind::long_double:
      return apply_typed<long double>(op, origin, target, count);
    case ElementKind::complex_float32:
      return apply_typed<std::complex<float>>(op, origin, target, count);
    case ElementKind::complex_float64:
      return apply_typed<std::complex<double>>(op, origin, target, count);
    case ElementKind::complex_long_double:
      return apply_typed<std::complex<long double>>(op, origin, target, count);
  }
  return false;
}

// Logical types hold 0 for false and anything else for true.
template <typename T>
void apply_logical(MPI_Op op, const void* origin, void* target, MPI_Count count) {
  const T* in = static_cast<const T*>(origin);
  T* inout = static_cast<T*>(target);
  for (MPI_Count i = 0; i < count; ++i) {
    const bool a = in[i] != 0, b = inout[i] != 0;
    const bool r = op == MPI_LAND ? (a && b) : op == MPI_LOR ? (a || b) : (a != b);
    inout[i] = static_cast<T>(r);
  }
}

// What combine() needs of a predefined type, for the last type this thread
// used: updates come in runs of one type, and the table lookups would
// otherwise be repeated for every run. Predefined handles never change.
struct BasicFacts {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Count size = 0;
  std::optional<shim::ElementKind> kind;
  bool logical = false;
};

const BasicFacts& facts_of(MPI_Datatype basic) {
  thread_local BasicFacts last;
  if (last.type != basic) {
    last.type = basic;
    // `basic` came out of datatype_layout(), which asked MPI the same.
    static_cast<void>(PMPI_Type_size_c(basic, &last.size));
    last.kind = shim::element_kind_of(basic);
    // MPICH reduces MPI_CHAR as a signed char.
    if (basic == MPI_CHAR) last.kind = shim::ElementKind::int8;
    last.logical = basic == MPI_C_BOOL || basic == MPI_CXX_BOOL || basic == MPI_LOGICAL;
  }
  return last;
}

}  // namespace

int combine(MPI_Op op, MPI_Datatype basic, const void* origin, void* target, MPI_Count count) {
  if (count == 0 || op == MPI_NO_OP) return MPI_SUCCESS;
  const BasicFacts& facts = facts_of(basic);
  const MPI_Count size = facts.size;
  if (op == MPI_REPLACE) {
    std::memmove(target, origin, static_cast<std::size_t>(count * size));
    return MPI_SUCCESS;
  }
  // shim's kernels where they exist, MPICH's own (MPI_Reduce_local) for
  // everything else MPICH takes (op_acceptance.hpp has checked that it does).
  if (facts.kind && apply_kind(*facts.kind, op, origin, target, count)) return MPI_SUCCESS;
  const bool logical_op = op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR;
  if (facts.logical && logical_op && size == 1) {
    apply_logical<std::uint8_t>(op, origin, target, count);
    return MPI_SUCCESS;
  }
  if (facts.logical && logical_op && size == 4) {
    apply_logical<std::uint32_t>(op, origin, target, count);
    return MPI_SUCCESS;
  }
  if (basic == MPI_BYTE && apply_typed<std::uint8_t>(op, origin, target, count)) return MPI_SUCCESS;
  MPI_Count lb = 0, extent = 0;
  SHIM_TRY(PMPI_Type_get_extent_c(basic, &lb, &extent));
  if (extent == size) {
    return PMPI_Reduce_local_c(origin, target, count, basic, op) == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_OP;
  }
  // Pair types (MPI_DOUBLE_INT, ...) have padding in memory but not when
  // packed: reduce in their memory layout.
  const MPI_Count bytes = count * extent;
  std::vector<unsigned char> in(static_cast<std::size_t>(bytes)), inout(static_cast<std::size_t>(bytes));
  MPI_Count position = 0;
  SHIM_TRY(PMPI_Unpack_c(origin, count * size, &position, in.data(), count, basic, local_comm()));
  position = 0;
  SHIM_TRY(PMPI_Unpack_c(target, count * size, &position, inout.data(), count, basic, local_comm()));
  if (PMPI_Reduce_local_c(in.data(), inout.data(), count, basic, op) != MPI_SUCCESS) return MPI_ERR_OP;
  position = 0;
  return PMPI_Pack_c(inout.data(), count, basic, target, count * size, &position, local_comm());
}

void compare_and_swap(const void* origin, const void* compare, void* target, void* old, int bytes) {
  std::memcpy(old, target, static_cast<std::size_t>(bytes));
  if (std::memcmp(target, compare, static_cast<std::size_t>(bytes)) == 0) {
    std::memcpy(target, origin, static_cast<std::size_t>(bytes));
  }
}

}  // namespace shim::rma
