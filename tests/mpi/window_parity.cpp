// A window from shim's MPI_Win_allocate answers every query as MPICH's own
// MPI_Win_allocate window does. Each case makes both in the same run (MPICH's
// through PMPI_Win_allocate, which shim does not see) with the same size,
// disp_unit and info, then asks both the same questions through the MPI_*
// calls a program would make: the predefined attributes, the group, every
// info key and value, and MPI_Win_shared_query for every rank.
#include <mpi.h>
#include <shim/shim.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "tests/mpi/checker.hpp"

namespace {

shim::test::Checker* g_check = nullptr;
int g_mpich_base_defects = 0;

struct Answers {
  bool base_is_returned = false;
  std::vector<std::int64_t> attributes;  // size, disp_unit, flavor, model; -1 when absent
  int group_vs_comm = -1;
  std::map<std::string, std::string> info;
  std::vector<std::int64_t> shared_query;  // per rank and MPI_PROC_NULL: class, size, disp_unit, base set
};

std::int64_t attribute(MPI_Win win, int keyval, bool is_aint) {
  void* value = nullptr;
  int flag = 0;
  if (MPI_Win_get_attr(win, keyval, &value, &flag) != MPI_SUCCESS || !flag) return -1;
  return is_aint ? static_cast<std::int64_t>(*static_cast<MPI_Aint*>(value)) : *static_cast<int*>(value);
}

Answers ask(MPI_Win win, void* returned_base, MPI_Comm comm) {
  Answers a;
  void* base = nullptr;
  int flag = 0;
  MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
  a.base_is_returned = flag && base == returned_base;
  a.attributes = {attribute(win, MPI_WIN_SIZE, true), attribute(win, MPI_WIN_DISP_UNIT, false),
                  attribute(win, MPI_WIN_CREATE_FLAVOR, false), attribute(win, MPI_WIN_MODEL, false)};
  MPI_Group group = MPI_GROUP_NULL, comm_group = MPI_GROUP_NULL;
  MPI_Win_get_group(win, &group);
  MPI_Comm_group(comm, &comm_group);
  MPI_Group_compare(group, comm_group, &a.group_vs_comm);
  MPI_Group_free(&group);
  MPI_Group_free(&comm_group);
  MPI_Info used = MPI_INFO_NULL;
  MPI_Win_get_info(win, &used);
  int keys = 0;
  MPI_Info_get_nkeys(used, &keys);
  for (int k = 0; k < keys; ++k) {
    char key[MPI_MAX_INFO_KEY + 1] = {};
    MPI_Info_get_nthkey(used, k, key);
    char value[MPI_MAX_INFO_VAL + 1] = {};
    int length = MPI_MAX_INFO_VAL, found = 0;
    MPI_Info_get_string(used, key, &length, value, &found);
    a.info[key] = value;
  }
  MPI_Info_free(&used);
  int size = 0;
  MPI_Comm_size(comm, &size);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  for (int rank = -1; rank < size; ++rank) {
    MPI_Aint bytes = -7;
    int unit = -7;
    void* segment = nullptr;
    const int rc = MPI_Win_shared_query(win, rank < 0 ? MPI_PROC_NULL : rank, &bytes, &unit, &segment);
    int cls = rc;
    MPI_Error_class(rc, &cls);
    a.shared_query.insert(a.shared_query.end(), {cls, static_cast<std::int64_t>(bytes), unit, segment != nullptr});
  }
  return a;
}

MPI_Info make_info(const std::map<std::string, std::string>& keys) {
  if (keys.empty()) return MPI_INFO_NULL;
  MPI_Info info = MPI_INFO_NULL;
  MPI_Info_create(&info);
  for (const auto& [key, value] : keys) MPI_Info_set(info, key.c_str(), value.c_str());
  return info;
}

void compare(const std::string& what, MPI_Aint size, int disp_unit, const std::map<std::string, std::string>& keys,
             MPI_Comm comm) {
  MPI_Info info = make_info(keys);
  void* native_base = nullptr;
  void* shim_base = nullptr;
  MPI_Win native = MPI_WIN_NULL, managed = MPI_WIN_NULL;
  PMPI_Win_allocate(size, disp_unit, info, comm, &native_base, &native);
  MPI_Win_allocate(size, disp_unit, info, comm, &shim_base, &managed);
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  char path[16] = {};
  shim_win_accumulate_path(managed, path, sizeof path);
  const std::string where = what + " (shim's path " + path + ")";
  const Answers expected = ask(native, native_base, comm);
  const Answers got = ask(managed, shim_base, comm);
  // MPI_WIN_BASE is the base MPI_Win_allocate returned, as the standard
  // says. MPICH 4.0.2's own windows break this when sizes differ between
  // processes (another face of MPICH #6110), so here shim is held to the
  // standard, not to MPICH.
  g_check->expect(got.base_is_returned, where + ": MPI_WIN_BASE is the returned base");
  if (!expected.base_is_returned) ++g_mpich_base_defects;
  g_check->expect(got.attributes == expected.attributes, where + ": size, disp_unit, flavor and model");
  g_check->expect(got.group_vs_comm == expected.group_vs_comm, where + ": MPI_Win_get_group");
  g_check->expect(got.info == expected.info, where + ": MPI_Win_get_info keys and values");
  for (const auto& [key, value] : expected.info) {
    const auto found = got.info.find(key);
    g_check->expect(found != got.info.end() && found->second == value,
                    where + ": info " + key + "=" + value +
                        " (shim: " + (found == got.info.end() ? std::string("absent") : found->second) + ")");
  }
  g_check->expect(got.shared_query == expected.shared_query, where + ": MPI_Win_shared_query for every rank");
  PMPI_Win_free(&native);
  MPI_Win_free(&managed);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  shim::test::Checker check("window_parity");
  g_check = &check;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::vector<std::map<std::string, std::string>> infos = {
      {},
      {{"accumulate_ordering", "none"}, {"same_disp_unit", "true"}, {"alloc_shm", "false"}},
      {{"accumulate_ops", "same_op"}, {"no_locks", "true"}},
      {{"alloc_shared_noncontig", "true"}, {"same_size", "true"}, {"alloc_shm", "maybe"}, {"foo", "bar"}},
      {{"alloc_shm", "true"}, {"shim_accumulate", "caller"}},
      {{"shim_accumulate", "native"}},
  };
  MPI_Comm reversed = MPI_COMM_NULL;
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
  for (std::size_t i = 0; i < infos.size(); ++i) {
    const std::string info = "info set " + std::to_string(i);
    compare("8 doubles, " + info, 64, 8, infos[i], MPI_COMM_WORLD);
    compare("odd bytes per rank, disp_unit 1, " + info, 13 + 8 * rank, 1, infos[i], MPI_COMM_WORLD);
    compare("nothing on rank 0, " + info, rank == 0 ? 0 : 24, 4, infos[i], reversed);
  }
  MPI_Comm_free(&reversed);
  MPI_Allreduce(MPI_IN_PLACE, &g_mpich_base_defects, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && g_mpich_base_defects > 0) {
    std::printf(
        "window_parity: MPICH's own windows gave an MPI_WIN_BASE other than the returned base %d times "
        "(MPICH #6110; not a shim failure)\n",
        g_mpich_base_defects);
  }
  const int status = check.finish();
  MPI_Finalize();
  return status;
}
