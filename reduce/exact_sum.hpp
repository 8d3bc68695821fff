#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// ExactSum: the exact sum of any number of doubles, rounded once, correctly (to nearest, ties to
/// even), when it is read. Two accumulators merge exactly, so a sum folded over threads and nodes
/// in any grouping and any order has the same bits as the serial one: the correctly rounded sum of
/// the values (what Python's math.fsum returns).
///
/// How: a superaccumulator (in the manner of Neal's "small superaccumulator", written here from
/// scratch). Every finite double is an integer multiple of 2^-1074; the accumulator holds that
/// integer in 67 signed 64-bit digits, digit i worth 2^(32 i - 1074). Adding a value adds its
/// 53-bit significand, shifted into place, to two adjacent digits (no rounding, no branch on the
/// data's magnitude); every 1023 adds the digits are normalised (each carries its bits above 32
/// into the next), so no digit overflows. A sum is therefore exact for any count of values below
/// 2^64, whatever their magnitudes, signs and order; reading it rounds once.
///
/// Special values follow IEEE: a NaN, or infinities of both signs, make the sum NaN; infinities
/// of one sign make it that infinity; a finite sum beyond the largest double rounds to an
/// infinity. An empty sum is +0; a sum of -0.0s only is -0.0.
///
/// Reading normalises the digits in place (the value does not change), so even const calls write:
/// one ExactSum is read by one thread at a time, as a reduce class's partials are.
///
/// Reuse in a reduce class of your own: hold an ExactSum, add() in primaryReduce, merge() in
/// secondaryReduce and tertiaryReduce, and let it travel with the class: write(w) and read(r)
/// in the class's own write/read (the compact form: only the digits in use, at most
/// kSerializedSizeBound bytes), or `ar & sum` in a Boost serialize. ReduceSum and ReduceStats
/// (reduce/reduce_extremes.hpp, reduce/reduce_stats.hpp) are two such classes.
#include <algorithm>
#include <array>
#include <bit>
#include <boost/serialization/access.hpp>
#include <boost/serialization/split_member.hpp>
#include <boost/serialization/vector.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/buffer.hpp"

