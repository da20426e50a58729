// How shim writes quantities in its messages, reports and tables.
#pragma once

#include <cstdint>
#include <string>

namespace shim {

// "512 B", "16 KiB", "1 MiB": exact binary units where they divide evenly,
// so a size reads as the power of two it usually is ("1536 B" stays bytes).
std::string format_bytes(std::int64_t bytes);

}  // namespace shim
