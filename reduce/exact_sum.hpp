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
/// Reuse in a reduce class of your own: hold an ExactSum, add() in primaryReduce, merge() in
/// secondaryReduce and tertiaryReduce, and let it travel with the class: write(w) and read(r)
/// in the class's own write/read (the compact form: only the digits in use, at most
/// kSerializedSizeBound bytes), or `ar & sum` in a Boost serialize (see
/// examples/population_stats.cpp).
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

class ExactSum {
 public:
  static constexpr int kDigits = 67;
  /// Bytes its Boost serialization takes at most (binary archive): the flags, the range of digits
  /// in use, and those digits.
  static constexpr std::size_t kSerializedSizeBound = 3 + 8 * kDigits;

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
    carry();
    ExactSum b = o;
    b.carry();
    for (int k = 0; k < kDigits; ++k) d_[k] += b.d_[k];
    carry();
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
    return round();
  }
  /// The sum minus value(), correctly rounded: value() + rest() holds about 106 bits of it (for
  /// a digest that needs more than one double's worth of the exact sum).
  double rest() const {
    if (nan_ || posInf_ || negInf_) return 0;
    ExactSum r = *this;
    const double v = r.value();
    if (!std::isfinite(v)) return 0;
    r.add(-v);
    return r.round();
  }
  bool isFinite() const { return !(nan_ || posInf_ || negInf_); }

  /// The compact form (Codec uses it): flags, the range of digits in use, those digits.
  void write(Writer& w) const {
    ExactSum c = *this;
    c.carry();
    std::uint8_t lo = 0, hi = kDigits;
    while (hi > 0 && c.d_[hi - 1] == 0) --hi;
    while (lo < hi && c.d_[lo] == 0) ++lo;
    w.put<std::uint8_t>(flags()).put<std::uint8_t>(lo).put<std::uint8_t>(hi);
    w.buffer().append(c.d_.data() + lo, sizeof(std::int64_t) * (hi - lo));
  }
  static ExactSum read(Reader& r) {
    ExactSum s;
    const auto f = r.get<std::uint8_t>(), lo = r.get<std::uint8_t>(), hi = r.get<std::uint8_t>();
    if (lo > hi || hi > kDigits || (f >> 5))
      throw CommError("corrupted buffer: an ExactSum with digits [" + std::to_string(lo) + ", " +
                      std::to_string(hi) + ") of " + std::to_string(kDigits));
    std::memcpy(s.d_.data() + lo, r.take(sizeof(std::int64_t) * (hi - lo)),
                sizeof(std::int64_t) * (hi - lo));
    s.setFlags(f);
    return s;
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

  /// The fast path: a chunk of up to 32 normal values whose exponents lie within 5 of each other
  /// is exactly a sum of 58-bit integers times one power of two (and their squares, 116-bit
  /// integers times its square): summed in 64- and 128-bit integers, then added to the digits
  /// once. Other chunks (zeros, subnormals, infinities, NaNs, wide ranges, squares that leave the
  /// double range) take the value-by-value path. Both are exact, so they agree to the bit. With
  /// Squares, mn and mx take the chunk's extremes too (NaNs skipped).
  template <bool Squares>
  void addBlock(const double* x, std::size_t n, ExactSum* squares, double* mn, double* mx) {
    constexpr std::size_t kChunk = 32;
    double lo = Squares ? *mn : 0, hi = Squares ? *mx : 0;
    for (std::size_t at = 0; at < n; at += kChunk) {
      const std::size_t m = n - at < kChunk ? n - at : kChunk;
      const double* v = x + at;
      std::uint64_t emin = 0x7FF, emax = 0;
      for (std::size_t k = 0; k < m; ++k) {
        const std::uint64_t e = (std::bit_cast<std::uint64_t>(v[k]) >> 52) & 0x7FF;
        emin = e < emin ? e : emin;
        emax = e > emax ? e : emax;
        if constexpr (Squares) {
          lo = v[k] < lo ? v[k] : lo;
          hi = v[k] > hi ? v[k] : hi;
        }
      }
      // Normal values within 6 binades (and, with squares, squares that stay normal and finite).
      const bool fast =
          emin >= (Squares ? 538u : 1u) && emax <= (Squares ? 1534u : 2046u) && emax - emin <= 5;
      if (!fast) {
        for (std::size_t k = 0; k < m; ++k) {
          add(v[k]);
          if constexpr (Squares) squares->addProduct(v[k], v[k]);
        }
        continue;
      }
      std::int64_t sum = 0;  // |sum| < 32 x 2^58
      unsigned __int128 sq = 0;
      for (std::size_t k = 0; k < m; ++k) {
        const std::uint64_t b = std::bit_cast<std::uint64_t>(v[k]);
        const auto e = (b >> 52) & 0x7FF;
        const auto ix = static_cast<std::int64_t>(
            ((b & ((std::uint64_t{1} << 52) - 1)) | (std::uint64_t{1} << 52))
            << (e - emin));  // < 2^58
        const auto neg = -static_cast<std::int64_t>(b >> 63);
        sum += (ix ^ neg) - neg;
        if constexpr (Squares)
          sq += static_cast<unsigned __int128>(static_cast<std::uint64_t>(ix)) *
                static_cast<std::uint64_t>(ix);
      }
      // x = ix * 2^(emin - 1075): digit position emin - 1 (as in add()); x^2: 2 (emin - 1075)
      // + 1074.
      addWide(sum < 0, static_cast<unsigned __int128>(sum < 0 ? -static_cast<__int128>(sum) : sum),
              static_cast<int>(emin) - 1);
      if constexpr (Squares)
        squares->addWide(false, sq, 2 * (static_cast<int>(emin) - 1075) + 1074);
      zeros_ = 2;
    }
    if constexpr (Squares) {
      *mn = lo;
      *mx = hi;
    }
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
    for (int k = 0; k < 5 && i + k < kDigits; ++k) {
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
  void carry() {
    for (int k = 0; k + 1 < kDigits; ++k) {
      const std::int64_t c = d_[k] >> 32;  // floor
      d_[k] -= c * (std::int64_t{1} << 32);
      d_[k + 1] += c;
    }
    untilCarry_ = kCarryEvery;
  }
  bool anyAbove(int k) const {
    for (int j = k; j < kDigits; ++j)
      if (d_[j]) return true;
    return false;
  }
  /// The finite sum rounded to a double.
  double round() const;

  std::array<std::int64_t, kDigits> d_{};
  int untilCarry_ = kCarryEvery;
  bool nan_ = false, posInf_ = false, negInf_ = false;
  std::uint8_t zeros_ = 0;  // 0: nothing added; 1: only -0.0s among the zeros; 2: anything else
};

inline double ExactSum::round() const {
  ExactSum c = *this;
  c.carry();
  // The sign: the top digit's (every lower digit is in [0, 2^32)). Work on the magnitude.
  const bool neg = c.d_[kDigits - 1] < 0;
  if (neg) {
    for (auto& x : c.d_) x = -x;
    c.carry();
  }
  int top = kDigits - 1;
  while (top >= 0 && c.d_[top] == 0) --top;
  if (top < 0) return zeros_ == 1 ? -0.0 : 0.0;  // an exact zero: +0 unless only -0.0s
  // Digits now in [0, 2^32) (the top one may hold more only far beyond the double range).
  auto bit = [&](std::int64_t pos) -> std::uint64_t {  // bit `pos` of the magnitude
    if (pos < 0) return 0;
    const auto k = static_cast<std::size_t>(pos >> 5);
    return k < static_cast<std::size_t>(kDigits)
               ? (static_cast<std::uint64_t>(c.d_[k]) >> (pos & 31)) & 1
               : 0;
  };
  const std::int64_t length =
      32 * static_cast<std::int64_t>(top) + std::bit_width(static_cast<std::uint64_t>(c.d_[top]));
  // The value is magnitude x 2^-1074, its leading bit worth 2^(length - 1 - 1074).
  const std::int64_t lead = length - 1 - 1074;
  if (lead >= 1024)
    return neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  // Keep 53 bits (normal) or every bit down to 2^-1074 (subnormal).
  const std::int64_t keep = lead >= -1022 ? 53 : length;
  const std::int64_t low = length - keep;  // the lowest kept bit's position
  std::uint64_t K = 0;
  for (std::int64_t b = length - 1; b >= low; --b) K = K << 1 | bit(b);
  const std::uint64_t roundBit = bit(low - 1);
  bool sticky = false;
  if (low - 1 > 0) {
    const std::int64_t below = low - 1;  // bits [0, below) decide stickiness
    const auto full = static_cast<int>(below >> 5);
    for (int k = 0; k < full && !sticky; ++k) sticky = c.d_[k] != 0;
    const int part = static_cast<int>(below & 31);
    if (!sticky && part)
      sticky = (static_cast<std::uint64_t>(c.d_[full]) & ((std::uint64_t{1} << part) - 1)) != 0;
  }
  if (roundBit && (sticky || (K & 1))) ++K;
  double r = std::ldexp(static_cast<double>(K), static_cast<int>(low - 1074));
  return neg ? -r : r;
}

}  // namespace antler
#pragma GCC visibility pop