namespace antler {

namespace detail {
// The fast path's kernels with AVX2 (reduce/exact_sum.cpp), used where the CPU has it; the scalar
// loops in ExactSum give the same bits (both are exact). ANTLER_EXACT_SCALAR=1 forces the scalar
// loops; set_exact_vector_path switches for a test.
bool exact_vector_path();
void set_exact_vector_path(bool on);
// Which kernels: 0 the scalar loops, 1 AVX2, 2 AVX2 with the band sums in AVX-512 (the best the
// CPU has, unless ANTLER_EXACT_SCALAR=1 or ANTLER_EXACT_NO_AVX512=1 say less). All give the same
// bits. set_exact_vector_level asks for one (a test), returns the one the CPU allows.
int exact_vector_level();
int set_exact_vector_level(int level);
// A chunk's values by band, for ExactSum's fast path (below). Band j of a chunk with top exponent
// `top` holds the values with biased exponents in [top - 6j - 5, top - 6j]: each is exactly a
// 58-bit integer times 2^(top - 6j - 5 - 1075), and its square a 116-bit integer times the square
// of that. sum[j] and sq[j] are those integers summed (a chunk is at most 128 values); below[]
// has bit k set for each nonzero value k under the lowest band (a subnormal counts as one), which
// the caller adds another way. Values above `top` are in no band and not flagged.
struct BandSums {
  static constexpr int kMaxBands = 2;
  __int128 sum[kMaxBands];
  unsigned __int128 sq[kMaxBands];
  std::uint64_t below[2];
};
// The band sums of v[0, m) (m <= 128) over `bands` (1 or 2) bands from `top` (top >= 6 bands, so
// that a zero falls under them), with AVX2; with below, out.below too; with scan, also the
// exponent range of the nonzero values and (minmax) the extremes, as exact_scan, in the same pass
// (then values above top are not masked off: the caller rejects such a chunk by its emax).
void exact_bands_avx2(const double* v, std::size_t m, std::uint64_t top, int bands, bool scan,
                      bool squares, bool below, std::uint64_t& emin, std::uint64_t& emax,
                      double& lo, double& hi, BandSums& out);
// True if every one of v[0, n) is +0.0 or 1.0 (by its bits: -0.0 is not), with `ones` set to how
// many are 1.0: a block of spike flags, whose exact sum is that count; false at the first value
// that is neither (then `ones` means nothing). With AVX2: the caller checks exact_vector_path().
bool count_flags_avx2(const double* v, std::size_t n, std::size_t& ones);
// out.below alone: the nonzero values with exponents under `bottom`.
void exact_below_avx2(const double* v, std::size_t m, std::uint64_t bottom, BandSums& out);
void exact_scan_avx2(const double* v, std::size_t m, std::uint64_t& emin, std::uint64_t& emax,
                     double& lo, double& hi, bool minmax);
// The scalar forms: the same results, value by value.
inline void exact_scan(const double* v, std::size_t m, std::uint64_t& emin, std::uint64_t& emax,
                       double& lo, double& hi, bool minmax) {
  for (std::size_t k = 0; k < m; ++k) {
    const std::uint64_t b = std::bit_cast<std::uint64_t>(v[k]), e = (b >> 52) & 0x7FF;
    if (b << 1) {  // (a zero has no exponent to count)
      emin = e < emin ? e : emin;
      emax = e > emax ? e : emax;
    }
    if (minmax) {
      lo = v[k] < lo ? v[k] : lo;
      hi = v[k] > hi ? v[k] : hi;
    }
  }
}
/// Adds v[0, m) into out's bands (from `top`; values at offset `at` in the chunk, for below[]).
template <int Bands>
inline void exact_bands_n(const double* v, std::size_t m, std::size_t at, std::uint64_t top,
                          bool squares, BandSums& out) {
  __int128 s0 = 0, s1 = 0;
  unsigned __int128 q0 = 0, q1 = 0;
  for (std::size_t k = 0; k < m; ++k) {
    const std::uint64_t b = std::bit_cast<std::uint64_t>(v[k]), e = (b >> 52) & 0x7FF;
    if (!(b << 1) || e > top) continue;  // a zero, or above the bands
    const std::uint64_t d = top - e;
    if (d >= 6u * Bands || e == 0) {  // (a subnormal too: top >= 6 Bands)
      out.below[(at + k) >> 6] |= std::uint64_t{1} << ((at + k) & 63);
      continue;
    }
    const bool second = Bands == 2 && d >= 6;
    const std::uint64_t ix = ((b & ((std::uint64_t{1} << 52) - 1)) | (std::uint64_t{1} << 52))
                             << (5 - d + (second ? 6 : 0));
    const auto neg = -static_cast<std::int64_t>(b >> 63);  // 0 or -1: a branch-free negation
    const std::int64_t sx = (static_cast<std::int64_t>(ix) ^ neg) - neg;  // (|ix| < 2^58)
    const unsigned __int128 qx = squares ? static_cast<unsigned __int128>(ix) * ix : 0;
    if (second) {
      s1 += sx;
      q1 += qx;
    } else {
      s0 += sx;
      q0 += qx;
    }
  }
  out.sum[0] += s0;
  out.sq[0] += q0;
  if (Bands == 2) {
    out.sum[1] += s1;
    out.sq[1] += q1;
  }
}
inline void exact_bands(const double* v, std::size_t m, std::size_t at, std::uint64_t top,
                        int bands, bool squares, BandSums& out) {
  if (bands == 1)
    exact_bands_n<1>(v, m, at, top, squares, out);
  else
    exact_bands_n<2>(v, m, at, top, squares, out);
}
}  // namespace detail

class ExactSum {
 public:
  static constexpr int kDigits = 67;
  /// Bytes its Boost serialization takes at most (binary archive): the flags, the range of digits
  /// in use, and those digits.
  static constexpr std::size_t kSerializedSizeBound = 3 + 8 * kDigits;

  ExactSum() {}  // no digits in use: nothing to initialise
  /// Copies take the digits in use only.
  ExactSum(const ExactSum& o) { *this = o; }
  ExactSum& operator=(const ExactSum& o) {
    if (this == &o) return *this;
    lo_ = o.lo_;
    hi_ = o.hi_;
    for (unsigned k = lo_; k <= hi_ && k < kDigits; ++k) d_[k] = o.d_[k];
    untilCarry_ = o.untilCarry_;
    nan_ = o.nan_;
    posInf_ = o.posInf_;
    negInf_ = o.negInf_;
    zeros_ = o.zeros_;
    hintTop_ = o.hintTop_;
    hintBands_ = o.hintBands_;
    hintBelow_ = o.hintBelow_;
    return *this;
  }

