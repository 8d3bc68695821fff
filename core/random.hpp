#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Small, fast, reproducible random numbers. Streams are keyed by (seed, key) so that the numbers
/// an object draws do not depend on which node or thread runs it. The seed is the simulation's
/// (Context::seed, set on every node by Shell::seed / antler.seed; default 0).
#include <cmath>
#include <cstddef>
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
  double uniform() { return toUniform(next()); }
  /// The uniform in [0, 1) that 64 random bits stand for (uniform() of a next() that gave them).
  static constexpr double toUniform(std::uint64_t bits) {
    return static_cast<double>(bits >> 11) * 0x1.0p-53;
  }
  /// Uniform in (0, 1].
  double uniformPositive() { return 1.0 - uniform(); }

 private:
  std::uint64_t s_;
};

/// The first number of n streams of one seed: out[i] = Rng(seed, keys[i]).next() (out may be
/// keys). Where the CPU has AVX-512 (64-bit multiplies in vectors: AVX512DQ) eight streams at
/// once, ~6x faster than one at a time; the same bits either way. For a population that draws
/// one number per object and step (RandSpike).
void first_draws(std::uint64_t seed, const std::uint64_t* keys, std::uint64_t* out, std::size_t n);
/// True if first_draws runs eight streams at once on this CPU (a caller that would draw numbers
/// it may not use only to batch them can draw one at a time where it does not).
bool first_draws_vectorised();

namespace detail {
/// first_draws one stream at a time, and eight at once (false, nothing written, where the CPU
/// lacks AVX512F or AVX512DQ): each path on its own, for the test that compares them.
void first_draws_scalar(std::uint64_t seed, const std::uint64_t* keys, std::uint64_t* out,
                        std::size_t n);
bool first_draws_avx512(std::uint64_t seed, const std::uint64_t* keys, std::uint64_t* out,
                        std::size_t n);
/// Off: first_draws and its callers go one stream at a time even where the CPU could go eight
/// (a test's, to run both paths of a caller on one machine); on: as the CPU allows. Returns
/// first_draws_vectorised() after the change.
bool set_first_draws_vectorised(bool on);
}  // namespace detail

}  // namespace antler
#pragma GCC visibility pop
