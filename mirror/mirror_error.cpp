#include "mirror/mirror_error.hpp"

#include <mutex>
#include <set>

#include "common/log.hpp"

namespace shim::mirror {

int report_error(int error_class, const std::string& message, bool print) {
  if (!print) return error_class;
  static std::mutex mutex;
  static std::set<std::string> printed;
  const std::lock_guard lock(mutex);
  if (printed.insert(message).second) print_line("error: " + message);
  return error_class;
}

}  // namespace shim::mirror
