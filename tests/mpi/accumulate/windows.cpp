#include "tests/mpi/accumulate/windows.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <utility>

namespace shim::test::accumulate {

PathQuery path_query() {
  static const PathQuery q = reinterpret_cast<PathQuery>(dlsym(RTLD_DEFAULT, "shim_win_accumulate_path"));
  return q;
}

const char* creation_name(Creation c) {
  return c == Creation::Allocate         ? "MPI_Win_allocate"
         : c == Creation::AllocateShared ? "MPI_Win_allocate_shared"
                                         : "MPI_Win_create";
}

namespace {

MPI_Aint page_size() { return static_cast<MPI_Aint>(sysconf(_SC_PAGESIZE)); }

std::set<std::string> paths_printed;

}  // namespace

bool maybe_native(const std::string& path) { return path == "native" || path_query() == nullptr; }

Window open_window(const Comm& c, Creation how, const std::string& path, std::vector<MPI_Aint> sizes,
                   std::vector<int> disp_units, const std::string& what) {
  Window w;
  w.c = &c;
  w.how = how;
  w.path = path;
  w.sizes = std::move(sizes);
  w.disp_units = std::move(disp_units);
  w.label = std::string(creation_name(how)) + " on " + c.name + ", path " + (path.empty() ? "(no info key)" : path) +
            ", " + what;
  MPI_Info info = MPI_INFO_NULL;
  if (!path.empty()) {
    PMPI_Info_create(&info);
    PMPI_Info_set(info, "shim_accumulate", path.c_str());
  }
  const MPI_Aint size = w.my_size();
  const int du = w.disp_units[static_cast<std::size_t>(c.rank)];
  int rc = MPI_SUCCESS;
  switch (how) {
    case Creation::Allocate:
      rc = MPI_Win_allocate(size, du, info, c.comm, &w.base, &w.win);
      break;
    case Creation::AllocateShared:
      rc = MPI_Win_allocate_shared(size, du, info, c.comm, &w.base, &w.win);
      break;
    case Creation::Create:
      PMPI_Alloc_mem(std::max<MPI_Aint>(size, 1), MPI_INFO_NULL, &w.created_memory);
      w.base = static_cast<unsigned char*>(w.created_memory);
      rc = MPI_Win_create(w.base, size, du, info, c.comm, &w.win);
      break;
  }
  if (info != MPI_INFO_NULL) PMPI_Info_free(&info);
  sync_ok(rc, w.label + ": window creation");
  MPI_Win_set_errhandler(w.win, MPI_ERRORS_RETURN);

  if (PathQuery q = path_query()) {
    char text[32] = {};
    const int qrc = q(w.win, text, static_cast<int>(sizeof text));
    if (qrc == MPI_SUCCESS) {
      w.reported = text;
      check->expect(w.reported == "owner" || w.reported == "caller" || w.reported == "native",
                    w.label + ": shim_win_accumulate_path says \"" + w.reported + "\"");
      if (how == Creation::Allocate && !path.empty() && path != "auto" && c.size > 1) {
        const std::string expected = path == "owner" && !owner_reachable(c) ? "native" : path;
        check->expect(w.reported == expected, w.label + ": requested path " + path + ", expected " + expected +
                                                  ", shim_win_accumulate_path says " + w.reported);
      }
    } else {
      w.reported = "(query returned " + str(qrc) + ")";
    }
  } else {
    w.reported = "(no shim_win_accumulate_path)";
  }
  const std::string key =
      std::string(creation_name(how)) + " on " + c.name + " requested " + (path.empty() ? "(no info key)" : path);
  if (world_rank == c.world[0] && paths_printed.insert(key).second) {
    std::printf("accumulate_matrix: %s: path %s\n", key.c_str(), w.reported.c_str());
    std::fflush(stdout);
  }
  return w;
}

void close_window(Window& w) {
  sync_ok(MPI_Win_free(&w.win), w.label + ": MPI_Win_free");
  if (w.created_memory) PMPI_Free_mem(w.created_memory);
  w.created_memory = nullptr;
}

MPI_Aint window_bytes(MPI_Aint needed, const std::string& path, Creation how) {
  if (how == Creation::Allocate && maybe_native(path)) return (needed + page_size() - 1) / page_size() * page_size();
  return needed + 24;  // not a multiple of anything large
}

std::vector<int> uniform(const Comm& c, int du) { return std::vector<int>(static_cast<std::size_t>(c.size), du); }

const std::vector<std::string>& paths() {
  static const std::vector<std::string> p = [] {
    std::vector<std::string> all = {"owner", "caller", "native"}, chosen;
    const char* env = std::getenv("ACCUMULATE_MATRIX_PATHS");
    if (env == nullptr || *env == '\0') return all;
    const std::string list = std::string(",") + env + ",";
    for (const auto& q : all)
      if (list.find("," + q + ",") != std::string::npos) chosen.push_back(q);
    return chosen;
  }();
  return p;
}

int path_index(const std::string& p) { return p == "owner" ? 0 : p == "caller" ? 1 : p == "native" ? 2 : 3; }

bool light(const std::string& path) { return path == "caller" && std::getenv("ACCUMULATE_MATRIX_FULL") == nullptr; }

}  // namespace shim::test::accumulate
