#include "core/random.hpp"

namespace antler {

namespace {
// One stream's first number, written out so that the compiler sees a loop of independent lanes
// (Rng's constructor and next(): mix64 of the key, xor the seed, mix64, then next()'s mix64).
[[gnu::always_inline]] inline std::uint64_t first_draw(std::uint64_t seed, std::uint64_t key) {
  return mix64(mix64(seed ^ mix64(key + 0x632BE59BD9B4E019ull)));
}

bool has_avx512() {
  static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  return yes;
}

// The same loop, compiled for AVX-512: GCC vectorises it eight lanes wide with vpmullq.
__attribute__((target("avx512f,avx512dq,avx512vl"))) void draws512(std::uint64_t seed,
                                                                   const std::uint64_t* keys,
                                                                   std::uint64_t* out,
                                                                   std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = first_draw(seed, keys[i]);
}
}  // namespace

namespace detail {
void first_draws_scalar(std::uint64_t seed, const std::uint64_t* keys, std::uint64_t* out,
                        std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = Rng(seed, keys[i]).next();
}

bool first_draws_avx512(std::uint64_t seed, const std::uint64_t* keys, std::uint64_t* out,
                        std::size_t n) {
  if (!has_avx512()) return false;
  draws512(seed, keys, out, n);
  return true;
}
}  // namespace detail

bool first_draws_vectorised() {
  return has_avx512();
}

void first_draws(std::uint64_t seed, const std::uint64_t* keys, std::uint64_t* out, std::size_t n) {
  if (!detail::first_draws_avx512(seed, keys, out, n))
    detail::first_draws_scalar(seed, keys, out, n);
}

}  // namespace antler
