#include "reduce/exact_sum.hpp"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>

namespace antler::detail {

namespace {
std::atomic<int> g_vector{-1};  // -1: not decided yet; else 0 scalar, 1 AVX2, 2 AVX-512

int best_level() {
  if (!__builtin_cpu_supports("avx2")) return 0;
  return __builtin_cpu_supports("avx512f") ? 2 : 1;
}
}  // namespace

int exact_vector_level() {
  int v = g_vector.load(std::memory_order_relaxed);
  if (v < 0) {
    const char* scalar = std::getenv("ANTLER_EXACT_SCALAR");
    const char* no512 = std::getenv("ANTLER_EXACT_NO_AVX512");
    v = scalar && *scalar != '0' ? 0 : std::min(best_level(), no512 && *no512 != '0' ? 1 : 2);
    g_vector.store(v, std::memory_order_relaxed);
  }
  return v;
}

int set_exact_vector_level(int level) {
  const int v = std::clamp(level, 0, best_level());
  g_vector.store(v, std::memory_order_relaxed);
  return v;
}

bool exact_vector_path() {
  return exact_vector_level() > 0;
}

void set_exact_vector_path(bool on) {
  set_exact_vector_level(on ? 2 : 0);
}

namespace {
// One vector of four values into the running exponent range of the nonzero values (a zero has
// no exponent to count: 0x7FF for the minimum, and its 0 leaves the maximum alone; the exponents
// fit the low 32 bits, the high ones are 0) and, with minmax, the extremes (x < lo ? x : lo: a
// NaN x leaves lo, as the scalar loop).
[[gnu::always_inline]] __attribute__((target("avx2"))) inline void scan_step(
    __m256d x, __m256i& vmin, __m256i& vmax, __m256d& dlo, __m256d& dhi, bool minmax) {
  const __m256i expMask = _mm256_set1_epi64x(0x7FF), zero = _mm256_setzero_si256();
  const __m256i bits = _mm256_castpd_si256(x);
  const __m256i e = _mm256_and_si256(_mm256_srli_epi64(bits, 52), expMask);
  const __m256i isZero = _mm256_cmpeq_epi64(_mm256_slli_epi64(bits, 1), zero);
  vmin = _mm256_min_epi32(vmin, _mm256_or_si256(e, _mm256_and_si256(isZero, expMask)));
  vmax = _mm256_max_epi32(vmax, e);
  if (minmax) {
    dlo = _mm256_min_pd(x, dlo);
    dhi = _mm256_max_pd(x, dhi);
  }
}
// The scan's four lanes into emin, emax (and lo, hi).
__attribute__((target("avx2"))) inline void scan_lanes(__m256i vmin, __m256i vmax, __m256d dlo,
                                                       __m256d dhi, std::uint64_t& emin,
                                                       std::uint64_t& emax, double& lo, double& hi,
                                                       bool minmax) {
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
}
}  // namespace

__attribute__((target("avx2"))) void exact_scan_avx2(const double* v, std::size_t m,
                                                     std::uint64_t& emin, std::uint64_t& emax,
                                                     double& lo, double& hi, bool minmax) {
  __m256i vmin = _mm256_set1_epi64x(static_cast<long long>(emin)),
          vmax = _mm256_set1_epi64x(static_cast<long long>(emax));
  __m256d dlo = _mm256_set1_pd(lo), dhi = _mm256_set1_pd(hi);
  std::size_t k = 0;
  for (; k + 4 <= m; k += 4) scan_step(_mm256_loadu_pd(v + k), vmin, vmax, dlo, dhi, minmax);
  scan_lanes(vmin, vmax, dlo, dhi, emin, emax, lo, hi, minmax);
  if (k < m) exact_scan(v + k, m - k, emin, emax, lo, hi, minmax);
}

namespace {
// Band j's lane sums into out: L lanes, each the sum, and the square's three parts (h^2, h l, l^2
// with x = h 2^29 + l), of at most 32 values of < 2^58 (within int64).
template <int L, bool Squares>
void add_lanes(BandSums& out, int j, const std::int64_t* s, const std::uint64_t* a,
               const std::uint64_t* p, const std::uint64_t* c) {
  for (int l = 0; l < L; ++l) {
    out.sum[j] += s[l];
    if (Squares)
      out.sq[j] += (static_cast<unsigned __int128>(a[l]) << 58) +
                   (static_cast<unsigned __int128>(p[l]) << 30) + c[l];
  }
}
// A kernel's last values, fewer than a vector (from v[whole] to v[m - 1]), by the scalar loops.
template <int Bands, bool Scan, bool Squares, bool Below>
void add_tail(const double* v, std::size_t m, std::size_t whole, std::uint64_t top,
              std::uint64_t& emin, std::uint64_t& emax, double& lo, double& hi, BandSums& out) {
  if constexpr (Scan) exact_scan(v + whole, m - whole, emin, emax, lo, hi, Squares);
  BandSums tail{};
  exact_bands(v + whole, m - whole, whole, top, Bands, Squares, tail);
  for (int j = 0; j < Bands; ++j) {
    out.sum[j] += tail.sum[j];
    out.sq[j] += tail.sq[j];
  }
  if constexpr (Below) {
    out.below[0] |= tail.below[0];
    out.below[1] |= tail.below[1];
  }
}
// exact_bands_avx2 for one choice of its flags. Per value, with e its exponent: band 1 holds
// e < top - 5 (m1); the integer is the significand shifted left by e - (top - 5) (+ 6 in band
// 1), which gives 0 for a zero or a value under the bands (a negative count wraps past 63, and
// AVX2 shifts that out); a value above the top is masked off, unless the scan will reject the
// chunk anyway. Lanes sum every band (all) and band 1 alone: band 0 is their difference.
template <int Bands, bool Scan, bool Squares, bool Below>
__attribute__((target("avx2"))) void bands_impl(const double* v, std::size_t m, std::uint64_t top,
                                                std::uint64_t& emin, std::uint64_t& emax,
                                                double& lo, double& hi, BandSums& out) {
  static_assert(Bands == 1 || Bands == 2);
  const __m256i mant = _mm256_set1_epi64x((1LL << 52) - 1),
                implicit = _mm256_set1_epi64x(1LL << 52), expMask = _mm256_set1_epi64x(0x7FF),
                topv = _mm256_set1_epi64x(static_cast<long long>(top)),
                top5 = _mm256_set1_epi64x(static_cast<long long>(top) - 5),
                bottom = _mm256_set1_epi64x(static_cast<long long>(top) - 6 * Bands + 1),
                six = _mm256_set1_epi64x(6), low29 = _mm256_set1_epi64x((1LL << 29) - 1),
                zero = _mm256_setzero_si256();
  __m256i vmin = _mm256_set1_epi64x(static_cast<long long>(emin)),
          vmax = _mm256_set1_epi64x(static_cast<long long>(emax));
  __m256d dlo = _mm256_set1_pd(lo), dhi = _mm256_set1_pd(hi);
  __m256i s = zero, a = zero, p = zero, c = zero, s1 = zero, a1 = zero, p1 = zero, c1 = zero;
  const std::size_t whole = m & ~std::size_t{3};
  for (std::size_t w = 0; w * 64 < whole; ++w) {  // a word of out.below at a time
    std::uint64_t under = 0;
    for (std::size_t k = w * 64; k < whole && k < w * 64 + 64; k += 4) {
      const __m256d x = _mm256_loadu_pd(v + k);
      if constexpr (Scan) scan_step(x, vmin, vmax, dlo, dhi, Squares);
      const __m256i b = _mm256_castpd_si256(x);
      const __m256i e = _mm256_and_si256(_mm256_srli_epi64(b, 52), expMask);
      __m256i shift = _mm256_sub_epi64(e, top5), m1 = zero;
      if constexpr (Bands == 2) {
        m1 = _mm256_cmpgt_epi64(top5, e);
        shift = _mm256_add_epi64(shift, _mm256_and_si256(m1, six));
      }
      __m256i ix = _mm256_sllv_epi64(_mm256_or_si256(_mm256_and_si256(b, mant), implicit), shift);
      if constexpr (!Scan) ix = _mm256_andnot_si256(_mm256_cmpgt_epi64(e, topv), ix);
      const __m256i neg = _mm256_cmpgt_epi64(zero, b);  // the sign bit, as a mask
      const __m256i sx = _mm256_sub_epi64(_mm256_xor_si256(ix, neg), neg);
      s = _mm256_add_epi64(s, sx);
      if constexpr (Bands == 2) s1 = _mm256_add_epi64(s1, _mm256_and_si256(m1, sx));
      if constexpr (Squares) {  // ix = h 2^29 + l, h and l < 2^29: ix^2 = h^2 2^58 + h l 2^30 + l^2
        const __m256i h = _mm256_srli_epi64(ix, 29), l = _mm256_and_si256(ix, low29);
        const __m256i hh = _mm256_mul_epu32(h, h), hl = _mm256_mul_epu32(h, l),
                      ll = _mm256_mul_epu32(l, l);
        a = _mm256_add_epi64(a, hh);
        p = _mm256_add_epi64(p, hl);
        c = _mm256_add_epi64(c, ll);
        if constexpr (Bands == 2) {
          a1 = _mm256_add_epi64(a1, _mm256_and_si256(m1, hh));
          p1 = _mm256_add_epi64(p1, _mm256_and_si256(m1, hl));
          c1 = _mm256_add_epi64(c1, _mm256_and_si256(m1, ll));
        }
      }
      if constexpr (Below) {  // under the bands, not a zero
        const __m256i isZero = _mm256_cmpeq_epi64(_mm256_slli_epi64(b, 1), zero);
        const __m256i u = _mm256_andnot_si256(isZero, _mm256_cmpgt_epi64(bottom, e));
        under |= static_cast<std::uint64_t>(_mm256_movemask_pd(_mm256_castsi256_pd(u))) << (k & 63);
      }
    }
    if constexpr (Below) out.below[w] |= under;
  }
  if constexpr (Bands == 2) {
    s = _mm256_sub_epi64(s, s1);
    a = _mm256_sub_epi64(a, a1);
    p = _mm256_sub_epi64(p, p1);
    c = _mm256_sub_epi64(c, c1);
  }
  alignas(32) std::int64_t ls[4];
  alignas(32) std::uint64_t la[4], lp[4], lc[4];
  for (int j = 0; j < Bands; ++j) {  // each lane: at most 32 values of < 2^58, within int64
    _mm256_store_si256(reinterpret_cast<__m256i*>(ls), j ? s1 : s);
    _mm256_store_si256(reinterpret_cast<__m256i*>(la), j ? a1 : a);
    _mm256_store_si256(reinterpret_cast<__m256i*>(lp), j ? p1 : p);
    _mm256_store_si256(reinterpret_cast<__m256i*>(lc), j ? c1 : c);
    add_lanes<4, Squares>(out, j, ls, la, lp, lc);
  }
  if constexpr (Scan) scan_lanes(vmin, vmax, dlo, dhi, emin, emax, lo, hi, Squares);
  if (whole < m) add_tail<Bands, Scan, Squares, Below>(v, m, whole, top, emin, emax, lo, hi, out);
}
// GCC 12 warns inside its own AVX-512 headers (the undefined vectors some intrinsics start from:
// GCC bug 105593), not in this code.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// bands_impl with eight lanes (AVX-512F): the same integers, the same sums (each lane now sums at
// most 16 values of a chunk), with mask registers where the AVX2 form builds masks in vectors.
template <int Bands, bool Scan, bool Squares, bool Below>
__attribute__((target("avx512f"))) void bands512(const double* v, std::size_t m, std::uint64_t top,
                                                 std::uint64_t& emin, std::uint64_t& emax,
                                                 double& lo, double& hi, BandSums& out) {
  static_assert(Bands == 1 || Bands == 2);
  const __m512i mant = _mm512_set1_epi64((1LL << 52) - 1), implicit = _mm512_set1_epi64(1LL << 52),
                expMask = _mm512_set1_epi64(0x7FF),
                topv = _mm512_set1_epi64(static_cast<long long>(top)),
                top5 = _mm512_set1_epi64(static_cast<long long>(top) - 5),
                bottom = _mm512_set1_epi64(static_cast<long long>(top) - 6 * Bands + 1),
                six = _mm512_set1_epi64(6), low29 = _mm512_set1_epi64((1LL << 29) - 1),
                zero = _mm512_setzero_si512();
  __m512i vmin = _mm512_set1_epi64(static_cast<long long>(emin)),
          vmax = _mm512_set1_epi64(static_cast<long long>(emax));
  __m512d dlo = _mm512_set1_pd(lo), dhi = _mm512_set1_pd(hi);
  __m512i s = zero, a = zero, p = zero, c = zero, s1 = zero, a1 = zero, p1 = zero, c1 = zero;
  const std::size_t whole = m & ~std::size_t{7};
  for (std::size_t w = 0; w * 64 < whole; ++w) {  // a word of out.below at a time
    std::uint64_t under = 0;
    for (std::size_t k = w * 64; k < whole && k < w * 64 + 64; k += 8) {
      const __m512d x = _mm512_loadu_pd(v + k);
      const __m512i b = _mm512_castpd_si512(x);
      const __m512i e = _mm512_and_si512(_mm512_srli_epi64(b, 52), expMask);
      const __mmask8 nonzero =
          _mm512_test_epi64_mask(_mm512_slli_epi64(b, 1), _mm512_slli_epi64(b, 1));
      if constexpr (Scan) {  // a zero has no exponent: it leaves both extremes of e alone
        vmin = _mm512_mask_min_epu64(vmin, nonzero, vmin, e);
        vmax = _mm512_max_epu64(vmax, e);
        if constexpr (Squares) {
          dlo = _mm512_min_pd(x, dlo);
          dhi = _mm512_max_pd(x, dhi);
        }
      }
      __m512i shift = _mm512_sub_epi64(e, top5);
      __mmask8 m1 = 0;
      if constexpr (Bands == 2) {
        m1 = _mm512_cmpgt_epi64_mask(top5, e);
        shift = _mm512_mask_add_epi64(shift, m1, shift, six);
      }
      __m512i ix = _mm512_sllv_epi64(_mm512_or_si512(_mm512_and_si512(b, mant), implicit), shift);
      if constexpr (!Scan) ix = _mm512_maskz_mov_epi64(_mm512_cmple_epi64_mask(e, topv), ix);
      const __mmask8 neg = _mm512_cmplt_epi64_mask(b, zero);  // the sign bit
      const __m512i sx = _mm512_mask_sub_epi64(ix, neg, zero, ix);
      s = _mm512_add_epi64(s, sx);
      if constexpr (Bands == 2) s1 = _mm512_mask_add_epi64(s1, m1, s1, sx);
      if constexpr (Squares) {  // ix = h 2^29 + l, h and l < 2^29: ix^2 = h^2 2^58 + h l 2^30 + l^2
        const __m512i h = _mm512_srli_epi64(ix, 29), l = _mm512_and_si512(ix, low29);
        const __m512i hh = _mm512_mul_epu32(h, h), hl = _mm512_mul_epu32(h, l),
                      ll = _mm512_mul_epu32(l, l);
        a = _mm512_add_epi64(a, hh);
        p = _mm512_add_epi64(p, hl);
        c = _mm512_add_epi64(c, ll);
        if constexpr (Bands == 2) {
          a1 = _mm512_mask_add_epi64(a1, m1, a1, hh);
          p1 = _mm512_mask_add_epi64(p1, m1, p1, hl);
          c1 = _mm512_mask_add_epi64(c1, m1, c1, ll);
        }
      }
      if constexpr (Below)  // under the bands, not a zero
        under |= static_cast<std::uint64_t>(_mm512_mask_cmpgt_epi64_mask(nonzero, bottom, e))
                 << (k & 63);
    }
    if constexpr (Below) out.below[w] |= under;
  }
  if constexpr (Bands == 2) {
    s = _mm512_sub_epi64(s, s1);
    a = _mm512_sub_epi64(a, a1);
    p = _mm512_sub_epi64(p, p1);
    c = _mm512_sub_epi64(c, c1);
  }
  alignas(64) std::int64_t ls[8];
  alignas(64) std::uint64_t la[8], lp[8], lc[8];
  for (int j = 0; j < Bands; ++j) {
    _mm512_store_si512(ls, j ? s1 : s);
    _mm512_store_si512(la, j ? a1 : a);
    _mm512_store_si512(lp, j ? p1 : p);
    _mm512_store_si512(lc, j ? c1 : c);
    add_lanes<8, Squares>(out, j, ls, la, lp, lc);
  }
  if constexpr (Scan) {
    alignas(64) std::uint64_t mn[8], mx[8];
    alignas(64) double dl[8], dh[8];
    _mm512_store_si512(mn, vmin);
    _mm512_store_si512(mx, vmax);
    _mm512_store_pd(dl, dlo);
    _mm512_store_pd(dh, dhi);
    for (int j = 0; j < 8; ++j) {
      emin = mn[j] < emin ? mn[j] : emin;
      emax = mx[j] > emax ? mx[j] : emax;
      if (Squares) {
        lo = dl[j] < lo ? dl[j] : lo;
        hi = dh[j] > hi ? dh[j] : hi;
      }
    }
  }
  if (whole < m) add_tail<Bands, Scan, Squares, Below>(v, m, whole, top, emin, emax, lo, hi, out);
}
#pragma GCC diagnostic pop
}  // namespace

void exact_bands_avx2(const double* v, std::size_t m, std::uint64_t top, int bands, bool scan,
                      bool squares, bool below, std::uint64_t& emin, std::uint64_t& emax,
                      double& lo, double& hi, BandSums& out) {
  using F = void (*)(const double*, std::size_t, std::uint64_t, std::uint64_t&, std::uint64_t&,
                     double&, double&, BandSums&);
#define ANTLER_BANDS(B, S)                                             \
  {                                                                    \
    {bands_impl<B, S, false, false>, bands_impl<B, S, false, true>}, { \
      bands_impl<B, S, true, false>, bands_impl<B, S, true, true>      \
    }                                                                  \
  }
  static constexpr F table[2][2][2][2] = {{ANTLER_BANDS(1, false), ANTLER_BANDS(1, true)},
                                          {ANTLER_BANDS(2, false), ANTLER_BANDS(2, true)}};
#undef ANTLER_BANDS
#define ANTLER_BANDS(B, S)                                         \
  {                                                                \
    {bands512<B, S, false, false>, bands512<B, S, false, true>}, { \
      bands512<B, S, true, false>, bands512<B, S, true, true>      \
    }                                                              \
  }
  static constexpr F table512[2][2][2][2] = {{ANTLER_BANDS(1, false), ANTLER_BANDS(1, true)},
                                             {ANTLER_BANDS(2, false), ANTLER_BANDS(2, true)}};
#undef ANTLER_BANDS
  (exact_vector_level() == 2 ? table512 : table)[bands - 1][scan][squares][below](
      v, m, top, emin, emax, lo, hi, out);
}

__attribute__((target("avx2,popcnt"))) bool count_flags_avx2(const double* v, std::size_t n,
                                                             std::size_t& ones) {
  const __m256i zero = _mm256_setzero_si256(),
                one = _mm256_set1_epi64x(static_cast<long long>(std::bit_cast<std::uint64_t>(1.0)));
  std::size_t count = 0, k = 0;
  for (; k + 8 <= n; k += 8) {  // two vectors a round: one test of both
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + k));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + k + 4));
    const __m256i oa = _mm256_cmpeq_epi64(a, one), ob = _mm256_cmpeq_epi64(b, one);
    const __m256i ok = _mm256_and_si256(_mm256_or_si256(oa, _mm256_cmpeq_epi64(a, zero)),
                                        _mm256_or_si256(ob, _mm256_cmpeq_epi64(b, zero)));
    if (_mm256_movemask_pd(_mm256_castsi256_pd(ok)) != 0xF) return false;
    count += static_cast<std::size_t>(__builtin_popcount(
        static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(oa)) |
                              (_mm256_movemask_pd(_mm256_castsi256_pd(ob)) << 4))));
  }
  for (; k < n; ++k) {
    const std::uint64_t b = std::bit_cast<std::uint64_t>(v[k]);
    if (b != 0 && b != std::bit_cast<std::uint64_t>(1.0)) return false;
    count += b != 0;
  }
  ones = count;
  return true;
}

