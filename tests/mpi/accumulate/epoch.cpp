#include "tests/mpi/accumulate/epoch.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace shim::test::accumulate {

const char* sync_name(Sync s) {
  switch (s) {
    case Sync::Fence:
      return "fence";
    case Sync::Pscw:
      return "post/start/complete/wait";
    case Sync::LockShared:
      return "lock shared";
    case Sync::LockExclusive:
      return "lock exclusive";
    case Sync::LockAll:
      return "lock_all";
    case Sync::Flush:
      return "lock_all + flush";
    case Sync::FlushLocal:
      return "lock_all + flush_local";
    case Sync::WinSync:
      return "lock_all + flush_all + MPI_Win_sync";
  }
  return "?";
}
bool passive(Sync s) { return s != Sync::Fence && s != Sync::Pscw; }

namespace {

constexpr std::size_t kMargin = 32;
constexpr unsigned char kOriginFill = 0xA5;
constexpr unsigned char kResultFill = 0xC3;
constexpr unsigned char kScribble = 0x5A;

}  // namespace

Epoch::Epoch(Window& w, const Case& k, Sync sync, int variant_base)
    : w_(w),
      k_(k),
      sync_(sync),
      variant_base_(variant_base),
      c_(*w.c),
      excuse_6083_(w.reported != "owner" && w.reported != "caller") {
  where_ = w.label + ", " + k.name + ", " + sync_name(sync);
  models_.resize(static_cast<std::size_t>(c_.size));
  for (int t = 0; t < c_.size; ++t)
    init_model(k_, models_[static_cast<std::size_t>(t)], w_.sizes[static_cast<std::size_t>(t)], t);
}

std::vector<int> Epoch::targets() const {
  std::vector<int> out;
  for (int k = 0; k < c_.size; ++k) out.push_back((c_.rank + k) % c_.size);
  return out;
}

std::string Epoch::target_where(int t) const {
  return where_ + ", origin " + str(c_.rank) + " -> target " + str(t) + " (" +
         class_name(target_class(world_rank, c_.world[static_cast<std::size_t>(t)])) + ")";
}

void Epoch::initialise_memory() {
  const Model& mine = models_[static_cast<std::size_t>(c_.rank)];
  sync_ok(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, c_.rank, 0, w_.win), where_ + ": initial MPI_Win_lock");
  if (!mine.bytes.empty()) std::memcpy(w_.base, mine.bytes.data(), mine.bytes.size());
  sync_ok(MPI_Win_unlock(c_.rank, w_.win), where_ + ": initial MPI_Win_unlock");
  PMPI_Barrier(c_.comm);
}

void Epoch::issue_all(int t) {
  for (RmaOp& op : plan_of(k_, c_.rank, t, variant_base_, passive(sync_))) issue(std::move(op), t);
}

