// include/shim/mirror.h: argument checks, error raising and the SHIM_VERBOSE
// line; the work is in mirror/.
#include <shim/mirror.h>

#include <memory>
#include <optional>
#include <string>

#include "common/element_type.hpp"
#include "common/log.hpp"
#include "mirror/mirror_copy.hpp"
#include "mirror/mirror_error.hpp"
#include "shim/comm_state.hpp"
#include "shim/export.hpp"
#include "shim/runtime.hpp"
#include "shim/stats.hpp"

struct shim_mirror_s {
  std::unique_ptr<shim::mirror::MirroredWindow> window;
};

struct shim_distributed_s {
  std::unique_ptr<shim::mirror::DistributedArray> array;
};

namespace {

using shim::mirror::Range;
using shim::mirror::report_error;
using shim::stats::MirrorOp;

int raise(MPI_Comm comm, int rc) {
  if (rc != MPI_SUCCESS) PMPI_Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_SELF : comm, rc);
  return rc;
}

int raise_on_self(int error_class, const std::string& message) {
  return raise(MPI_COMM_SELF, report_error(error_class, message));
}

// Whether this process reports the errors of a collective call on comm:
// all processes find the same error, one prints it.
bool reports_for(MPI_Comm comm) {
  int rank = 0;
  return PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS && rank == 0;
}

// Checks shared by both create functions; fills `kind`.
int check_create(const char* function, MPI_Count count, MPI_Datatype type, MPI_Comm comm, const void* out,
                 shim::ElementKind& kind) {
  const std::string prefix = std::string(function) + ": ";
  if (comm == MPI_COMM_NULL) return raise_on_self(MPI_ERR_COMM, prefix + "the communicator is MPI_COMM_NULL");
  int inter = 0;
  if (int rc = PMPI_Comm_test_inter(comm, &inter); rc != MPI_SUCCESS) return raise(MPI_COMM_SELF, rc);
  const bool print = reports_for(comm);
  if (inter) return raise(comm, report_error(MPI_ERR_COMM, prefix + "intercommunicators are not supported", print));
  if (out == nullptr)
    return raise(comm, report_error(MPI_ERR_ARG, prefix + "the output handle pointer is NULL", print));
  if (count < 0)
    return raise(comm, report_error(MPI_ERR_COUNT, prefix + "count " + std::to_string(count) + " is negative", print));
  const std::optional<shim::ElementKind> known = shim::element_kind_of(type);
  if (!known)
    return raise(comm, report_error(MPI_ERR_TYPE,
                                    prefix + shim::datatype_label(type) +
                                        " is not supported: the elements must be of a predefined "
                                        "integer, floating-point or complex datatype (merge sums them)",
                                    print));
  kind = *known;
  return MPI_SUCCESS;
}

// A range of `total` elements: [first, first + count).
int check_range(MPI_Comm comm, const char* function, MPI_Count first, MPI_Count count, std::int64_t total,
                bool print = true) {
  const std::string prefix = std::string(function) + ": ";
  if (count < 0)
    return raise(comm, report_error(MPI_ERR_COUNT, prefix + "count " + std::to_string(count) + " is negative", print));
  if (first < 0 || first > total || count > total - first)
    return raise(comm,
                 report_error(MPI_ERR_ARG,
                              prefix + "elements [" + std::to_string(first) + ", " + std::to_string(first) + " + " +
                                  std::to_string(count) + ") are outside the window's " + std::to_string(total),
                              print));
  return MPI_SUCCESS;
}

int check_index(MPI_Comm comm, const char* function, MPI_Count index, std::int64_t total) {
  if (index >= 0 && index < total) return MPI_SUCCESS;
  return raise(comm, report_error(MPI_ERR_ARG, std::string(function) + ": element " + std::to_string(index) +
                                                   " is outside the " + std::to_string(total) + " elements"));
}

int null_handle(const char* function, const char* what) {
  return raise_on_self(MPI_ERR_ARG, std::string(function) + ": the " + what + " is NULL");
}

int null_pointer(MPI_Comm comm, const char* function, const char* what) {
  return raise(comm, report_error(MPI_ERR_ARG, std::string(function) + ": " + what + " is NULL"));
}

// SHIM_STATS: a call on `count` elements of the window that succeeded;
// passes `rc` through.
int counted(const shim::mirror::MirroredWindow& w, MirrorOp op, MPI_Count count, int rc = MPI_SUCCESS) {
  if (rc != MPI_SUCCESS || !shim::config().stats) return rc;
  int size = 0;
  int rank = 0;
  // The window's datatype is predefined and its communicator valid: neither can fail.
  static_cast<void>(PMPI_Type_size(w.type(), &size));
  static_cast<void>(PMPI_Comm_rank(w.comm(), &rank));
  shim::stats::record_mirror(op, count * size, rank == 0);
  return rc;
}

