#include "tests/mpi/accumulate/operations.hpp"

#include "tests/mpi/accumulate/job.hpp"

namespace shim::test::accumulate {

const char* fn_name(Fn f) {
  switch (f) {
    case Fn::Acc:
      return "MPI_Accumulate";
    case Fn::AccC:
      return "MPI_Accumulate_c";
    case Fn::RAcc:
      return "MPI_Raccumulate";
    case Fn::RAccC:
      return "MPI_Raccumulate_c";
    case Fn::GAcc:
      return "MPI_Get_accumulate";
    case Fn::GAccC:
      return "MPI_Get_accumulate_c";
    case Fn::RGAcc:
      return "MPI_Rget_accumulate";
    case Fn::RGAccC:
      return "MPI_Rget_accumulate_c";
    case Fn::Fop:
      return "MPI_Fetch_and_op";
    case Fn::Cas:
      return "MPI_Compare_and_swap";
  }
  return "?";
}
bool has_result(Fn f) { return f != Fn::Acc && f != Fn::AccC && f != Fn::RAcc && f != Fn::RAccC; }
bool is_request(Fn f) { return f == Fn::RAcc || f == Fn::RAccC || f == Fn::RGAcc || f == Fn::RGAccC; }

Fn acc_fn(int variant, bool passive) {
  static const Fn fns[4] = {Fn::Acc, Fn::AccC, Fn::RAcc, Fn::RAccC};
  return fns[passive ? variant % 4 : variant % 2];
}
Fn gacc_fn(int variant, bool passive) {
  static const Fn fns[4] = {Fn::GAcc, Fn::GAccC, Fn::RGAcc, Fn::RGAccC};
  return fns[passive ? variant % 4 : variant % 2];
}

std::string describe(const RmaOp& op) {
  std::string s = std::string(fn_name(op.fn)) + " " + (op.op ? op.op->name : "") + " " + op.type->name;
  if (op.fn != Fn::Fop && op.fn != Fn::Cas) {
    s += " origin " + str(op.ocount) + " x " + op.olay->name + ", target " + str(op.tcount) + " x " + op.tlay->name;
    if (has_result(op.fn)) s += ", result " + str(op.rcount) + " x " + op.rlay->name;
  }
  if (op.proc_null) s += " to MPI_PROC_NULL";
  if (!op.what.empty()) s += " [" + op.what + "]";
  return s;
}

RmaOp single(Fn fn, const OpInfo* op, const TypeInfo& t, MPI_Aint tbyte, long long seed, const std::string& what) {
  RmaOp r;
  r.fn = fn;
  r.op = op;
  r.type = &t;
  const Layout& basic = layout(t, Shape::Basic);
  r.olay = r.tlay = r.rlay = &basic;
  r.ocount = r.tcount = r.rcount = 1;
  r.tbyte = tbyte;
  r.seeds = {seed};
  r.what = what;
  return r;
}

RmaOp typed(Fn fn, const OpInfo& op, const TypeInfo& t, Shape o, MPI_Count oc, Shape tg, MPI_Count tc, MPI_Aint tbyte,
            Shape res, MPI_Count rc, const std::string& what) {
  RmaOp r;
  r.fn = fn;
  r.op = &op;
  r.type = &t;
  r.olay = &layout(t, o);
  r.ocount = oc;
  r.tlay = &layout(t, tg);
  r.tcount = tc;
  r.tbyte = tbyte;
  r.rlay = &layout(t, res);
  r.rcount = rc;
  r.what = what;
  const std::size_t n = r.olay->offsets.size() * static_cast<std::size_t>(oc);
  if (n != r.tlay->offsets.size() * static_cast<std::size_t>(tc) ||
      (has_result(fn) && n != r.rlay->offsets.size() * static_cast<std::size_t>(rc)))
    test_bug("element counts differ in " + describe(r));
  return r;
}

}  // namespace shim::test::accumulate
