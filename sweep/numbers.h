#pragma once

#include <charconv>
#include <cmath>
#include <string>
#include <string_view>
#include <system_error>

namespace clustercert::sweep {

// Numbers as the worker protocol, the worker's flags and nccl-tests' table
// write them: the whole text is the number, nothing before or after it.

// `text` read whole as an integer or a double ("12x", "" and " 1" fail);
// a double may read as inf or nan, which ParseFinite refuses.
template <typename Number>
bool ParseWhole(std::string_view text, Number& out) {
  if (text.empty()) return false;
  const char* last = text.data() + text.size();
  auto [end, ec] = std::from_chars(text.data(), last, out);
  return ec == std::errc() && end == last;
}

// ParseWhole for a double that must be finite (a size, a time, a rate).
inline bool ParseFinite(std::string_view text, double& out) {
  return ParseWhole(text, out) && std::isfinite(out);
}

// The shortest text that reads back to the same double: the agent must see
// the worker's exact figures, not a rounded copy.
inline std::string ShortestText(double value) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  if (ec != std::errc()) return "nan";  // 64 bytes hold any double: unreachable
  return std::string(buffer, end);
}

}  // namespace clustercert::sweep
