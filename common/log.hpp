// Every line shim prints starts with "shim: " and goes to stderr in one write,
// so lines from different ranks interleave whole.
#pragma once

#include <string_view>

namespace shim {

void print_line(std::string_view text);

}  // namespace shim