  /// Back to the empty sum.
  void clear() {
    lo_ = kDigits;
    hi_ = 0;
    untilCarry_ = kCarryEvery;
    nan_ = posInf_ = negInf_ = false;
    zeros_ = 0;
  }

  /// Adds one value (exactly).
  void add(double x) {
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
    const std::uint64_t e = (bits >> 52) & 0x7FF;
    std::uint64_t m = bits & ((std::uint64_t{1} << 52) - 1);
    if (e == 0x7FF) [[unlikely]]
      return special(bits, m);
    if (e == 0) [[unlikely]] {
      if (m == 0) {  // a zero: only its sign matters (a sum of -0.0s only is -0.0)
        zeros_ = std::max<std::uint8_t>(zeros_, (bits >> 63) ? 1 : 2);
        return;
      }
    } else {
      m |= std::uint64_t{1} << 52;
    }
    zeros_ = 2;
    const std::uint64_t p = e ? e - 1 : 0;  // the significand's lowest bit is worth 2^(p - 1074)
    const unsigned i = static_cast<unsigned>(p >> 5), s = static_cast<unsigned>(p & 31);
    auto lo = static_cast<std::int64_t>((m << s) & 0xFFFFFFFFu);
    auto hi = static_cast<std::int64_t>(m >> (32 - s));
    const auto neg = -static_cast<std::int64_t>(bits >> 63);  // 0 or -1: a branch-free negation
    lo = (lo ^ neg) - neg;
    hi = (hi ^ neg) - neg;
    if (i < lo_ || i + 1 > hi_) [[unlikely]]
      touch(i, i + 1);
    d_[i] += lo;
    d_[i + 1] += hi;
    if (--untilCarry_ == 0) [[unlikely]]
      carry();
  }
  /// Adds n values (exactly; the fast path below where it applies).
  void add(const double* x, std::size_t n) { addBlock<false>(x, n, nullptr, nullptr, nullptr); }
  /// Adds n values to this sum and their squares to `squares` (each square exact, as in
  /// addProduct), and updates mn and mx (NaN skipped): ReduceStats' fold.
  void addWithSquares(const double* x, std::size_t n, ExactSum& squares, double& mn, double& mx) {
    addBlock<true>(x, n, &squares, &mn, &mx);
  }
  /// Adds x * y exactly: the 106-bit product of the significands, placed by integer arithmetic
  /// (no rounding, no fma needed). Two limits: a product of 2^1038 or more (beyond what the
  /// digits keep with room for carries) counts as an infinity of its sign, and the part of a
  /// product below 2^-1074 is dropped.
  void addProduct(double x, double y) {
    const std::uint64_t bx = std::bit_cast<std::uint64_t>(x), by = std::bit_cast<std::uint64_t>(y);
    const std::uint64_t ex = (bx >> 52) & 0x7FF, ey = (by >> 52) & 0x7FF;
    if (ex == 0x7FF || ey == 0x7FF) [[unlikely]]
      return add(x * y);  // an infinity or NaN: its IEEE product
    std::uint64_t mx = bx & ((std::uint64_t{1} << 52) - 1),
                  my = by & ((std::uint64_t{1} << 52) - 1);
    if (ex) mx |= std::uint64_t{1} << 52;
    if (ey) my |= std::uint64_t{1} << 52;
    const bool neg = (bx ^ by) >> 63;
    if (mx == 0 || my == 0) {  // a zero product: only its sign
      zeros_ = std::max<std::uint8_t>(zeros_, neg ? 1 : 2);
      return;
    }
    zeros_ = 2;
    // x = mx 2^(px - 1074), y = my 2^(py - 1074): x y = mx my 2^((px + py - 1074) - 1074).
    const int px = ex ? static_cast<int>(ex) - 1 : 0, py = ey ? static_cast<int>(ey) - 1 : 0;
    int p = px + py - 1074;
    unsigned __int128 v = static_cast<unsigned __int128>(mx) * my;
    if (p < 0) {  // below 2^-1074: dropped
      if (p <= -128) return;
      v >>= -p;
      p = 0;
    }
    const int width = v >> 64 ? 128 - std::countl_zero(static_cast<std::uint64_t>(v >> 64))
                              : 64 - std::countl_zero(static_cast<std::uint64_t>(v));
    if (p + width > 32 * (kDigits - 1)) {  // beyond the range: an infinity of its sign
      (neg ? negInf_ : posInf_) = true;
      return;
    }
    addWide(neg, v, p);
  }
  /// Adds another accumulator's sum (exactly).
  void merge(const ExactSum& o) {
    // A digit grows by less than 2^52 an add and holds at most 2^32 after a carry, so two sums
    // whose adds since their carries total under kCarryEvery add digit by digit as they are;
    // otherwise both are normalised first.
    const int used = (kCarryEvery - untilCarry_) + (kCarryEvery - o.untilCarry_) + 1;
    if (used < kCarryEvery) {
      untilCarry_ = kCarryEvery - used;
    } else {
      carry();
      o.carry();
      untilCarry_ = kCarryEvery - 1;
    }
    if (o.lo_ <= o.hi_) {
      touch(o.lo_, o.hi_);
      for (unsigned k = o.lo_; k <= o.hi_; ++k) d_[k] += o.d_[k];
    }
    nan_ |= o.nan_;
    posInf_ |= o.posInf_;
    negInf_ |= o.negInf_;
    zeros_ = std::max(zeros_, o.zeros_);
  }

