#include "rma/combine.hpp"

#include <complex>
#include <cstdint>
#include <cstring>
#include <vector>

#include "mirror/element_type.hpp"

namespace shim::rma {

namespace {

template <typename T>
void add(const void* origin, void* target, MPI_Count count) {
  const T* in = static_cast<const T*>(origin);
  T* inout = static_cast<T*>(target);
  for (MPI_Count i = 0; i < count; ++i) inout[i] = static_cast<T>(inout[i] + in[i]);
}

// MPI_SUM on the types accumulates are usually made of, without a trip
// through MPI_Reduce_local; false for everything else.
bool fast_sum(MPI_Datatype basic, const void* origin, void* target, MPI_Count count) {
  if (basic == MPI_DOUBLE) add<double>(origin, target, count);
  else if (basic == MPI_FLOAT) add<float>(origin, target, count);
  else if (basic == MPI_INT || basic == MPI_INT32_T) add<std::int32_t>(origin, target, count);
  else if (basic == MPI_LONG || basic == MPI_INT64_T || basic == MPI_LONG_LONG) add<std::int64_t>(origin, target, count);
  else if (basic == MPI_UNSIGNED || basic == MPI_UINT32_T) add<std::uint32_t>(origin, target, count);
  else if (basic == MPI_UNSIGNED_LONG || basic == MPI_UINT64_T) add<std::uint64_t>(origin, target, count);
  else return false;
  return true;
}

enum class Category { integer, real, complex, logical, byte, pair, other };

Category category_of(MPI_Datatype basic) {
  using mirror::ElementKind;
  if (const auto kind = mirror::element_kind_of(basic)) {
    switch (*kind) {
      case ElementKind::float32: case ElementKind::float64: case ElementKind::long_double: return Category::real;
      case ElementKind::complex_float32: case ElementKind::complex_float64: case ElementKind::complex_long_double:
        return Category::complex;
      default: return Category::integer;
    }
  }
  if (basic == MPI_C_BOOL || basic == MPI_CXX_BOOL || basic == MPI_LOGICAL) return Category::logical;
  if (basic == MPI_BYTE) return Category::byte;
  if (basic == MPI_2INT || basic == MPI_FLOAT_INT || basic == MPI_DOUBLE_INT || basic == MPI_LONG_INT ||
      basic == MPI_SHORT_INT || basic == MPI_LONG_DOUBLE_INT || basic == MPI_2REAL ||
      basic == MPI_2DOUBLE_PRECISION || basic == MPI_2INTEGER) {
    return Category::pair;
  }
  return Category::other;
}

// MPI's table of which predefined op applies to which type category;
// checked here because MPI_Reduce_local would report a mismatch on a
// communicator's handler (fatal by default) instead of the window's.
bool op_defined(MPI_Op op, Category category) {
  if (op == MPI_REPLACE || op == MPI_NO_OP) return true;
  if (op == MPI_MAXLOC || op == MPI_MINLOC) return category == Category::pair;
  if (op == MPI_MAX || op == MPI_MIN) return category == Category::integer || category == Category::real;
  if (op == MPI_SUM || op == MPI_PROD) {
    return category == Category::integer || category == Category::real || category == Category::complex;
  }
  if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR) {
    return category == Category::integer || category == Category::logical;
  }
  if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR) {
    return category == Category::integer || category == Category::byte;
  }
  return false;
}

}  // namespace

bool op_defined_on(MPI_Op op, MPI_Datatype basic) { return op_defined(op, category_of(basic)); }

bool accumulate_op(MPI_Op op) {
  return op == MPI_SUM || op == MPI_PROD || op == MPI_MAX || op == MPI_MIN || op == MPI_LAND || op == MPI_LOR ||
         op == MPI_LXOR || op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR || op == MPI_MAXLOC ||
         op == MPI_MINLOC || op == MPI_REPLACE || op == MPI_NO_OP;
}

int combine(MPI_Op op, MPI_Datatype basic, const void* origin, void* target, MPI_Count count) {
  if (count == 0 || op == MPI_NO_OP) return MPI_SUCCESS;
  MPI_Count size = 0;
  PMPI_Type_size_c(basic, &size);
  if (op == MPI_REPLACE) {
    std::memmove(target, origin, static_cast<std::size_t>(count * size));
    return MPI_SUCCESS;
  }
  if (op == MPI_SUM && fast_sum(basic, origin, target, count)) return MPI_SUCCESS;
  if (!op_defined_on(op, basic)) return MPI_ERR_OP;
  MPI_Count lb = 0, extent = 0;
  PMPI_Type_get_extent_c(basic, &lb, &extent);
  if (extent == size) {
    return PMPI_Reduce_local_c(origin, target, count, basic, op) == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_OP;
  }
  // Pair types (MPI_DOUBLE_INT, ...) have padding in memory but not when
  // packed: reduce in their memory layout.
  const MPI_Count bytes = count * extent;
  std::vector<unsigned char> in(static_cast<std::size_t>(bytes)), inout(static_cast<std::size_t>(bytes));
  MPI_Count position = 0;
  PMPI_Unpack_c(origin, count * size, &position, in.data(), count, basic, MPI_COMM_SELF);
  position = 0;
  PMPI_Unpack_c(target, count * size, &position, inout.data(), count, basic, MPI_COMM_SELF);
  if (PMPI_Reduce_local_c(in.data(), inout.data(), count, basic, op) != MPI_SUCCESS) return MPI_ERR_OP;
  position = 0;
  PMPI_Pack_c(inout.data(), count, basic, target, count * size, &position, MPI_COMM_SELF);
  return MPI_SUCCESS;
}

void compare_and_swap(const void* origin, const void* compare, void* target, void* old, int bytes) {
  std::memcpy(old, target, static_cast<std::size_t>(bytes));
  if (std::memcmp(target, compare, static_cast<std::size_t>(bytes)) == 0) {
    std::memcpy(target, origin, static_cast<std::size_t>(bytes));
  }
}

}  // namespace shim::rma
