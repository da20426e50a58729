// The oracle's arithmetic: every element type and predefined operation of
// the accumulate family, computed in plain C++ (never with MPI), and the
// small integer "seeds" elements are made from.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>
#include <vector>

namespace shim::test::accumulate {

enum Category : unsigned {
  kInteger = 1,
  kFloating = 2,
  kComplex = 4,
  kLogical = 8,
  kByte = 16,
  kChar = 32,
  kPairType = 64,
  kAll = 127
};

// An element type, through functions on its bytes: make an element from a
// seed, apply an operation (target = target op origin), compare, show.
struct TypeInfo {
  const char* name;
  MPI_Datatype dt;
  std::size_t size;
  unsigned category;
  void (*make)(void*, long long);
  void (*apply)(MPI_Op, void*, const void*);
  bool (*equal)(const void*, const void*);
  std::string (*show)(const void*);
};

// Builds the table, and checks each C++ stand-in has its MPI type's layout.
void make_types();
const std::vector<TypeInfo>& all_types();
const TypeInfo& type_named(const std::string& name);

struct OpInfo {
  const char* name;
  MPI_Op op;
  unsigned categories;  // the element types MPI allows it for
  bool reorderable;     // results do not depend on the order origins arrive in
};

const std::vector<OpInfo>& all_ops();
const OpInfo& op_named(const std::string& name);
bool is(const OpInfo& o, MPI_Op op);

// Seeds per operation, chosen so that every result is exact and every case is
// interesting: sums of small signed values, products of 1, 2, 3 and -1,
// maxima that some origins win and some lose, zero and non-zero logical
// values, varied bit patterns, MAXLOC/MINLOC values that tie (the lower
// location must win). `e` is small (an element's position plus its block).
long long init_seed(const OpInfo& op, int t, int e);
long long operand_seed(const OpInfo& op, int o, int t, int e);

// MPICH 4.0.2 compares unsigned integers as signed in MPI_MAX and MPI_MIN
// (pmodels/mpich#6083, fixed after 4.0.2); the seeds above tell the two apart.
bool mpich_6083(const OpInfo& op, const TypeInfo& t);

}  // namespace shim::test::accumulate