void announce(const shim::CommState& state, const shim::mirror::MirroredWindow& window) {
  if (!shim::config().verbose || state.rank() != 0) return;
  shim::print_line("mirror on " + state.label() + ": " + std::to_string(window.count()) + " x " +
                   std::string(shim::element_name(window.kind())) + "; " + std::to_string(window.nodes()) +
                   (window.nodes() == 1 ? " node copy" : " node copies") +
                   (window.nodes() == 1 ? ": one shared copy, merge is a barrier"
                                        : "; merge: one allreduce per local rank, over its rail") +
                   (window.contiguous() ? "; copy contiguous" : "; copy in per-process segments"));
}

}  // namespace

SHIM_EXPORT int shim_mirror_create(MPI_Count count, MPI_Datatype type, MPI_Comm comm, shim_mirror* mirror) {
  constexpr const char* kFunction = "shim_mirror_create";
  shim::ElementKind kind{};
  if (int rc = check_create(kFunction, count, type, comm, mirror, kind); rc != MPI_SUCCESS) return rc;
  *mirror = nullptr;
  if (!shim::runtime_running())
    return raise(comm, report_error(MPI_ERR_OTHER, std::string(kFunction) + ": MPI is not initialised"));
  shim::CommState* state = nullptr;
  if (int rc = shim::comm_state(comm, state); rc != MPI_SUCCESS) return raise(comm, rc);
  const shim::topo::Hierarchy* hierarchy = nullptr;
  if (int rc = state->hierarchy(comm, shim::config().node_size, hierarchy); rc != MPI_SUCCESS) return raise(comm, rc);
  auto handle = std::make_unique<shim_mirror_s>();
  if (int rc = shim::mirror::MirroredWindow::create(count, type, kind, comm, *hierarchy,
                                                    shim::config().mirror_per_process_segments, handle->window);
      rc != MPI_SUCCESS)
    return raise(comm, rc);
  announce(*state, *handle->window);
  *mirror = handle.release();
  return MPI_SUCCESS;
}

SHIM_EXPORT int shim_mirror_free(shim_mirror* mirror) {
  if (mirror == nullptr || *mirror == nullptr) return null_handle("shim_mirror_free", "mirror");
  const std::unique_ptr<shim_mirror_s> handle(*mirror);
  *mirror = nullptr;
  return raise(handle->window->comm(), handle->window->release());
}

SHIM_EXPORT int shim_mirror_size(shim_mirror mirror, MPI_Count* count, MPI_Datatype* type) {
  if (mirror == nullptr) return null_handle("shim_mirror_size", "mirror");
  if (count != nullptr) *count = mirror->window->count();
  if (type != nullptr) *type = mirror->window->type();
  return MPI_SUCCESS;
}

SHIM_EXPORT int shim_mirror_node(shim_mirror mirror, int* node, int* nodes, int* local_rank, int* local_size) {
  if (mirror == nullptr) return null_handle("shim_mirror_node", "mirror");
  const auto& w = *mirror->window;
  if (node != nullptr) *node = w.node();
  if (nodes != nullptr) *nodes = w.nodes();
  if (local_rank != nullptr) *local_rank = w.local_rank();
  if (local_size != nullptr) *local_size = w.local_size();
  return MPI_SUCCESS;
}

SHIM_EXPORT int shim_mirror_range(shim_mirror mirror, int local_rank, MPI_Count* first, MPI_Count* count) {
  constexpr const char* kFunction = "shim_mirror_range";
  if (mirror == nullptr) return null_handle(kFunction, "mirror");
  const auto& w = *mirror->window;
  if (local_rank < 0 || local_rank >= w.local_size())
    return raise(w.comm(),
                 report_error(MPI_ERR_RANK, std::string(kFunction) + ": local rank " + std::to_string(local_rank) +
                                                " is not in 0.." + std::to_string(w.local_size() - 1)));
  if (first == nullptr || count == nullptr) return null_pointer(w.comm(), kFunction, "an output pointer");
  const Range held = w.block(local_rank);
  *first = held.first;
  *count = held.count;
  return MPI_SUCCESS;
}

SHIM_EXPORT int shim_mirror_holder(shim_mirror mirror, MPI_Count index, int* rank) {
  constexpr const char* kFunction = "shim_mirror_holder";
  if (mirror == nullptr) return null_handle(kFunction, "mirror");
  const auto& w = *mirror->window;
  if (int rc = check_index(w.comm(), kFunction, index, w.count()); rc != MPI_SUCCESS) return rc;
  if (rank == nullptr) return null_pointer(w.comm(), kFunction, "rank");
  *rank = w.holder(index);
  return MPI_SUCCESS;
}