void Epoch::issue(RmaOp op, int t) {
  issued_.emplace_back();
  Issued& x = issued_.back();
  x.op = std::move(op);
  x.target = t;
  const RmaOp& r = x.op;
  const std::size_t s = r.type->size;
  // Origin buffer: elements where the origin datatype puts them.
  x.obuf.assign(static_cast<std::size_t>(span_bytes(*r.olay, r.ocount, s)) + 2 * kMargin, kOriginFill);
  const auto ooffs = element_offsets(*r.olay, r.ocount);
  for (std::size_t k = 0; k < ooffs.size(); ++k)
    r.type->make(&x.obuf[kMargin + static_cast<std::size_t>(ooffs[k])], r.seeds[k]);
  if (r.fn == Fn::Cas) {
    x.cbuf.assign(s + 2 * kMargin, kOriginFill);
    r.type->make(&x.cbuf[kMargin], r.compare_seed);
  }
  if (has_result(r.fn))
    x.rbuf.assign(static_cast<std::size_t>(span_bytes(*r.rlay, r.rcount, s)) + 2 * kMargin, kResultFill);
  // The origin's own model of the target gives the old values.
  apply_op(models_[static_cast<std::size_t>(t)], r, has_result(r.fn) ? &x.expected_old : nullptr);

  const int du = w_.disp_units[static_cast<std::size_t>(t)];
  if (r.tbyte % du != 0) test_bug("displacement not a multiple of the disp_unit");
  const MPI_Aint disp = r.tbyte / du;
  const int rank = r.proc_null ? MPI_PROC_NULL : t;
  const void* o = &x.obuf[kMargin];
  void* res = has_result(r.fn) ? &x.rbuf[kMargin] : nullptr;
  const int oc = static_cast<int>(r.ocount), tc = static_cast<int>(r.tcount), rc = static_cast<int>(r.rcount);
  MPI_Op mop = r.op ? r.op->op : MPI_OP_NULL;
  int code = MPI_SUCCESS;
  switch (r.fn) {
    case Fn::Acc:
      code = MPI_Accumulate(o, oc, r.olay->dt, rank, disp, tc, r.tlay->dt, mop, w_.win);
      break;
    case Fn::AccC:
      code = MPI_Accumulate_c(o, r.ocount, r.olay->dt, rank, disp, r.tcount, r.tlay->dt, mop, w_.win);
      break;
    case Fn::RAcc:
      code = MPI_Raccumulate(o, oc, r.olay->dt, rank, disp, tc, r.tlay->dt, mop, w_.win, &x.request);
      break;
    case Fn::RAccC:
      code = MPI_Raccumulate_c(o, r.ocount, r.olay->dt, rank, disp, r.tcount, r.tlay->dt, mop, w_.win, &x.request);
      break;
    case Fn::GAcc:
      code = MPI_Get_accumulate(o, oc, r.olay->dt, res, rc, r.rlay->dt, rank, disp, tc, r.tlay->dt, mop, w_.win);
      break;
    case Fn::GAccC:
      code = MPI_Get_accumulate_c(o, r.ocount, r.olay->dt, res, r.rcount, r.rlay->dt, rank, disp, r.tcount, r.tlay->dt,
                                  mop, w_.win);
      break;
    case Fn::RGAcc:
      code = MPI_Rget_accumulate(o, oc, r.olay->dt, res, rc, r.rlay->dt, rank, disp, tc, r.tlay->dt, mop, w_.win,
                                 &x.request);
      break;
    case Fn::RGAccC:
      code = MPI_Rget_accumulate_c(o, r.ocount, r.olay->dt, res, r.rcount, r.rlay->dt, rank, disp, r.tcount, r.tlay->dt,
                                   mop, w_.win, &x.request);
      break;
    case Fn::Fop:
      code = MPI_Fetch_and_op(o, res, r.type->dt, rank, disp, mop, w_.win);
      break;
    case Fn::Cas:
      code = MPI_Compare_and_swap(o, &x.cbuf[kMargin], res, r.type->dt, rank, disp, w_.win);
      break;
  }
  ok(code, target_where(t) + ": " + describe(r));
  if (!r.proc_null) ++stats.ops[target_class(world_rank, c_.world[static_cast<std::size_t>(t)])];
}

void Epoch::wait_requests(int t) {
  for (Issued& x : issued_) {
    if (x.target != t || !is_request(x.op.fn)) continue;
    if (x.request == MPI_REQUEST_NULL) {
      check->fail(target_where(t) + ": " + describe(x.op) + " gave MPI_REQUEST_NULL");
      continue;
    }
    ok(MPI_Wait(&x.request, MPI_STATUS_IGNORE), target_where(t) + ": MPI_Wait on " + describe(x.op));
    check_result(x);
    std::fill(x.obuf.begin(), x.obuf.end(), kScribble);
  }
}

void Epoch::check_results(int t) {
  for (Issued& x : issued_)
    if (x.target == t) check_result(x);
}

void Epoch::check_results_all() {
  for (Issued& x : issued_) check_result(x);
}

void Epoch::check_result(Issued& x) {
  if (x.results_checked) return;
  x.results_checked = true;
  if (!has_result(x.op.fn)) return;
  const RmaOp& r = x.op;
  const std::string where = target_where(x.target) + ": result of " + describe(r);
  std::vector<unsigned char> want = std::vector<unsigned char>(x.rbuf.size(), kResultFill);
  std::vector<unsigned char> is_element(x.rbuf.size(), 0);
  const auto roffs = element_offsets(*r.rlay, r.rcount);
  if (!r.proc_null) {
    if (roffs.size() != x.expected_old.size()) test_bug("result size mismatch in " + describe(r));
    for (std::size_t k = 0; k < roffs.size(); ++k) {
      const std::size_t at = kMargin + static_cast<std::size_t>(roffs[k]);
      std::memcpy(&want[at], x.expected_old[k].data(), r.type->size);
      std::fill(is_element.begin() + static_cast<long>(at), is_element.begin() + static_cast<long>(at + r.type->size),
                1);
    }
    auto at = [&](std::size_t k) { return kMargin + static_cast<std::size_t>(roffs[k]); };
    const long differ = check->expect_elements(
        roffs.size(), [&](std::size_t k) { return r.type->equal(&x.rbuf[at(k)], &want[at(k)]); },
        [&](std::size_t k) {
          return "element " + str(static_cast<long long>(k)) + ": got " + r.type->show(&x.rbuf[at(k)]) +
                 ", expected (the old target value) " + r.type->show(&want[at(k)]);
        },
        where);
    stats.results += static_cast<long>(roffs.size()) - differ;
  }
  long bad = 0;
  std::size_t first = 0;
  for (std::size_t i = 0; i < x.rbuf.size(); ++i)
    if (!is_element[i] && x.rbuf[i] != kResultFill && bad++ == 0) first = i;
  check->expect(bad == 0, where + ": " + str(bad) +
                              " bytes of the result buffer outside its elements changed (first at " +
                              str(static_cast<long long>(first) - static_cast<long long>(kMargin)) + ")");
}

