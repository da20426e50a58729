#include "common/element_type.hpp"

#include <cstring>
#include <iterator>

namespace shim {

namespace {

enum class Family { signed_integer, unsigned_integer, real, complex };

struct Known {
  MPI_Datatype type;
  Family family;
};

// Sizes are asked from MPI rather than assumed, so MPI_INTEGER and friends
// map to whatever the Fortran compiler made them.
const Known kKnown[] = {
    {MPI_SIGNED_CHAR, Family::signed_integer},
    {MPI_SHORT, Family::signed_integer},
    {MPI_INT, Family::signed_integer},
    {MPI_LONG, Family::signed_integer},
    {MPI_LONG_LONG, Family::signed_integer},
    {MPI_INT8_T, Family::signed_integer},
    {MPI_INT16_T, Family::signed_integer},
    {MPI_INT32_T, Family::signed_integer},
    {MPI_INT64_T, Family::signed_integer},
    {MPI_AINT, Family::signed_integer},
    {MPI_OFFSET, Family::signed_integer},
    {MPI_COUNT, Family::signed_integer},
    {MPI_INTEGER, Family::signed_integer},
    {MPI_INTEGER1, Family::signed_integer},
    {MPI_INTEGER2, Family::signed_integer},
    {MPI_INTEGER4, Family::signed_integer},
    {MPI_INTEGER8, Family::signed_integer},
    {MPI_UNSIGNED_CHAR, Family::unsigned_integer},
    {MPI_UNSIGNED_SHORT, Family::unsigned_integer},
    {MPI_UNSIGNED, Family::unsigned_integer},
    {MPI_UNSIGNED_LONG, Family::unsigned_integer},
    {MPI_UNSIGNED_LONG_LONG, Family::unsigned_integer},
    {MPI_UINT8_T, Family::unsigned_integer},
    {MPI_UINT16_T, Family::unsigned_integer},
    {MPI_UINT32_T, Family::unsigned_integer},
    {MPI_UINT64_T, Family::unsigned_integer},
    {MPI_FLOAT, Family::real},
    {MPI_DOUBLE, Family::real},
    {MPI_LONG_DOUBLE, Family::real},
    {MPI_REAL, Family::real},
    {MPI_DOUBLE_PRECISION, Family::real},
    {MPI_REAL4, Family::real},
    {MPI_REAL8, Family::real},
    {MPI_CXX_FLOAT_COMPLEX, Family::complex},
    {MPI_C_FLOAT_COMPLEX, Family::complex},
    {MPI_C_DOUBLE_COMPLEX, Family::complex},
    {MPI_C_LONG_DOUBLE_COMPLEX, Family::complex},
    {MPI_CXX_DOUBLE_COMPLEX, Family::complex},
    {MPI_CXX_LONG_DOUBLE_COMPLEX, Family::complex},
    {MPI_COMPLEX, Family::complex},
    {MPI_DOUBLE_COMPLEX, Family::complex},
    {MPI_COMPLEX8, Family::complex},
    {MPI_COMPLEX16, Family::complex},
};

std::optional<ElementKind> kind_by_size(Family family, int size, bool long_double) {
  switch (family) {
    case Family::signed_integer:
      switch (size) {
        case 1:
          return ElementKind::int8;
        case 2:
          return ElementKind::int16;
        case 4:
          return ElementKind::int32;
        case 8:
          return ElementKind::int64;
      }
      break;
    case Family::unsigned_integer:
      switch (size) {
        case 1:
          return ElementKind::uint8;
        case 2:
          return ElementKind::uint16;
        case 4:
          return ElementKind::uint32;
        case 8:
          return ElementKind::uint64;
      }
      break;
    case Family::real:
      if (long_double && size == static_cast<int>(sizeof(long double))) return ElementKind::long_double;
      if (size == 4) return ElementKind::float32;
      if (size == 8) return ElementKind::float64;
      break;
    case Family::complex:
      if (long_double && size == static_cast<int>(2 * sizeof(long double))) return ElementKind::complex_long_double;
      if (size == 8) return ElementKind::complex_float32;
      if (size == 16) return ElementKind::complex_float64;
      break;
  }
  return std::nullopt;
}

}  // namespace

std::optional<ElementKind> element_kind_of(MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) return std::nullopt;
  for (const Known& known : kKnown) {
    if (known.type != type) continue;
    int size = 0;
    if (PMPI_Type_size(type, &size) != MPI_SUCCESS) return std::nullopt;
    const bool long_double =
        type == MPI_LONG_DOUBLE || type == MPI_C_LONG_DOUBLE_COMPLEX || type == MPI_CXX_LONG_DOUBLE_COMPLEX;
    return kind_by_size(known.family, size, long_double);
  }
  return std::nullopt;
}

std::string datatype_label(MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) return "MPI_DATATYPE_NULL";
  MPI_Count integers = 0, addresses = 0, counts = 0, types = 0;
  int combiner = 0;
  if (PMPI_Type_get_envelope_c(type, &integers, &addresses, &counts, &types, &combiner) == MPI_SUCCESS &&
      combiner == MPI_COMBINER_NAMED) {
    char name[MPI_MAX_OBJECT_NAME] = {};
    int length = 0;
    if (PMPI_Type_get_name(type, name, &length) == MPI_SUCCESS && length > 0) return name;
  }
  return "a derived datatype";
}

}  // namespace shim
