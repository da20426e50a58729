#include "tests/mpi/accumulate/elements.hpp"

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tests/mpi/accumulate/job.hpp"

namespace shim::test::accumulate {
namespace {

template <typename V>
struct Pair {
  V v;
  int i;
};
template <typename T>
struct is_pair : std::false_type {};
template <typename V>
struct is_pair<Pair<V>> : std::true_type {};
using shim::test::is_complex;

long long floor_div(long long a, long long b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0); }

// Small integer "seeds" become elements: integers wrap as C++ conversions do,
// floating point holds them exactly, complex numbers get an imaginary part,
// booleans are the seed's parity, pairs are (seed / 64, seed mod 64).
template <typename T>
T make_value(long long s) {
  if constexpr (is_pair<T>::value) {
    T p{};
    const long long q = floor_div(s, 64);
    p.v = static_cast<decltype(p.v)>(q);
    p.i = static_cast<int>(s - q * 64);
    return p;
  } else if constexpr (is_complex<T>::value) {
    using R = typename T::value_type;
    return T(static_cast<R>(s), static_cast<R>(s % 2));
  } else if constexpr (std::is_same_v<T, bool>) {
    return s % 2 != 0;
  } else {
    return static_cast<T>(s);
  }
}

bool same_op(MPI_Op a, MPI_Op b) { return a == b; }

template <typename T>
T combine(MPI_Op op, T a, T b) {  // a: target, b: origin
  if (same_op(op, MPI_REPLACE)) return b;
  if (same_op(op, MPI_NO_OP)) return a;
  if constexpr (is_pair<T>::value) {
    if (same_op(op, MPI_MAXLOC)) {
      if (b.v > a.v) return b;
      if (b.v == a.v) a.i = std::min(a.i, b.i);
      return a;
    }
    if (same_op(op, MPI_MINLOC)) {
      if (b.v < a.v) return b;
      if (b.v == a.v) a.i = std::min(a.i, b.i);
      return a;
    }
  } else if constexpr (is_complex<T>::value) {
    if (same_op(op, MPI_SUM)) return a + b;
    if (same_op(op, MPI_PROD)) return a * b;
  } else if constexpr (std::is_same_v<T, bool>) {
    if (same_op(op, MPI_LAND)) return a && b;
    if (same_op(op, MPI_LOR)) return a || b;
    if (same_op(op, MPI_LXOR)) return a != b;
  } else {
    if (same_op(op, MPI_SUM)) return static_cast<T>(a + b);
    if (same_op(op, MPI_PROD)) return static_cast<T>(a * b);
    if (same_op(op, MPI_MAX)) return std::max(a, b);
    if (same_op(op, MPI_MIN)) return std::min(a, b);
    if constexpr (std::is_integral_v<T>) {
      if (same_op(op, MPI_LAND)) return static_cast<T>(a != 0 && b != 0);
      if (same_op(op, MPI_LOR)) return static_cast<T>(a != 0 || b != 0);
      if (same_op(op, MPI_LXOR)) return static_cast<T>((a != 0) != (b != 0));
      if (same_op(op, MPI_BAND)) return static_cast<T>(a & b);
      if (same_op(op, MPI_BOR)) return static_cast<T>(a | b);
      if (same_op(op, MPI_BXOR)) return static_cast<T>(a ^ b);
    }
  }
  test_bug("operation not defined for this type");
}

template <typename T>
void make_t(void* dst, long long seed) {
  const T v = make_value<T>(seed);
  std::memcpy(dst, &v, sizeof v);
}

// Bytes of a bool are compared and shown as bytes: a wrong value in the
// window need not be 0 or 1, and loading it as a bool is undefined.
template <typename T>
bool equal_t(const void* a, const void* b) {
  if constexpr (std::is_same_v<T, bool>) {
    return std::memcmp(a, b, 1) == 0;
  } else {
    T x, y;
    std::memcpy(&x, a, sizeof x);
    std::memcpy(&y, b, sizeof y);
    if constexpr (is_pair<T>::value) {
      return x.v == y.v && x.i == y.i;
    } else {
      return x == y;
    }
  }
}

template <typename T>
void apply_t(MPI_Op op, void* target, const void* origin) {
  T a, b;
  std::memcpy(&a, target, sizeof a);
  std::memcpy(&b, origin, sizeof b);
  a = combine<T>(op, a, b);
  std::memcpy(target, &a, sizeof a);
}

template <typename T>
std::string show_t(const void* p) {
  if constexpr (std::is_same_v<T, bool>) {
    return "byte " + str(*static_cast<const unsigned char*>(p));
  } else {
    T v;
    std::memcpy(&v, p, sizeof v);
    if constexpr (is_pair<T>::value) {
      return "(" + shim::test::show(v.v) + ", loc " + str(v.i) + ")";
    } else if constexpr (is_complex<T>::value) {
      return "(" + shim::test::show(v.real()) + "," + shim::test::show(v.imag()) + "i)";
    } else {
      return shim::test::show(v);
    }
  }
}

template <typename T>
TypeInfo type_info(const char* name, MPI_Datatype dt, unsigned category) {
  return {name, dt, sizeof(T), category, &make_t<T>, &apply_t<T>, &equal_t<T>, &show_t<T>};
}

std::vector<TypeInfo> types;

}  // namespace

const std::vector<TypeInfo>& all_types() { return types; }

const TypeInfo& type_named(const std::string& name) {
  for (const auto& t : types)
    if (name == t.name) return t;
  test_bug("no type " + name);
}