void Epoch::scribble(int t) {
  for (Issued& x : issued_)
    if (x.target == t) {
      std::fill(x.obuf.begin(), x.obuf.end(), kScribble);
      std::fill(x.cbuf.begin(), x.cbuf.end(), kScribble);
    }
}

void Epoch::get_back(int t) {
  struct Read {
    const Issued* x;
    std::vector<unsigned char> buf;
  };
  std::vector<Read> reads;
  const int du = w_.disp_units[static_cast<std::size_t>(t)];
  for (const Issued& x : issued_) {
    if (x.target != t || !x.op.exclusive || x.op.proc_null || x.op.tcount == 0) continue;
    const RmaOp& r = x.op;
    reads.push_back(
        {&x, std::vector<unsigned char>(static_cast<std::size_t>(span_bytes(*r.tlay, r.tcount, r.type->size)))});
    ok(MPI_Get(reads.back().buf.data(), static_cast<int>(r.tcount), r.tlay->dt, t, r.tbyte / du,
               static_cast<int>(r.tcount), r.tlay->dt, w_.win),
       target_where(t) + ": MPI_Get after flush");
  }
  sync_ok(MPI_Win_flush(t, w_.win), where_ + ": MPI_Win_flush after MPI_Get");
  const Model& m = models_[static_cast<std::size_t>(t)];
  for (const Read& rd : reads) {
    const RmaOp& r = rd.x->op;
    const auto offs = element_offsets(*r.tlay, r.tcount);
    auto got = [&](std::size_t k) { return &rd.buf[static_cast<std::size_t>(offs[k])]; };
    auto want = [&](std::size_t k) { return &m.bytes[static_cast<std::size_t>(r.tbyte + offs[k])]; };
    check->expect_elements(
        offs.size(),
        [&](std::size_t k) {
          if (r.type->equal(got(k), want(k))) return shim::test::Verdict::same;
          if (!excuse_6083_ || !m.mpich_6083_at(r.tbyte + offs[k])) return shim::test::Verdict::differs;
          known_mpich_defect(kMpich6083, target_where(t) + ": MPI_Get after flush: " + m.where(r.tbyte + offs[k]));
          return shim::test::Verdict::excused;
        },
        [&](std::size_t k) {
          return m.where(r.tbyte + offs[k]) + ": got " + r.type->show(got(k)) + ", expected " + r.type->show(want(k));
        },
        target_where(t) + ": MPI_Get after flush of " + describe(r));
  }
}

void Epoch::verify(const unsigned char* mem, int t, const std::string& where) {
  Model m;
  final_model(k_, m, w_.sizes[static_cast<std::size_t>(t)], t, variant_base_, passive(sync_));
  compare_memory(mem, m, where, excuse_6083_);
}

void Epoch::verify_own() { verify(w_.base, c_.rank, where_ + ", target " + str(c_.rank)); }

void Epoch::verify_own_locked() {
  sync_ok(MPI_Win_lock(MPI_LOCK_SHARED, c_.rank, 0, w_.win), where_ + ": MPI_Win_lock to read back");
  verify_own();
  sync_ok(MPI_Win_unlock(c_.rank, w_.win), where_ + ": MPI_Win_unlock after reading back");
}

void Epoch::verify_neighbours() {
  for (int t = 0; t < c_.size; ++t) {
    if (t == c_.rank) continue;
    MPI_Aint size = 0;
    int du = 0;
    void* ptr = nullptr;
    ok(MPI_Win_shared_query(w_.win, t, &size, &du, &ptr), where_ + ": MPI_Win_shared_query " + str(t));
    if (ptr == nullptr || size != w_.sizes[static_cast<std::size_t>(t)]) {
      check->fail(where_ + ": MPI_Win_shared_query " + str(t) + " gave size " + str(size));
      continue;
    }
    verify(static_cast<const unsigned char*>(ptr), t,
           where_ + ", rank " + str(c_.rank) + " reading node neighbour " + str(t) + "'s window");
  }
}

}  // namespace shim::test::accumulate