__attribute__((target("avx2"))) void exact_below_avx2(const double* v, std::size_t m,
                                                      std::uint64_t bottom, BandSums& out) {
  const __m256i expMask = _mm256_set1_epi64x(0x7FF), zero = _mm256_setzero_si256(),
                bot = _mm256_set1_epi64x(static_cast<long long>(bottom));
  std::size_t k = 0;
  for (; k + 4 <= m; k += 4) {
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + k));
    const __m256i e = _mm256_and_si256(_mm256_srli_epi64(b, 52), expMask);
    const __m256i isZero = _mm256_cmpeq_epi64(_mm256_slli_epi64(b, 1), zero);
    const __m256i under = _mm256_andnot_si256(isZero, _mm256_cmpgt_epi64(bot, e));
    if (const int bits = _mm256_movemask_pd(_mm256_castsi256_pd(under)))
      out.below[k >> 6] |= static_cast<std::uint64_t>(bits) << (k & 63);
  }
  for (; k < m; ++k) {
    const std::uint64_t b = std::bit_cast<std::uint64_t>(v[k]);
    if ((b << 1) && ((b >> 52) & 0x7FF) < bottom) out.below[k >> 6] |= std::uint64_t{1} << (k & 63);
  }
}

}  // namespace antler::detail

namespace antler {

namespace {

constexpr std::uint64_t kBase = std::uint64_t{1} << 32;
constexpr double kInf = std::numeric_limits<double>::infinity();

// A nonnegative integer M = sum of g(k) 2^(32 k) over k in [j, t], in units of 2^-1074: g(j) and
// g(t) nonzero, every digit in [0, 2^32) but g(t), which may be larger (then M is past any double).
// Rounds M to a double (to nearest, ties to even) and says where it cut, for the rest.
struct Cut {
  std::uint64_t bits;  // the double's bits (no sign)
  std::int64_t drop;   // bits of M below the kept ones (0: M is exact in the double)
  bool up;             // rounded up (the rest M - rounded is negative)
  bool inf;            // past the largest double
};

template <class G>
Cut round_digits(const G& g, int j, int t) {
  const auto D = [&](int k) -> std::uint64_t { return k >= j ? g(k) : 0; };  // k <= t always
  if (D(t) >> 32) return {0, 0, false, true};
  const std::int64_t length = 32 * static_cast<std::int64_t>(t) + std::bit_width(D(t));
  const std::int64_t lead = length - 1 - 1074;  // the leading bit is worth 2^lead
  if (lead >= 1024) return {0, 0, false, true};
  // Keep 53 bits (normal) or every bit down to 2^-1074 (subnormal); drop the rest.
  const std::int64_t keep = lead >= -1022 ? 53 : length, drop = length - keep;
  // W: M's bits [32 (t - 3), 32 (t + 1)); any digit below those is nonzero exactly when j < t - 3.
  const unsigned __int128 W = (static_cast<unsigned __int128>(D(t)) << 96) |
                              (static_cast<unsigned __int128>(D(t - 1)) << 64) |
                              (static_cast<unsigned __int128>(D(t - 2)) << 32) | D(t - 3);
  const std::int64_t shift = drop - 32 * (static_cast<std::int64_t>(t) - 3);  // in (0, 76)
  std::uint64_t K = static_cast<std::uint64_t>(W >> shift);
  const bool roundBit = (W >> (shift - 1)) & 1;
  const bool sticky =
      j < t - 3 || (shift > 1 && (W & ((static_cast<unsigned __int128>(1) << (shift - 1)) - 1)));
  const bool up = roundBit && (sticky || (K & 1));
  K += up;
  if (drop == 0)
    return {K, 0, false, false};  // a subnormal: K is its bits (2^52: the smallest normal)
  std::int64_t biased = drop - 1074 + 52 + 1023;
  if (K >> 53) {  // rounding carried into a new binade
    K >>= 1;
    ++biased;
  }
  if (biased >= 2047) return {0, 0, false, true};
  return {static_cast<std::uint64_t>(biased) << 52 | (K & ((std::uint64_t{1} << 52) - 1)), drop, up,
          false};
}

double with_sign(std::uint64_t bits, bool neg) {
  return std::bit_cast<double>(bits | (neg ? std::uint64_t{1} << 63 : 0));
}

}  // namespace

void ExactSum::split(double& hi, double& lo, bool withRest) const {
  lo = 0;
  carry();  // digits [lo_, hi_): each in [0, 2^32) but the highest, which holds the sign
  int t = static_cast<int>(hi_);
  while (lo_ <= hi_ && t >= static_cast<int>(lo_) && d_[static_cast<std::size_t>(t)] == 0) --t;
  if (lo_ > hi_ || t < static_cast<int>(lo_)) {
    hi = zeros_ == 1 ? -0.0 : 0.0;  // an exact zero: +0 unless only -0.0s
    return;
  }
  const int j = static_cast<int>(lo_);  // the lowest nonzero digit (carry() skips zeros)
  const bool neg = d_[static_cast<std::size_t>(t)] < 0;
  // The magnitude's digits, read in place: a negative sum's are its two's complement in base
  // 2^32 (B - d at the lowest nonzero digit, B - 1 - d above it, -d - 1 at the top).
  const auto mag = [&](int k) -> std::uint64_t {
    const std::int64_t d = d_[static_cast<std::size_t>(k)];
    if (!neg) return static_cast<std::uint64_t>(d);
    if (k == t) return static_cast<std::uint64_t>(-d - (j < t ? 1 : 0));
    return k == j ? kBase - static_cast<std::uint64_t>(d)
                  : kBase - 1 - static_cast<std::uint64_t>(d);
  };
  int top = t;
  while (top > j && mag(top) == 0) --top;
  const Cut c = round_digits(mag, j, top);
  if (c.inf) {
    hi = neg ? -kInf : kInf;
    return;
  }
  hi = with_sign(c.bits, neg);
  if (!withRest || c.drop == 0) return;
  // The rest: L = M mod 2^drop, the bits cut off; M - rounded is L, or -(2^drop - L) if rounded up.
  const int q = static_cast<int>(c.drop >> 5), r = static_cast<int>(c.drop & 31);
  const auto L = [&](int k) -> std::uint64_t {
    return k < q ? mag(k) : k == q ? mag(k) & ((std::uint64_t{1} << r) - 1) : 0;
  };
  int lt = std::min(q, top);
  while (lt >= j && L(lt) == 0) --lt;
  if (lt < j) return;  // nothing cut off (then it did not round up)
  if (!c.up) {
    lo = with_sign(round_digits(L, j, lt).bits, neg);
    return;
  }
  // C = 2^drop - L (0 < C <= 2^(drop - 1)): the complement of L's digits below q, and at q
  // 2^r less L's digit there less the borrow from below.
  const auto C = [&](int k) -> std::uint64_t {
    if (k == q) return (std::uint64_t{1} << r) - (j < q ? 1 : 0) - L(q);
    return k == j ? kBase - L(k) : kBase - 1 - L(k);
  };
  int ct = q;
  while (ct > j && C(ct) == 0) --ct;
  lo = with_sign(round_digits(C, j, ct).bits, !neg);
}

}  // namespace antler
