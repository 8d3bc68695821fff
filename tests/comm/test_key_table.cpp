// KeyTable (core/comm/detail/key_table.hpp), the open-addressing table behind comm::Reductions,
// against std::unordered_map under random inserts, finds and erases: keys that collide (ids a
// multiple of 4 apart, as reduction ids are), runs that wrap around the end of the array, and
// growth with entries in place.
#include <doctest/doctest.h>

#include <random>
#include <unordered_map>

#include "core/comm/detail/key_table.hpp"

using antler::comm::detail::Key;
using antler::comm::detail::KeyTable;

namespace {
struct Hash {
  std::size_t operator()(const Key& k) const { return k.scope * 1000003u ^ k.id; }
};
}  // namespace

TEST_CASE("KeyTable: the same answers as std::unordered_map under random inserts and erases") {
  for (unsigned seed : {1u, 2u, 3u}) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    KeyTable<int> t;
    std::unordered_map<Key, int, Hash> ref;
    // Few distinct keys at first (dense runs, many erase shifts), then more (growth).
    for (int step = 0; step < 60000; ++step) {
      const std::uint64_t range = step < 20000 ? 40 : 3000;
      const Key k{rng() % 3 == 0 ? std::uint64_t{0} : std::uint64_t{77}, (rng() % range) * 4 + 1};
      switch (rng() % 3) {
        case 0: {
          const int v = static_cast<int>(rng() % 1000);
          t[k] = v;
          ref[k] = v;
          break;
        }
        case 1:
          t.erase(k);
          ref.erase(k);
          break;
        default: {
          const int* got = t.find(k);
          auto it = ref.find(k);
          REQUIRE((got != nullptr) == (it != ref.end()));
          if (got) REQUIRE(*got == it->second);
        }
      }
      REQUIRE(t.size() == ref.size());
    }
    // Every entry is found, and nothing else is.
    std::size_t seen = 0;
    t.forEach([&](const Key& k, int v) {
      ++seen;
      auto it = ref.find(k);
      REQUIRE(it != ref.end());
      CHECK(v == it->second);
    });
    CHECK(seen == ref.size());
    CHECK(t.capacity() >= 2 * t.size());
    for (auto& [k, v] : ref) t.erase(k);
    CHECK(t.empty());
    CHECK(t.find(Key{77, 5}) == nullptr);
  }
}
