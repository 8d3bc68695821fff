#include "core/limits.hpp"

#include <unistd.h>

#include <cmath>
#include <string>

#include "core/error.hpp"

namespace antler {

std::uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || size <= 0) return ~std::uint64_t{0};
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(size);
}

namespace {
std::string gib(long double bytes) {
  return format_double(static_cast<double>(std::roundl(bytes / (1ull << 30) * 100) / 100)) + " GiB";
}
}  // namespace

void check_allocation(std::string_view op, std::string_view what, std::uint64_t count,
                      std::uint64_t bytesEach) {
  const std::uint64_t limit = physical_memory_bytes();
  const long double bytes = static_cast<long double>(count) * static_cast<long double>(bytesEach);
  if (bytes <= static_cast<long double>(limit)) return;
  throw ValueError(std::string(op) + ": " + std::to_string(count) + " entries of " +
                   std::string(what) + " need " + gib(bytes) + ", more than this node's memory (" +
                   gib(static_cast<long double>(limit)) + ")");
}

}  // namespace antler
