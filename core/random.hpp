#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Small, fast, reproducible random numbers. Streams are keyed by (seed, key) so that the numbers
/// an object draws do not depend on which node or thread runs it. The seed is the simulation's
/// (Context::seed, set on every node by Shell::seed / antler.seed; default 0).
#include <cmath>
#include <cstdint>

namespace antler {

/// SplitMix64 finaliser: a good 64-bit mix of x.
constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// A SplitMix64 stream seeded from (seed, key).
class Rng {
 public:
  constexpr Rng(std::uint64_t seed, std::uint64_t key)
      : s_(mix64(seed ^ mix64(key + 0x632BE59BD9B4E019ull))) {}
  /// Next 64 random bits.
  constexpr std::uint64_t next() {
    s_ += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = s_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform in (0, 1].
  double uniformPositive() { return 1.0 - uniform(); }

 private:
  std::uint64_t s_;
};

}  // namespace antler
#pragma GCC visibility pop
