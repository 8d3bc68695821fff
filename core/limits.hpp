#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Limits on what one request may allocate, checked before anything is allocated or changed, so
/// that an impossible request is a clear error instead of std::bad_alloc, an OOM kill or a wrap.
#include <cstdint>
#include <string_view>

namespace antler {

/// Bytes of physical memory on this machine.
std::uint64_t physical_memory_bytes();

/// Throws ValueError naming `op`, the request (count entries of `what`, bytesEach each) and the
/// limit if the request would not fit in this node's physical memory.
void check_allocation(std::string_view op, std::string_view what, std::uint64_t count,
                      std::uint64_t bytesEach);

}  // namespace antler
#pragma GCC visibility pop
