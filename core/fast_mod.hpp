#pragma once
/// FastMod: a % d for a fixed divisor d, by two multiplications instead of a division (a 64-bit
/// division takes tens of cycles; an event path that finds its ring row per event pays that per
/// event). The method of Lemire, Kaser and Kurz ("Faster remainder by direct computation", 2019),
/// with a 128-bit constant, so it holds for every 64-bit a and every divisor d >= 1:
/// c = ceil(2^128 / d), a % d = ((c a mod 2^128) d) >> 128.
#include <cstdint>

namespace antler {

class FastMod {
 public:
  FastMod() : FastMod(1) {}
  explicit FastMod(std::uint64_t d)
      : d_(d), c_(d > 1 ? ~static_cast<unsigned __int128>(0) / d + 1 : 0) {}
  std::uint64_t divisor() const { return d_; }
  std::uint64_t operator()(std::uint64_t a) const {
    const unsigned __int128 low = c_ * a;  // c a mod 2^128
    const unsigned __int128 hi = static_cast<unsigned __int128>(
                                     static_cast<std::uint64_t>(low >> 64)) *
                                 d_,
                            lo = static_cast<unsigned __int128>(static_cast<std::uint64_t>(low)) *
                                 d_;
    // (low d) >> 128, with low = h 2^64 + l: (h d + ((l d) >> 64)) >> 64 (the fraction dropped
    // from l d / 2^64 cannot carry).
    return static_cast<std::uint64_t>((hi + (lo >> 64)) >> 64);
  }

 private:
  std::uint64_t d_;
  unsigned __int128 c_;  // 0 for d = 1 (every remainder is 0)
};

}  // namespace antler