  /// The sum, correctly rounded (to nearest, ties to even).
  double value() const {
    if (nan_ || (posInf_ && negInf_)) return std::numeric_limits<double>::quiet_NaN();
    if (posInf_) return std::numeric_limits<double>::infinity();
    if (negInf_) return -std::numeric_limits<double>::infinity();
    double hi, lo;
    split(hi, lo, false);
    return hi;
  }
  /// The sum minus value(), correctly rounded: value() + rest() holds about 106 bits of it (for
  /// a digest that needs more than one double's worth of the exact sum). 0 for a sum that is not
  /// finite.
  double rest() const {
    if (nan_ || posInf_ || negInf_) return 0;
    double hi, lo;
    split(hi, lo, true);
    return lo;
  }
  /// value() and rest() at once (one pass over the digits): hi the sum correctly rounded, lo the
  /// rest (sum - hi) correctly rounded.
  void split(double& hi, double& lo) const {
    if (nan_ || posInf_ || negInf_) {
      hi = value();
      lo = 0;
      return;
    }
    split(hi, lo, true);
  }
  bool isFinite() const { return !(nan_ || posInf_ || negInf_); }

  /// The compact form (Codec uses it): flags, the range of digits in use, those digits.
  void write(Writer& w) const {
    carry();
    const ExactSum& c = *this;
    std::uint8_t lo = 0, hi = 0;  // the digits to send: [lo, hi)
    if (lo_ <= hi_) {
      lo = static_cast<std::uint8_t>(lo_);
      hi = static_cast<std::uint8_t>(hi_ + 1);
      while (hi > lo && c.d_[hi - 1u] == 0) --hi;
      while (lo < hi && c.d_[lo] == 0) ++lo;
    }
    w.put<std::uint8_t>(flags()).put<std::uint8_t>(lo).put<std::uint8_t>(hi);
    w.buffer().append(c.d_.data() + lo, sizeof(std::int64_t) * (hi - lo));
  }
  static ExactSum read(Reader& r) {
    ExactSum s;
    s.readFrom(r);
    return s;
  }
  /// Replaces this sum with one in the compact form. The digits must be normalised, as write()
  /// leaves them; anything else is a corrupted buffer (CommError), and this sum is left as it was.
  void readFrom(Reader& r) {
    const auto* h = reinterpret_cast<const unsigned char*>(r.take(3));
    const unsigned f = h[0], lo = h[1], hi = h[2];
    if (lo > hi || hi > kDigits || (f >> 5) || ((f >> 3) & 3) == 3)
      throw CommError("corrupted buffer: an ExactSum with digits [" + std::to_string(lo) + ", " +
                      std::to_string(hi) + ") of " + std::to_string(kDigits) + ", flags " +
                      std::to_string(f));
    const char* p = r.take(sizeof(std::int64_t) * (hi - lo));
    std::int64_t in[kDigits];
    std::memcpy(in, p, sizeof(std::int64_t) * (hi - lo));
    // Every digit but the highest in [0, 2^32); the highest in [-2^32, 2^32), or within 2^62
    // for the last digit, which never carries.
    std::uint64_t wild = 0;
    for (unsigned k = 0; k + 1 < hi - lo; ++k) wild |= static_cast<std::uint64_t>(in[k]) >> 32;
    if (lo < hi) {
      const std::int64_t top = in[hi - lo - 1], most = std::int64_t{1} << (hi == kDigits ? 62 : 32);
      wild |= top < -most || top >= most;
    }
    if (wild)
      throw CommError("corrupted buffer: an ExactSum whose digits [" + std::to_string(lo) + ", " +
                      std::to_string(hi) + ") are not normalised");
    std::memcpy(d_.data() + lo, in, sizeof(std::int64_t) * (hi - lo));
    lo_ = lo < hi ? lo : kDigits;
    hi_ = lo < hi ? hi - 1u : 0;
    untilCarry_ = kCarryEvery - 1;
    setFlags(static_cast<std::uint8_t>(f));
  }

