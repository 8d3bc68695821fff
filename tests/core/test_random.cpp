// first_draws against Rng one stream at a time: each path (one at a time, eight at once where the
// CPU has AVX-512) and the dispatching call give Rng(seed, key).next() for every key, at lengths
// that leave every remainder of eight, in place and not, for seeds and keys at the edges.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "core/random.hpp"

using antler::Rng;

TEST_CASE("first_draws gives each stream's first number, on every path") {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  for (std::uint64_t seed : {std::uint64_t{0}, std::uint64_t{97}, kMax, std::uint64_t{1} << 63}) {
    CAPTURE(seed);
    for (std::size_t n : {0u, 1u, 7u, 8u, 9u, 63u, 256u, 1001u}) {
      CAPTURE(n);
      std::vector<std::uint64_t> keys(n);
      Rng make(seed + 5, n);
      for (std::size_t i = 0; i < n; ++i)
        keys[i] = i % 5 == 0 ? kMax - i : i % 5 == 1 ? i : make.next();  // edges and noise
      std::vector<std::uint64_t> want(n);
      for (std::size_t i = 0; i < n; ++i) want[i] = Rng(seed, keys[i]).next();

      std::vector<std::uint64_t> got(n, 0);
      antler::detail::first_draws_scalar(seed, keys.data(), got.data(), n);
      CHECK(got == want);

      got.assign(n, 0);
      const bool wide = antler::detail::first_draws_avx512(seed, keys.data(), got.data(), n);
      CHECK(wide == antler::first_draws_vectorised());
      if (wide) CHECK(got == want);
      if (!wide) CHECK(got == std::vector<std::uint64_t>(n, 0));  // nothing written

      got = keys;  // in place, through the dispatching call
      antler::first_draws(seed, got.data(), got.data(), n);
      CHECK(got == want);

      CHECK_FALSE(antler::detail::set_first_draws_vectorised(false));  // one at a time
      got = keys;
      antler::first_draws(seed, got.data(), got.data(), n);
      CHECK(got == want);
      CHECK(antler::detail::set_first_draws_vectorised(true) == wide);
    }
  }
}

TEST_CASE("Rng::toUniform is uniform()'s conversion") {
  Rng a(3, 4), b(3, 4);
  for (int i = 0; i < 1000; ++i) CHECK(Rng::toUniform(a.next()) == b.uniform());
  CHECK(Rng::toUniform(0) == 0.0);
  CHECK(Rng::toUniform(std::numeric_limits<std::uint64_t>::max()) == 1.0 - 0x1.0p-53);
}
