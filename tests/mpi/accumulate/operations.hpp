// One call of the accumulate family as the test plans it: which function,
// operation and element type, the origin, target and result datatypes and
// counts, where in the target's window, and the seeds of its operands.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "tests/mpi/accumulate/datatypes.hpp"
#include "tests/mpi/accumulate/elements.hpp"

namespace shim::test::accumulate {

enum class Fn { Acc, AccC, RAcc, RAccC, GAcc, GAccC, RGAcc, RGAccC, Fop, Cas };

const char* fn_name(Fn f);
bool has_result(Fn f);
bool is_request(Fn f);

// The accumulate (or get-accumulate) flavour `variant` picks. Request-based
// operations exist only in passive-target epochs.
Fn acc_fn(int variant, bool passive);
Fn gacc_fn(int variant, bool passive);

struct RmaOp {
  Fn fn = Fn::Acc;
  const OpInfo* op = nullptr;  // none for MPI_Compare_and_swap
  const TypeInfo* type = nullptr;
  const Layout* olay = nullptr;
  MPI_Count ocount = 0;
  const Layout* tlay = nullptr;
  MPI_Count tcount = 0;
  MPI_Aint tbyte = 0;  // in the target's window
  const Layout* rlay = nullptr;
  MPI_Count rcount = 0;
  std::vector<long long> seeds;  // origin elements
  long long compare_seed = 0;
  bool proc_null = false;
  bool exclusive = true;  // no other origin touches these elements
  std::string what;
};

std::string describe(const RmaOp& op);

// Element, fetch and compare-and-swap operations on one element.
RmaOp single(Fn fn, const OpInfo* op, const TypeInfo& t, MPI_Aint tbyte, long long seed, const std::string& what);
// Operations with datatypes and counts on each side (the seeds are the caller's).
RmaOp typed(Fn fn, const OpInfo& op, const TypeInfo& t, Shape o, MPI_Count oc, Shape tg, MPI_Count tc, MPI_Aint tbyte,
            Shape res, MPI_Count rc, const std::string& what);

}  // namespace shim::test::accumulate
