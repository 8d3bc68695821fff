#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// prefetch(p): asks for the cache line at p (a hint; p need not be valid).
///
/// On x86-64 an asm statement: GCC 12 drops a __builtin_prefetch whose address comes out of a
/// floating-point computation behind a branch (found with IntFire's former ring prefetch, where the
/// built-in left no instruction at all).
namespace antler {

inline void prefetch(const void* p) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}

}  // namespace antler
#pragma GCC visibility pop