SHIM_EXPORT int shim_mirror_address(shim_mirror mirror, MPI_Count index, void** address) {
  constexpr const char* kFunction = "shim_mirror_address";
  if (mirror == nullptr) return null_handle(kFunction, "mirror");
  const auto& w = *mirror->window;
  if (int rc = check_index(w.comm(), kFunction, index, w.count()); rc != MPI_SUCCESS) return rc;
  if (address == nullptr) return null_pointer(w.comm(), kFunction, "address");
  *address = w.address(index);
  return MPI_SUCCESS;
}

SHIM_EXPORT int shim_mirror_get(shim_mirror mirror, MPI_Count first, MPI_Count count, void* buffer) {
  constexpr const char* kFunction = "shim_mirror_get";
  if (mirror == nullptr) return null_handle(kFunction, "mirror");
  auto& w = *mirror->window;
  if (int rc = check_range(w.comm(), kFunction, first, count, w.count()); rc != MPI_SUCCESS) return rc;
  if (buffer == nullptr && count > 0) return null_pointer(w.comm(), kFunction, "buffer");
  w.get({first, count}, buffer);
  return counted(w, MirrorOp::get, count);
}

SHIM_EXPORT int shim_mirror_put(shim_mirror mirror, MPI_Count first, MPI_Count count, const void* buffer) {
  constexpr const char* kFunction = "shim_mirror_put";
  if (mirror == nullptr) return null_handle(kFunction, "mirror");
  auto& w = *mirror->window;
  if (int rc = check_range(w.comm(), kFunction, first, count, w.count()); rc != MPI_SUCCESS) return rc;
  if (buffer == nullptr && count > 0) return null_pointer(w.comm(), kFunction, "buffer");
  w.put({first, count}, buffer);
  return counted(w, MirrorOp::put, count);
}

SHIM_EXPORT int shim_mirror_acc(shim_mirror mirror, MPI_Count first, MPI_Count count, const void* buffer,
                                const void* scale) {
  constexpr const char* kFunction = "shim_mirror_acc";
  if (mirror == nullptr) return null_handle(kFunction, "mirror");
  auto& w = *mirror->window;
  if (int rc = check_range(w.comm(), kFunction, first, count, w.count()); rc != MPI_SUCCESS) return rc;
  if (buffer == nullptr && count > 0) return null_pointer(w.comm(), kFunction, "buffer");
  w.accumulate({first, count}, buffer, scale);
  return counted(w, MirrorOp::acc, count);
}

SHIM_EXPORT int shim_mirror_sync(shim_mirror mirror) {
  if (mirror == nullptr) return null_handle("shim_mirror_sync", "mirror");
  return raise(mirror->window->comm(), mirror->window->sync());
}

SHIM_EXPORT int shim_mirror_zero(shim_mirror mirror) {
  if (mirror == nullptr) return null_handle("shim_mirror_zero", "mirror");
  auto& w = *mirror->window;
  return raise(w.comm(), counted(w, MirrorOp::zero, w.count(), w.zero()));
}

SHIM_EXPORT int shim_mirror_merge(shim_mirror mirror) {
  if (mirror == nullptr) return null_handle("shim_mirror_merge", "mirror");
  auto& w = *mirror->window;
  return raise(w.comm(), counted(w, MirrorOp::merge, w.count(), w.merge({0, w.count()})));
}

SHIM_EXPORT int shim_mirror_merge_patch(shim_mirror mirror, MPI_Count first, MPI_Count count) {
  constexpr const char* kFunction = "shim_mirror_merge_patch";
  if (mirror == nullptr) return null_handle(kFunction, "mirror");
  auto& w = *mirror->window;
  if (int rc = check_range(w.comm(), kFunction, first, count, w.count(), reports_for(w.comm())); rc != MPI_SUCCESS)
    return rc;
  return raise(w.comm(), counted(w, MirrorOp::merge_patch, count, w.merge({first, count})));
}

SHIM_EXPORT int shim_mirror_merge_sparse(shim_mirror mirror, MPI_Count block_elements) {
  constexpr const char* kFunction = "shim_mirror_merge_sparse";
  if (mirror == nullptr) return null_handle(kFunction, "mirror");
  auto& w = *mirror->window;
  if (block_elements <= 0)
    return raise(w.comm(), report_error(MPI_ERR_ARG,
                                        std::string(kFunction) + ": block_elements " + std::to_string(block_elements) +
                                            " must be positive",
                                        reports_for(w.comm())));
  return raise(w.comm(), counted(w, MirrorOp::merge_sparse, w.count(), w.merge_sparse(block_elements)));
}

