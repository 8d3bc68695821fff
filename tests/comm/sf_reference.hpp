#pragma once
// A star forest written out globally, for tests: every rank builds the same seeded graph and
// computes what each operation must give by walking it serially, edge by edge, in the documented
// order (leaf rank, then leaf index) — independently of core/comm's StarForest.
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/comm/star_forest.hpp"

namespace antler::test {

/// splitmix64: the same numbers on every platform (std's distributions are not).
struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::int64_t below(std::int64_t n) { return n > 0 ? static_cast<std::int64_t>(next() % n) : 0; }
};

struct SfGraph {
  int P = 1;
  std::vector<std::int64_t> nroots, nleaves;
  std::vector<std::vector<std::int64_t>> ilocal;
  std::vector<std::vector<comm::SfNode>> iremote;

  std::int64_t leafIndex(int q, std::size_t i) const {
    return ilocal[q].empty() ? static_cast<std::int64_t>(i) : ilocal[q][i];
  }
  std::int64_t extent(int q) const {
    std::int64_t e = 0;
    for (std::size_t i = 0; i < iremote[q].size(); ++i) e = std::max(e, leafIndex(q, i) + 1);
    return ilocal[q].empty() ? nleaves[q] : e;
  }
  /// The leaves (rank, leaf index) of root (q, r), in the documented order.
  std::vector<std::vector<std::vector<std::pair<int, std::int64_t>>>> incoming() const {
    std::vector<std::vector<std::vector<std::pair<int, std::int64_t>>>> in(P);
    for (int q = 0; q < P; ++q) in[q].resize(static_cast<std::size_t>(nroots[q]));
    for (int q = 0; q < P; ++q) {
      std::vector<std::pair<std::int64_t, comm::SfNode>> mine;
      for (std::size_t i = 0; i < iremote[q].size(); ++i)
        mine.push_back({leafIndex(q, i), iremote[q][i]});
      std::sort(mine.begin(), mine.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      for (auto& [l, n] : mine) in[n.rank][static_cast<std::size_t>(n.index)].push_back({q, l});
    }
    return in;
  }
};

/// Shapes: 0 contiguous leaves; 1 sparse, reversed ilocal; 2 a hot root (rank 0, root 0) that
/// about a third of all leaves name (degree >> P); 3 every leaf on its own rank's roots.
/// `roots`: each rank's root count (empty: random, at least one on rank 0).
inline SfGraph make_graph(int P, std::uint64_t seed, int shape, std::int64_t scale,
                          const std::vector<std::int64_t>& roots = {}) {
  Rng g{seed * 1000003u + static_cast<std::uint64_t>(P) * 7919u +
        static_cast<std::uint64_t>(shape)};
  SfGraph G;
  G.P = P;
  G.nroots.resize(P);
  G.nleaves.resize(P);
  G.ilocal.resize(P);
  G.iremote.resize(P);
  for (int q = 0; q < P; ++q) G.nroots[q] = g.below(scale + 1) + (q == 0 ? 1 : 0);
  if (!roots.empty()) G.nroots = roots;
  if (shape == 2 && G.nroots[0] == 0) shape = 0;  // no hot root without a root on rank 0
  for (int q = 0; q < P; ++q) {
    const std::int64_t n = g.below(scale + 1);
    std::vector<comm::SfNode> remote;
    for (std::int64_t i = 0; i < n; ++i) {
      int rank = static_cast<int>(g.below(P));
      if (shape == 3) rank = q;
      if (shape == 2 && g.below(3) == 0) {
        remote.push_back({0, 0});
        continue;
      }
      if (G.nroots[rank] == 0) continue;  // a rank without roots: this leaf gets none
      remote.push_back({rank, g.below(G.nroots[rank])});
    }
    G.nleaves[q] = static_cast<std::int64_t>(remote.size());
    if (shape == 1) {
      // Distinct leaf indices in [0, 2n), listed in descending order: sparse and reversed.
      std::vector<std::int64_t> idx;
      for (std::int64_t i = 0; i < 2 * G.nleaves[q]; ++i)
        if (g.below(2) == 0 ||
            static_cast<std::int64_t>(idx.size()) + (2 * G.nleaves[q] - i) <= G.nleaves[q])
          idx.push_back(i);
      idx.resize(static_cast<std::size_t>(G.nleaves[q]));
      std::reverse(idx.begin(), idx.end());
      G.ilocal[q] = idx;
    }
    G.iremote[q] = std::move(remote);
  }
  return G;
}

/// Values that make every association and order visible in a floating-point sum.
inline double leaf_value(int q, std::int64_t l, std::size_t j) {
  const std::uint64_t h =
      static_cast<std::uint64_t>(q) * 7919u + static_cast<std::uint64_t>(l) * 104729u + j * 31u;
  const double mag = (h % 3 == 0) ? 1e15 : (h % 3 == 1 ? 1.0 : 1e-7);
  return ((h % 2) ? -1.0 : 1.0) * mag * (1.0 + static_cast<double>(h % 997) / 997.0);
}
inline double root_value(int q, std::int64_t r, std::size_t j) {
  return 0.5 +
         static_cast<double>(
             (static_cast<std::uint64_t>(q) * 31u + static_cast<std::uint64_t>(r) * 17u + j) % 101);
}

}  // namespace antler::test
