#include "core/random.hpp"

#include <immintrin.h>

#include <atomic>

namespace antler {

namespace {
// Rng's constructor and next() for one stream: mix64 of the key, xor the seed, mix64, then
// next()'s mix64.
inline std::uint64_t first_draw(std::uint64_t seed, std::uint64_t key) {
  return mix64(mix64(seed ^ mix64(key + 0x632BE59BD9B4E019ull)));
}

bool has_avx512() {
  static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  return yes;
}

// -1: as the CPU allows; 0: one stream at a time (detail::set_first_draws_vectorised, a test's).
std::atomic<int> g_allowed{-1};

// mix64 in eight lanes (the 64-bit multiply is AVX512DQ's vpmullq).
[[gnu::always_inline]] __attribute__((target("avx512f,avx512dq"))) inline __m512i mix8(__m512i x) {
  x = _mm512_add_epi64(x, _mm512_set1_epi64(static_cast<long long>(0x9E3779B97F4A7C15ull)));
  x = _mm512_xor_si512(x, _mm512_srli_epi64(x, 30));
  x = _mm512_mullo_epi64(x, _mm512_set1_epi64(static_cast<long long>(0xBF58476D1CE4E5B9ull)));
  x = _mm512_xor_si512(x, _mm512_srli_epi64(x, 27));
  x = _mm512_mullo_epi64(x, _mm512_set1_epi64(static_cast<long long>(0x94D049BB133111EBull)));
  return _mm512_xor_si512(x, _mm512_srli_epi64(x, 31));
}

// Eight streams at a time (written with intrinsics: the same code at any optimisation level),
// the last n % 8 one at a time. Each lane reads its key before its draw is stored: out may be keys.
__attribute__((target("avx512f,avx512dq"))) void draws512(std::uint64_t seed,
                                                          const std::uint64_t* keys,
                                                          std::uint64_t* out, std::size_t n) {
  const __m512i s = _mm512_set1_epi64(static_cast<long long>(seed));
  const __m512i c = _mm512_set1_epi64(static_cast<long long>(0x632BE59BD9B4E019ull));
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m512i k = _mm512_loadu_si512(keys + i);
    _mm512_storeu_si512(out + i, mix8(mix8(_mm512_xor_si512(s, mix8(_mm512_add_epi64(k, c))))));
  }
  for (; i < n; ++i) out[i] = first_draw(seed, keys[i]);
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

bool set_first_draws_vectorised(bool on) {
  g_allowed.store(on ? -1 : 0, std::memory_order_relaxed);
  return first_draws_vectorised();
}
}  // namespace detail

bool first_draws_vectorised() {
  return g_allowed.load(std::memory_order_relaxed) != 0 && has_avx512();
}

void first_draws(std::uint64_t seed, const std::uint64_t* keys, std::uint64_t* out, std::size_t n) {
  if (!first_draws_vectorised() || !detail::first_draws_avx512(seed, keys, out, n))
    detail::first_draws_scalar(seed, keys, out, n);
}

}  // namespace antler
