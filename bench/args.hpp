// Command-line helpers shared by the benchmarks.
#pragma once

#include <cstdlib>
#include <vector>

namespace bench {

/// "1,2,4" -> {1, 2, 4}, each in [1, most]; empty if malformed (the caller prints its usage).
inline std::vector<unsigned> count_list(const char* s, long most = 64) {
  std::vector<unsigned> out;
  while (*s) {
    char* end = nullptr;
    const long v = std::strtol(s, &end, 10);
    if (end == s || v < 1 || v > most) return {};
    out.push_back(static_cast<unsigned>(v));
    s = end;
    if (*s == ',')
      ++s;
    else if (*s)
      return {};
  }
  return out;
}

}  // namespace bench