void make_types() {
  types = {
      type_info<int>("MPI_INT", MPI_INT, kInteger),
      type_info<long>("MPI_LONG", MPI_LONG, kInteger),
      type_info<short>("MPI_SHORT", MPI_SHORT, kInteger),
      type_info<unsigned>("MPI_UNSIGNED", MPI_UNSIGNED, kInteger),
      type_info<std::int64_t>("MPI_INT64_T", MPI_INT64_T, kInteger),
      type_info<std::uint8_t>("MPI_UINT8_T", MPI_UINT8_T, kInteger),
      type_info<float>("MPI_FLOAT", MPI_FLOAT, kFloating),
      type_info<double>("MPI_DOUBLE", MPI_DOUBLE, kFloating),
      type_info<long double>("MPI_LONG_DOUBLE", MPI_LONG_DOUBLE, kFloating),
      type_info<std::complex<double>>("MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, kComplex),
      type_info<bool>("MPI_C_BOOL", MPI_C_BOOL, kLogical),
      type_info<unsigned char>("MPI_BYTE", MPI_BYTE, kByte),
      type_info<char>("MPI_CHAR", MPI_CHAR, kChar),
      type_info<Pair<int>>("MPI_2INT", MPI_2INT, kPairType),
      type_info<Pair<double>>("MPI_DOUBLE_INT", MPI_DOUBLE_INT, kPairType),
      type_info<Pair<float>>("MPI_FLOAT_INT", MPI_FLOAT_INT, kPairType),
      type_info<Pair<long>>("MPI_LONG_INT", MPI_LONG_INT, kPairType),
      type_info<Pair<short>>("MPI_SHORT_INT", MPI_SHORT_INT, kPairType),
  };
  // The C++ stand-ins must have MPI's layout, or every check below is moot.
  for (const auto& t : types) {
    MPI_Aint lb = 0, extent = 0;
    PMPI_Type_get_extent(t.dt, &lb, &extent);
    if (lb != 0 || extent != static_cast<MPI_Aint>(t.size))
      test_bug(std::string(t.name) + ": MPI extent " + str(extent) + ", C++ size " + str(t.size));
  }
}

const std::vector<OpInfo>& all_ops() {
  static const std::vector<OpInfo> ops = {
      {"MPI_SUM", MPI_SUM, kInteger | kFloating | kComplex, true},
      {"MPI_PROD", MPI_PROD, kInteger | kFloating | kComplex, true},
      {"MPI_MAX", MPI_MAX, kInteger | kFloating, true},
      {"MPI_MIN", MPI_MIN, kInteger | kFloating, true},
      {"MPI_LAND", MPI_LAND, kInteger | kLogical, true},
      {"MPI_LOR", MPI_LOR, kInteger | kLogical, true},
      {"MPI_LXOR", MPI_LXOR, kInteger | kLogical, true},
      {"MPI_BAND", MPI_BAND, kInteger | kByte, true},
      {"MPI_BOR", MPI_BOR, kInteger | kByte, true},
      {"MPI_BXOR", MPI_BXOR, kInteger | kByte, true},
      {"MPI_MAXLOC", MPI_MAXLOC, kPairType, true},
      {"MPI_MINLOC", MPI_MINLOC, kPairType, true},
      {"MPI_REPLACE", MPI_REPLACE, kAll, false},
      {"MPI_NO_OP", MPI_NO_OP, kAll, false},
  };
  return ops;
}

const OpInfo& op_named(const std::string& name) {
  for (const auto& o : all_ops())
    if (name == o.name) return o;
  test_bug("no op " + name);
}

bool is(const OpInfo& o, MPI_Op op) { return same_op(o.op, op); }

long long init_seed(const OpInfo& op, int t, int e) {
  if (is(op, MPI_SUM)) return 3 * t + e - 4;
  if (is(op, MPI_PROD)) return 1 + (t + e) % 3;
  if (is(op, MPI_MAX) || is(op, MPI_MIN)) return (t * 5 + e * 3) % 9 - 4;
  if (is(op, MPI_LAND) || is(op, MPI_LOR) || is(op, MPI_LXOR)) return (t + e) % 3 == 0 ? 0 : 2 * e + 1;
  if (is(op, MPI_BAND) || is(op, MPI_BOR) || is(op, MPI_BXOR)) return t * 37 + e * 11 + 0x5A;
  if (is(op, MPI_MAXLOC) || is(op, MPI_MINLOC)) return (1 + t % 4) * 64 + 40 + e % 20;
  if (is(op, MPI_REPLACE)) return 100 + t * 10 + e;
  return 50 + t + e;
}

long long operand_seed(const OpInfo& op, int o, int t, int e) {
  static const long long factors[8] = {1, 2, -1, 3, 1, -1, 2, 1};
  if (is(op, MPI_SUM)) return o + 2 * e - 3 + t;
  if (is(op, MPI_PROD)) return factors[(o + e + 2 * t) % 8];
  if (is(op, MPI_MAX) || is(op, MPI_MIN)) return (o * 7 + e * 5 + t * 3) % 11 - 5;
  if (is(op, MPI_LAND) || is(op, MPI_LOR) || is(op, MPI_LXOR)) return (o + e + t) % 2 == 0 ? 0 : 2 * o + 3;
  if (is(op, MPI_BAND) || is(op, MPI_BOR) || is(op, MPI_BXOR)) return o * 29 + e * 13 + t * 7 + 0x33;
  if (is(op, MPI_MAXLOC) || is(op, MPI_MINLOC)) return (o % 3 + t % 4) * 64 + (o * 4 + e) % 40;
  if (is(op, MPI_REPLACE)) return o * 10 + e + 1 + t * 3;
  return 7;
}

bool mpich_6083(const OpInfo& op, const TypeInfo& t) {
  return (is(op, MPI_MAX) || is(op, MPI_MIN)) && (t.dt == MPI_UNSIGNED || t.dt == MPI_UINT8_T);
}

}  // namespace shim::test::accumulate