SHIM_EXPORT int shim_distributed_create(MPI_Count count, MPI_Datatype type, MPI_Comm comm, shim_distributed* array) {
  shim::ElementKind kind{};
  if (int rc = check_create("shim_distributed_create", count, type, comm, array, kind); rc != MPI_SUCCESS) return rc;
  *array = nullptr;
  auto handle = std::make_unique<shim_distributed_s>();
  if (int rc = shim::mirror::DistributedArray::create(count, type, kind, comm, handle->array); rc != MPI_SUCCESS)
    return raise(comm, rc);
  *array = handle.release();
  return MPI_SUCCESS;
}

SHIM_EXPORT int shim_distributed_free(shim_distributed* array) {
  if (array == nullptr || *array == nullptr) return null_handle("shim_distributed_free", "distributed array");
  const std::unique_ptr<shim_distributed_s> handle(*array);
  *array = nullptr;
  return raise(handle->array->comm(), handle->array->release());
}

SHIM_EXPORT int shim_distributed_window(shim_distributed array, MPI_Win* window) {
  if (array == nullptr) return null_handle("shim_distributed_window", "distributed array");
  if (window == nullptr) return null_pointer(array->array->comm(), "shim_distributed_window", "window");
  *window = array->array->window();
  return MPI_SUCCESS;
}

SHIM_EXPORT int shim_distributed_range(shim_distributed array, int rank, MPI_Count* first, MPI_Count* count) {
  constexpr const char* kFunction = "shim_distributed_range";
  if (array == nullptr) return null_handle(kFunction, "distributed array");
  const auto& a = *array->array;
  int size = 0;
  if (const int rc = PMPI_Comm_size(a.comm(), &size); rc != MPI_SUCCESS) return raise(a.comm(), rc);
  if (rank < 0 || rank >= size)
    return raise(a.comm(), report_error(MPI_ERR_RANK, std::string(kFunction) + ": rank " + std::to_string(rank) +
                                                          " is not in 0.." + std::to_string(size - 1)));
  if (first == nullptr || count == nullptr) return null_pointer(a.comm(), kFunction, "an output pointer");
  const Range held = a.block(rank);
  *first = held.first;
  *count = held.count;
  return MPI_SUCCESS;
}

SHIM_EXPORT int shim_distributed_locate(shim_distributed array, MPI_Count index, int* rank, MPI_Aint* displacement) {
  constexpr const char* kFunction = "shim_distributed_locate";
  if (array == nullptr) return null_handle(kFunction, "distributed array");
  const auto& a = *array->array;
  if (int rc = check_index(a.comm(), kFunction, index, a.count()); rc != MPI_SUCCESS) return rc;
  if (rank == nullptr || displacement == nullptr) return null_pointer(a.comm(), kFunction, "an output pointer");
  *rank = a.owner(index);
  *displacement = static_cast<MPI_Aint>(index - a.block(*rank).first);
  return MPI_SUCCESS;
}

SHIM_EXPORT int shim_mirror_copy_from_distributed(shim_mirror mirror, shim_distributed array) {
  constexpr const char* kFunction = "shim_mirror_copy_from_distributed";
  if (mirror == nullptr) return null_handle(kFunction, "mirror");
  if (array == nullptr) return null_handle(kFunction, "distributed array");
  auto& w = *mirror->window;
  if (int rc = shim::mirror::check_compatible(kFunction, w, *array->array); rc != MPI_SUCCESS)
    return raise(w.comm(), rc);
  const int rc = shim::mirror::copy_from_distributed(w, *array->array);
  return raise(w.comm(), counted(w, MirrorOp::copy_in, w.count(), rc));
}

SHIM_EXPORT int shim_mirror_copy_to_distributed(shim_mirror mirror, shim_distributed array) {
  constexpr const char* kFunction = "shim_mirror_copy_to_distributed";
  if (mirror == nullptr) return null_handle(kFunction, "mirror");
  if (array == nullptr) return null_handle(kFunction, "distributed array");
  auto& w = *mirror->window;
  if (int rc = shim::mirror::check_compatible(kFunction, w, *array->array); rc != MPI_SUCCESS)
    return raise(w.comm(), rc);
  const int rc = shim::mirror::copy_to_distributed(w, *array->array);
  return raise(w.comm(), counted(w, MirrorOp::copy_out, w.count(), rc));
}
