#include "reduce/exact_sum.hpp"

#include <immintrin.h>

#include <atomic>
#include <cstdlib>

namespace antler::detail {

namespace {
std::atomic<int> g_vector{-1};  // -1: not decided yet
}

bool exact_vector_path() {
  int v = g_vector.load(std::memory_order_relaxed);
  if (v < 0) {
    const char* e = std::getenv("ANTLER_EXACT_SCALAR");
    v = (!e || *e == '0') && __builtin_cpu_supports("avx2") ? 1 : 0;
    g_vector.store(v, std::memory_order_relaxed);
  }
  return v == 1;
}

void set_exact_vector_path(bool on) {
  g_vector.store(on && __builtin_cpu_supports("avx2") ? 1 : 0, std::memory_order_relaxed);
}

__attribute__((target("avx2"))) void exact_scan_avx2(const double* v, std::size_t m,
                                                     std::uint64_t& emin, std::uint64_t& emax,
                                                     double& lo, double& hi, bool minmax) {
  const __m256i expMask = _mm256_set1_epi64x(0x7FF);
  __m256i vmin = _mm256_set1_epi64x(static_cast<long long>(emin)),
          vmax = _mm256_set1_epi64x(static_cast<long long>(emax));
  __m256d dlo = _mm256_set1_pd(lo), dhi = _mm256_set1_pd(hi);
  std::size_t k = 0;
  for (; k + 4 <= m; k += 4) {
    const __m256d x = _mm256_loadu_pd(v + k);
    const __m256i e = _mm256_and_si256(_mm256_srli_epi64(_mm256_castpd_si256(x), 52), expMask);
    vmin = _mm256_min_epi32(vmin, e);  // the exponents fit the low 32 bits; the high ones are 0
    vmax = _mm256_max_epi32(vmax, e);
    if (minmax) {
      dlo = _mm256_min_pd(x, dlo);  // x < lo ? x : lo, a NaN x leaving lo (as the scalar loop)
      dhi = _mm256_max_pd(x, dhi);
    }
  }
  alignas(32) std::int64_t a[4], b[4];
  alignas(32) double c[4], d[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(a), vmin);
  _mm256_store_si256(reinterpret_cast<__m256i*>(b), vmax);
  _mm256_store_pd(c, dlo);
  _mm256_store_pd(d, dhi);
  for (int j = 0; j < 4; ++j) {
    emin = static_cast<std::uint64_t>(a[j]) < emin ? static_cast<std::uint64_t>(a[j]) : emin;
    emax = static_cast<std::uint64_t>(b[j]) > emax ? static_cast<std::uint64_t>(b[j]) : emax;
    if (minmax) {
      lo = c[j] < lo ? c[j] : lo;
      hi = d[j] > hi ? d[j] : hi;
    }
  }
  for (; k < m; ++k) {
    const std::uint64_t e = (std::bit_cast<std::uint64_t>(v[k]) >> 52) & 0x7FF;
    emin = e < emin ? e : emin;
    emax = e > emax ? e : emax;
    if (minmax) {
      lo = v[k] < lo ? v[k] : lo;
      hi = v[k] > hi ? v[k] : hi;
    }
  }
}

__attribute__((target("avx2"))) void exact_chunk_avx2(const double* v, std::size_t m,
                                                      std::uint64_t emin, bool squares,
                                                      std::int64_t& sumOut,
                                                      unsigned __int128& sqOut) {
  const __m256i mant = _mm256_set1_epi64x((1LL << 52) - 1),
                implicit = _mm256_set1_epi64x(1LL << 52), expMask = _mm256_set1_epi64x(0x7FF),
                base = _mm256_set1_epi64x(static_cast<long long>(emin)),
                low29 = _mm256_set1_epi64x((1LL << 29) - 1), zero = _mm256_setzero_si256();
  __m256i s = zero, aa = zero, ab = zero, bb = zero;
  std::size_t k = 0;
  for (; k + 4 <= m; k += 4) {
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + k));
    const __m256i e = _mm256_and_si256(_mm256_srli_epi64(b, 52), expMask);
    const __m256i ix = _mm256_sllv_epi64(_mm256_or_si256(_mm256_and_si256(b, mant), implicit),
                                         _mm256_sub_epi64(e, base));  // < 2^58
    const __m256i neg = _mm256_sub_epi64(zero, _mm256_srli_epi64(b, 63));
    s = _mm256_add_epi64(s, _mm256_sub_epi64(_mm256_xor_si256(ix, neg), neg));
    if (squares) {  // ix = a 2^29 + c, a and c < 2^29: ix^2 = a^2 2^58 + a c 2^30 + c^2
      const __m256i a = _mm256_srli_epi64(ix, 29), c = _mm256_and_si256(ix, low29);
      aa = _mm256_add_epi64(aa, _mm256_mul_epu32(a, a));
      ab = _mm256_add_epi64(ab, _mm256_mul_epu32(a, c));
      bb = _mm256_add_epi64(bb, _mm256_mul_epu32(c, c));
    }
  }
  alignas(32) std::int64_t ls[4];
  alignas(32) std::uint64_t la[4], lb[4], lc[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(ls), s);
  _mm256_store_si256(reinterpret_cast<__m256i*>(la), aa);
  _mm256_store_si256(reinterpret_cast<__m256i*>(lb), ab);
  _mm256_store_si256(reinterpret_cast<__m256i*>(lc), bb);
  std::int64_t sum = 0;
  unsigned __int128 sq = 0;
  for (int j = 0; j < 4; ++j) {
    sum += ls[j];
    if (squares)
      sq += (static_cast<unsigned __int128>(la[j]) << 58) +
            (static_cast<unsigned __int128>(lb[j]) << 30) + lc[j];
  }
  for (; k < m; ++k) {
    const std::uint64_t b = std::bit_cast<std::uint64_t>(v[k]);
    const auto e = (b >> 52) & 0x7FF;
    const auto ix = static_cast<std::int64_t>(
        ((b & ((std::uint64_t{1} << 52) - 1)) | (std::uint64_t{1} << 52)) << (e - emin));
    const auto neg = -static_cast<std::int64_t>(b >> 63);
    sum += (ix ^ neg) - neg;
    if (squares)
      sq += static_cast<unsigned __int128>(static_cast<std::uint64_t>(ix)) *
            static_cast<std::uint64_t>(ix);
  }
  sumOut = sum;
  sqOut = sq;
}

}  // namespace antler::detail