  template <class Ar>
  void save(Ar& ar, unsigned) const {
    ByteBuffer b;
    Writer w(b);
    write(w);
    std::vector<char> bytes(b.data(), b.data() + b.size());
    ar& bytes;
  }
  template <class Ar>
  void load(Ar& ar, unsigned) {
    std::vector<char> bytes;
    ar& bytes;
    Reader r(bytes.data(), bytes.size());
    *this = read(r);
  }
  BOOST_SERIALIZATION_SPLIT_MEMBER()

 private:
  static constexpr int kCarryEvery = 1023;  // adds of < 2^53 each before a digit could overflow

  /// The fast path, a chunk of up to 128 values at a time. Zeros add nothing (only their signs
  /// count). The nonzero values of a chunk's top one or two bands of 6 binades
  /// (detail::BandSums) are summed, with their squares, as integers in one vector pass; the few
  /// under them (a population's Vm: neurons just reset to a tiny vReset) are summed the same way
  /// value by value, in the bands further down, or, where a chunk has many, by another vector
  /// pass. A chunk tries the bands of the one before it first, scanning its exponent range and
  /// extremes in the same pass, and keeps the sums if nothing lay above them (smooth data: the
  /// common case). Band sums at the same places add up as integers over up to 16 chunks before
  /// they go to the digits. A chunk with infinities or NaNs, or whose bands would leave the
  /// digits' range (squares of |x| >= 2^512 or bands under 2^-485), and a value that no band can
  /// hold (a subnormal, one 48 binades or more under the top), take the value-by-value path.
  /// Both are exact, so they agree to the bit. With Squares, mn and mx take the chunk's extremes
  /// too (NaNs skipped).
  template <bool Squares>
  void addBlock(const double* x, std::size_t n, ExactSum* squares, double* mn, double* mx) {
    constexpr std::size_t kChunk = 128;  // a kernel lane sums at most 32 values of < 2^58
    // A band's base exponent must keep its sums on the digits (x^2 at 2 (base - 1075) + 1074 >= 0
    // for squares, x at base - 1 >= 0), and a top band's squares within them.
    constexpr std::uint64_t kMinBase = Squares ? 538 : 1, kMaxTop = Squares ? 1534 : 2046;
    double lo = Squares ? *mn : 0, hi = Squares ? *mx : 0;
    const bool vec = detail::exact_vector_path();
    // The bands the last chunk took (kept from call to call: a reduce class's partial folds a
    // population's field a block at a time, step after step).
    // A guess left by the other form (add's bands may reach where squares cannot) is dropped.
    std::uint64_t hintTop = hintTop_;
    int hintBands = hintBands_;
    bool hintBelow = hintBelow_;
    if (hintTop > kMaxTop || hintTop + 1 < kMinBase + 6 * static_cast<unsigned>(hintBands))
      hintBands = 0;
    Pending<Squares> pend;
    for (std::size_t at = 0; at < n; at += kChunk) {
      const std::size_t m = n - at < kChunk ? n - at : kChunk;
      const double* v = x + at;
      const bool wide = vec && m >= 8;       // a short chunk costs less in scalar loops
      std::uint64_t emin = 0x7FF, emax = 0;  // over the nonzero values
      detail::BandSums b{};
      bool scanned = false;
      if (wide && hintBands) {
        detail::exact_bands_avx2(v, m, hintTop, hintBands, true, Squares, hintBelow, emin, emax, lo,
                                 hi, b);
        scanned = true;
        if (emin <= emax && emax <= hintTop) {
          const std::uint64_t bottom = hintTop - 6 * static_cast<unsigned>(hintBands) + 1;
          if (emin < bottom && !hintBelow) detail::exact_below_avx2(v, m, bottom, b);
          hintBelow = emin < bottom;
          addBands<Squares>(pend, b, v, m, hintTop, hintBands, squares);
          continue;
        }
        b = {};  // (min and max are taken: the same values give the same extremes)
      }
      if (!scanned) {
        if (wide)
          detail::exact_scan_avx2(v, m, emin, emax, lo, hi, Squares);
        else
          detail::exact_scan(v, m, emin, emax, lo, hi, Squares);
      }
      if (emin > emax) {  // zeros only: a sum of -0.0s only is -0.0
        std::uint8_t z = 1;
        if (zeros_ < 2)
          for (std::size_t k = 0; k < m; ++k)
            if (!std::signbit(v[k])) {
              z = 2;
              break;
            }
        zeros_ = std::max(zeros_, z);
        if constexpr (Squares) squares->zeros_ = 2;
        continue;
      }
      if (emax > kMaxTop || emax < kMinBase + 5) {
        for (std::size_t k = 0; k < m; ++k) addOne<Squares>(v[k], squares);
        continue;
      }
      const int bands = emax - emin <= 5 || emax < kMinBase + 11 ? 1 : 2;
      const bool below = emin + 6 * static_cast<unsigned>(bands) <= emax;
      if (wide)
        detail::exact_bands_avx2(v, m, emax, bands, false, Squares, below, emin, emax, lo, hi, b);
      else
        detail::exact_bands(v, m, 0, emax, bands, Squares, b);
      addBands<Squares>(pend, b, v, m, emax, bands, squares);
      hintTop = emax;
      hintBands = bands;
      hintBelow = below;
    }
    flush(pend, squares);
    hintTop_ = static_cast<std::uint16_t>(hintTop);
    hintBands_ = static_cast<std::uint8_t>(hintBands);
    hintBelow_ = hintBelow;
    if constexpr (Squares) {
      *mn = lo;
      *mx = hi;
    }
  }
  /// Band sums waiting to go to the digits: bands 0-7 from `top`, as in detail::BandSums. Each
  /// chunk adds at most 128 values to a band (sq < 2^123), so 16 chunks fit 128 bits.
  template <bool Squares>
  struct Pending {
    static constexpr int kBands = 8, kChunks = 16;
    std::uint64_t top = 0;
    int chunks = 0;
    unsigned used = 0;  // the bands holding something
    __int128 sum[kBands];
    unsigned __int128 sq[kBands];
    void add(int j, __int128 s, unsigned __int128 q) {
      if (used >> j & 1) {
        sum[j] += s;
        if constexpr (Squares) sq[j] += q;
      } else {
        used |= 1u << j;
        sum[j] = s;
        if constexpr (Squares) sq[j] = q;
      }
    }
  };
  template <bool Squares>
  void flush(Pending<Squares>& pend, ExactSum* squares) {
    for (; pend.used; pend.used &= pend.used - 1) {
      // Band j: integers times 2^(base - 1075), digit position base - 1 (as in add()); their
      // squares times 2^(2 (base - 1075)), position 2 (base - 1075) + 1074.
      const int j = std::countr_zero(pend.used), base = static_cast<int>(pend.top) - 6 * j - 5;
      const __int128 s = pend.sum[j];
      addWide(s < 0, static_cast<unsigned __int128>(s < 0 ? -s : s), base - 1);
      if constexpr (Squares) squares->addWide(false, pend.sq[j], 2 * (base - 1075) + 1074);
    }
    pend.chunks = 0;
  }
  /// Adds a chunk's band sums (bands from top) and the values under them.
  template <bool Squares>
  void addBands(Pending<Squares>& pend, const detail::BandSums& b, const double* v, std::size_t m,
                std::uint64_t top, int bands, ExactSum* squares) {
    constexpr std::uint64_t kMinBase = Squares ? 538 : 1;
    // With kMany values or more under the bands, another vector pass takes them (it costs about
    // what 16 values one by one do).
    constexpr int kMany = 16;
    zeros_ = 2;
    if constexpr (Squares) squares->zeros_ = 2;
    if (pend.top != top || pend.chunks == pend.kChunks) {
      flush(pend, squares);
      pend.top = top;
    }
    ++pend.chunks;
    for (int j = 0; j < bands; ++j) pend.add(j, b.sum[j], b.sq[j]);
    std::uint64_t left[2] = {b.below[0], b.below[1]};
    while (left[0] | left[1]) {
      int count = 0;  // (up to kMany: no popcount instruction assumed)
      for (int w = 0; w < 2; ++w)
        for (std::uint64_t bits = left[w]; bits && count < kMany; bits &= bits - 1) ++count;
      if (count < kMany) {
        // Value by value, into the bands they fall in (a band's base, e - 5 or more, within
        // the digits), or one by one.
        each(left, v, [&](double x) {
          const std::uint64_t u = std::bit_cast<std::uint64_t>(x), e = (u >> 52) & 0x7FF,
                              d = top - e;
          if (d >= 6 * pend.kBands || e < kMinBase + 5) {
            addOne<Squares>(x, squares);
            return;
          }
          const auto ix = ((u & ((std::uint64_t{1} << 52) - 1)) | (std::uint64_t{1} << 52))
                          << (5 - d % 6);
          pend.add(static_cast<int>(d / 6),
                   u >> 63 ? -static_cast<__int128>(ix) : static_cast<__int128>(ix),
                   static_cast<unsigned __int128>(ix) * ix);
        });
        return;
      }
      // Many: a vector pass over bands further down, from the one that holds the highest of them.
      std::uint64_t t = 0;
      each(left, v, [&](double x) {
        const std::uint64_t e = (std::bit_cast<std::uint64_t>(x) >> 52) & 0x7FF;
        t = e > t ? e : t;
      });
      const int j0 = static_cast<int>((top - t) / 6);  // (past the bands taken: t is under them)
      const std::uint64_t t0 = top - 6 * static_cast<unsigned>(j0);
      const int more = t0 >= kMinBase + 11 ? 2 : 1;
      if (t0 < kMinBase + 5 || j0 + more > pend.kBands) {  // out of the bands' reach
        each(left, v, [&](double x) { addOne<Squares>(x, squares); });
        return;
      }
      detail::BandSums next{};
      if (detail::exact_vector_path() && m >= 8) {
        std::uint64_t e0 = 0x7FF, e1 = 0;
        double l = 0, h = 0;
        detail::exact_bands_avx2(v, m, t0, more, false, Squares, true, e0, e1, l, h, next);
      } else {
        detail::exact_bands(v, m, 0, t0, more, Squares, next);
      }
      for (int j = 0; j < more; ++j) pend.add(j0 + j, next.sum[j], next.sq[j]);
      left[0] = next.below[0];
      left[1] = next.below[1];
    }
  }
  /// f(v[k]) for each k marked in the chunk mask `left`, in order.
  template <class F>
  static void each(const std::uint64_t left[2], const double* v, F&& f) {
    for (std::size_t w = 0; w < 2; ++w)
      for (std::uint64_t bits = left[w]; bits; bits &= bits - 1)
        f(v[64 * w + static_cast<std::size_t>(std::countr_zero(bits))]);
  }
  template <bool Squares>
  void addOne(double x, ExactSum* squares) {
    add(x);
    if constexpr (Squares) squares->addProduct(x, x);
  }
  /// Adds (neg ? -v : v) x 2^(p - 1074), p >= 0, to the digits.
  void addWide(bool neg, unsigned __int128 v, int p) {
    if (v == 0) return;
    const int i = p >> 5, s = p & 31;
    // v << s spans at most 160 bits: five 32-bit pieces from digit i up.
    const unsigned __int128 low = v << s;  // its low 128 bits
    const std::uint64_t piece[5] = {static_cast<std::uint64_t>(low) & 0xFFFFFFFFu,
                                    static_cast<std::uint64_t>(low >> 32) & 0xFFFFFFFFu,
                                    static_cast<std::uint64_t>(low >> 64) & 0xFFFFFFFFu,
                                    static_cast<std::uint64_t>(low >> 96) & 0xFFFFFFFFu,
                                    s ? static_cast<std::uint64_t>(v >> (128 - s)) : 0};
    // Only the digits the pieces reach: v << s has bit_width(v) + s bits.
    const int width = (v >> 64 ? 128 - std::countl_zero(static_cast<std::uint64_t>(v >> 64))
                               : 64 - std::countl_zero(static_cast<std::uint64_t>(v))) +
                      s;
    const int last = std::min(i + (width - 1) / 32, kDigits - 1);
    touch(static_cast<unsigned>(i), static_cast<unsigned>(last));
    for (int k = 0; k <= last - i; ++k) {
      const auto d = static_cast<std::int64_t>(piece[k]);
      d_[static_cast<std::size_t>(i + k)] += neg ? -d : d;
    }
    if (--untilCarry_ == 0) carry();
  }

