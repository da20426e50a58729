#include "common/log.hpp"

#include <unistd.h>

#include <string>

namespace shim {

void print_line(std::string_view text) {
  std::string line = "shim: ";
  line.append(text);
  line.push_back('\n');
  std::size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(STDERR_FILENO, line.data() + written, line.size() - written);
    if (n <= 0) return;
    written += static_cast<std::size_t>(n);
  }
}

}  // namespace shim
