// FastMod against the % operator: small and large divisors (powers of two, their neighbours,
// 2^64 - 1) and numerators across the whole 64-bit range, the edges included.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "core/fast_mod.hpp"

using antler::FastMod;

TEST_CASE("FastMod: a % d for every 64-bit a and divisors from 1 to 2^64 - 1") {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  std::vector<std::uint64_t> divisors = {1,
                                         2,
                                         3,
                                         5,
                                         6,
                                         7,
                                         51,
                                         52,
                                         53,
                                         64,
                                         65,
                                         1000,
                                         1u << 31,
                                         (1ull << 32) - 1,
                                         1ull << 32,
                                         (1ull << 32) + 1,
                                         (1ull << 63) - 1,
                                         1ull << 63,
                                         (1ull << 63) + 1,
                                         kMax};
  std::mt19937_64 g(5);
  for (int k = 0; k < 200; ++k) divisors.push_back(g() >> (g() % 64) | 1);
  std::vector<std::uint64_t> numerators = {0, 1, 2, kMax, kMax - 1, 1ull << 63, (1ull << 63) - 1};
  for (int k = 0; k < 2000; ++k) numerators.push_back(g() >> (g() % 64));
  long checked = 0;
  for (std::uint64_t d : divisors) {
    const FastMod mod(d);
    CHECK(mod.divisor() == d);
    for (std::uint64_t a : numerators) {
      for (std::uint64_t x : {a, a / d * d, a / d * d + (d - 1), a - a % d - 1}) {
        if (mod(x) != x % d) {
          FAIL_CHECK(x << " % " << d << ": " << mod(x) << ", not " << x % d);
          continue;
        }
        ++checked;
      }
    }
  }
  CHECK(checked == static_cast<long>(divisors.size() * numerators.size() * 4));
}