  std::uint8_t flags() const {
    return static_cast<std::uint8_t>(nan_ | posInf_ << 1 | negInf_ << 2 | zeros_ << 3);
  }
  void setFlags(std::uint8_t f) {
    nan_ = f & 1;
    posInf_ = f & 2;
    negInf_ = f & 4;
    zeros_ = static_cast<std::uint8_t>((f >> 3) & 3);
  }

  void special(std::uint64_t bits, std::uint64_t m) {
    if (m) {
      nan_ = true;
    } else if (bits >> 63) {
      negInf_ = true;
    } else {
      posInf_ = true;
    }
  }
  /// Normalises: every digit but the top one into [0, 2^32), carrying into the next.
  /// Normalises the digits in use [lo_, hi_]: each but the highest in use into [0, 2^32),
  /// carrying upward (the highest in use holds the sign).
  void carry() const {
    untilCarry_ = kCarryEvery;
    if (lo_ > hi_) return;
    for (unsigned k = lo_; k < kDigits - 1; ++k) {
      const std::int64_t c = d_[k] >> 32;          // floor
      if (k >= hi_ && (c == 0 || c == -1)) break;  // the highest digit in use, in range
      if (k + 1 > hi_) {
        d_[k + 1] = 0;
        hi_ = k + 1;
      }
      d_[k] -= c * (std::int64_t{1} << 32);
      d_[k + 1] += c;
    }
    while (lo_ < hi_ && d_[lo_] == 0) ++lo_;
  }
  /// Brings digits [first, last] into use (new ones zero). Digits outside the range in use hold
  /// nothing: they are never read, and copies take only the range.
  void touch(unsigned first, unsigned last) const {
    if (lo_ > hi_) {
      for (unsigned k = first; k <= last; ++k) d_[k] = 0;
      lo_ = first;
      hi_ = last;
      return;
    }
    for (; lo_ > first;) d_[--lo_] = 0;
    for (; hi_ < last;) d_[++hi_] = 0;
  }
  /// The finite sum rounded into hi (and, with withRest, sum - hi rounded into lo; else lo = 0):
  /// reads the digits where they are (reduce/exact_sum.cpp).
  void split(double& hi, double& lo, bool withRest) const;

  // Normalising (carry) does not change the value, so const members may do it: mutable.
  mutable std::array<std::int64_t, kDigits> d_;  // only [lo_, hi_] holds anything
  mutable unsigned lo_ = kDigits, hi_ = 0;       // the digits in use (lo_ > hi_: none)
  mutable int untilCarry_ = kCarryEvery;
  bool nan_ = false, posInf_ = false, negInf_ = false;
  std::uint8_t zeros_ = 0;  // 0: nothing added; 1: only -0.0s among the zeros; 2: anything else
  // addBlock's guess for the next chunk (speed only: any guess gives the same sum): its top
  // exponent and band count (0: none yet), and whether values lay under the bands.
  std::uint16_t hintTop_ = 0;
  std::uint8_t hintBands_ = 0;
  bool hintBelow_ = false;
};

}  // namespace antler
#pragma GCC visibility pop
