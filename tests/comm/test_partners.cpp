// comm::Partners: DIY's regular partners (merge, swap, broadcast, all-reduce). Two oracles, both
// written here from DIY's rules (include/diy/partners/*.hpp and diy::reduce's driver):
//   - literal tables worked out by hand for the cases the issue names (6, 7, 12, 24 blocks, ...),
//   - a brute-force model for everything else: a group is the set of blocks whose coordinates
//     agree outside the round's dimension and whose coordinate in it agrees above and below the
//     round's digit (a predicate over all pairs, not the implementation's arithmetic), the steps
//     and factors recomputed independently, and each pattern's links taken from DIY's
//     definitions of incoming/outgoing/active.
// 1-D to 3-D, 6 ... 189 blocks, k in {2, 3, 4, 8}, both directions.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/comm/partners.hpp"
#include "core/error.hpp"

using namespace antler;
using namespace antler::comm;

namespace {

using V = std::vector<int>;

// ---- the brute-force model ----

/// DIY's factoring of one division (Tom's FactorK): k while k divides what is left; else the
/// largest j < k that does; else everything left at once.
V ref_factor_one(int k, int d) {
  V out;
  while (d > 1) {
    int j = k;
    while (j > 1 && d % j != 0) --j;
    if (j == 1) j = d;
    out.push_back(j);
    d /= j;
  }
  return out;
}

/// Interleaved: dimension 0's first factor, dimension 1's first, ..., then the second ones.
std::vector<RoundK> ref_factor(int k, const V& div) {
  std::vector<V> per;
  std::size_t most = 0;
  for (int d : div) {
    per.push_back(ref_factor_one(k, d));
    most = std::max(most, per.back().size());
  }
  std::vector<RoundK> out;
  for (std::size_t i = 0; i < most; ++i)
    for (std::size_t d = 0; d < per.size(); ++d)
      if (i < per[d].size()) out.push_back({static_cast<int>(d), per[d][i]});
  return out;
}

struct Model {
  V div;
  std::vector<RoundK> kv;
  bool contiguous;
  int n = 1;

  Model(V d, std::vector<RoundK> k, bool c) : div(std::move(d)), kv(std::move(k)), contiguous(c) {
    for (int x : div) n *= x;
  }
  V coords(int g) const {
    V c;
    for (int x : div) {
      c.push_back(g % x);
      g /= x;
    }
    return c;
  }
  /// Distance between group members in round r: contiguous, the product of the earlier sizes in
  /// its dimension; otherwise the division over the product of the sizes up to and including r.
  int step(int r) const {
    const int d = kv[static_cast<std::size_t>(r)].dim;
    int before = 1, upto = 1;
    for (int q = 0; q <= r; ++q)
      if (kv[static_cast<std::size_t>(q)].dim == d) {
        upto *= kv[static_cast<std::size_t>(q)].size;
        if (q < r) before *= kv[static_cast<std::size_t>(q)].size;
      }
    return contiguous ? before : div[static_cast<std::size_t>(d)] / upto;
  }
  bool same_group(int r, int a, int b) const {
    const RoundK& k = kv[static_cast<std::size_t>(r)];
    const V ca = coords(a), cb = coords(b);
    for (std::size_t d = 0; d < div.size(); ++d)
      if (static_cast<int>(d) != k.dim && ca[d] != cb[d]) return false;
    const int s = step(r), x = ca[static_cast<std::size_t>(k.dim)],
              y = cb[static_cast<std::size_t>(k.dim)];
    return x % s == y % s && x / (s * k.size) == y / (s * k.size);
  }
  V group(int r, int g) const {
    V out;
    for (int h = 0; h < n; ++h)
      if (same_group(r, g, h)) out.push_back(h);
    return out;  // gid order: the group's root (smallest coordinate) first
  }
  int R() const { return static_cast<int>(kv.size()); }
  bool merge_active(int r, int g) const {
    for (int q = 0; q < r; ++q)
      if (group(q, g).front() != g) return false;
    return true;
  }
  // DIY: RegularMergePartners::incoming(r) = fill(r - 1); outgoing(r) = fill(r)[0].
  V merge_in(int r, int g) const { return group(r - 1, g); }
  V merge_out(int r, int g) const { return {group(r, g).front()}; }

  int last(Pattern p) const { return p == Pattern::allReduce ? 2 * R() : R(); }
  bool active(Pattern p, int round, int g) const {
    switch (p) {
      case Pattern::merge:
        return merge_active(round, g);
      case Pattern::swap:
        return true;
      case Pattern::broadcast:
        return merge_active(R() - round, g);
      case Pattern::allReduce:
        return merge_active(round < R() ? round : 2 * R() - round, g);
    }
    return false;
  }
  // diy::reduce asks incoming only for round > 0 and outgoing only for round < rounds().
  V in(Pattern p, int round, int g) const {
    if (round == 0 || !active(p, round, g)) return {};
    switch (p) {
      case Pattern::merge:
        return merge_in(round, g);
      case Pattern::swap:
        return group(round - 1, g);
      case Pattern::broadcast:
        return merge_out(R() - round, g);
      case Pattern::allReduce:
        return round <= R() ? merge_in(round, g) : merge_out(2 * R() - round, g);
    }
    return {};
  }
  V out(Pattern p, int round, int g) const {
    if (round == last(p) || !active(p, round, g)) return {};
    switch (p) {
      case Pattern::merge:
        return merge_out(round, g);
      case Pattern::swap:
        return group(round, g);
      case Pattern::broadcast:
        return merge_in(R() - round, g);
      case Pattern::allReduce:
        return round < R() ? merge_out(round, g) : merge_in(2 * R() - round, g);
    }
    return {};
  }
};

std::string show(const V& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace

TEST_CASE("Partners: DIY's factoring, the cases worked by hand") {
  auto sizes = [](int k, V div) {
    V s;
    for (const RoundK& r : Partners::factor(k, div)) s.push_back(r.size);
    return s;
  };
  CHECK(sizes(2, {6}) == V{2, 3});
  CHECK(sizes(2, {7}) == V{7});
  CHECK(sizes(4, {12}) == V{4, 3});
  CHECK(sizes(3, {24}) == V{3, 2, 2, 2});
  CHECK(sizes(2, {16}) == V{2, 2, 2, 2});
  CHECK(sizes(8, {16}) == V{8, 2});
  CHECK(sizes(4, {9}) == V{3, 3});
  CHECK(sizes(2, {36}) == V{2, 2, 9});
  CHECK(sizes(4, {36}) == V{4, 3, 3});
  CHECK(sizes(3, {189}) == V{3, 3, 3, 7});
  CHECK(sizes(8, {189}) == V{7, 3, 3, 3});
  CHECK(sizes(2, {1}).empty());
  // Dimensions interleave, each dimension's factors in order.
  CHECK(Partners::factor(2, V{4, 6}) == std::vector<RoundK>{{0, 2}, {1, 2}, {0, 2}, {1, 3}});
  CHECK(Partners::factor(2, V{2, 3, 4}) == std::vector<RoundK>{{0, 2}, {1, 3}, {2, 2}, {2, 2}});
  CHECK(Partners::factor(3, V{1, 9}) == std::vector<RoundK>{{1, 3}, {1, 3}});
}

TEST_CASE("Partners: groups and links for 6 blocks, k = 2, worked by hand") {
  // Distance doubling: round 0 groups of 2 one apart, round 1 groups of 3 two apart.
  Partners m = Partners::merge(BlockGrid::line(6), 2);
  CHECK(m.lastRound() == 2);
  CHECK(m.group(0, 3) == V{2, 3});
  CHECK(m.group(1, 3) == V{1, 3, 5});
  CHECK(m.group(1, 4) == V{0, 2, 4});
  CHECK(m.position(1, 4) == 2);
  V active1, active2;
  for (int g = 0; g < 6; ++g) {
    if (m.active(1, g)) active1.push_back(g);
    if (m.active(2, g)) active2.push_back(g);
  }
  CHECK(active1 == V{0, 2, 4});
  CHECK(active2 == V{0});
  CHECK(m.out_link(0, 5) == V{4});
  CHECK(m.in_link(1, 4) == V{4, 5});
  CHECK(m.out_link(1, 4) == V{0});
  CHECK(m.in_link(2, 0) == V{0, 2, 4});
  CHECK(m.out_link(2, 0).empty());
  CHECK(m.in_link(0, 0).empty());
  CHECK(m.in_link(1, 1).empty());  // inactive
  // Distance halving: round 0 groups of 2 three apart, round 1 groups of 3 one apart.
  Partners h = Partners::merge(BlockGrid::line(6), 2, false);
  CHECK(h.group(0, 4) == V{1, 4});
  CHECK(h.group(1, 1) == V{0, 1, 2});
  CHECK(h.in_link(2, 0) == V{0, 1, 2});
  // Swap: every block, every round; out-link its whole group.
  Partners s = Partners::swap(BlockGrid::line(6), 2);
  CHECK(s.out_link(0, 3) == V{2, 3});
  CHECK(s.in_link(1, 3) == V{2, 3});
  CHECK(s.out_link(1, 3) == V{1, 3, 5});
  CHECK(s.in_link(2, 3) == V{1, 3, 5});
  CHECK(s.out_link(2, 3).empty());
  // Broadcast: gid 0 alone first, sending to its last merge group.
  Partners b = Partners::broadcast(BlockGrid::line(6), 2);
  CHECK(b.active(0, 0));
  CHECK_FALSE(b.active(0, 2));
  CHECK(b.out_link(0, 0) == V{0, 2, 4});
  CHECK(b.in_link(1, 4) == V{0});
  CHECK(b.out_link(1, 4) == V{4, 5});
  CHECK(b.in_link(2, 5) == V{4});
  // All-reduce: merge up to round 2, where gid 0 receives from and sends to {0, 2, 4}.
  Partners a = Partners::allReduce(BlockGrid::line(6), 2);
  CHECK(a.lastRound() == 4);
  CHECK(a.in_link(2, 0) == V{0, 2, 4});
  CHECK(a.out_link(2, 0) == V{0, 2, 4});
  CHECK(a.in_link(3, 2) == V{0});
  CHECK(a.out_link(3, 2) == V{2, 3});
  CHECK(a.in_link(4, 3) == V{2});
  CHECK(a.size(0) == 2);
  CHECK(a.size(2) == 3);
  CHECK(a.size(3) == 2);
  CHECK(a.size(4) == 0);
}

TEST_CASE("Partners: 7 blocks with k = 2 are one group of 7; 12 with k = 4 are 4 then 3") {
  Partners p = Partners::merge(BlockGrid::line(7), 2);
  CHECK(p.lastRound() == 1);
  CHECK(p.in_link(1, 0) == V{0, 1, 2, 3, 4, 5, 6});
  Partners q = Partners::swap(BlockGrid::line(12), 4);
  CHECK(q.out_link(0, 6) == V{4, 5, 6, 7});
  CHECK(q.out_link(1, 6) == V{2, 6, 10});
  Partners r = Partners::swap(BlockGrid::line(12), 4, false);
  CHECK(r.step(0) == 3);
  CHECK(r.out_link(0, 6) == V{0, 3, 6, 9});
  CHECK(r.out_link(1, 6) == V{6, 7, 8});
}

TEST_CASE("Partners: every pattern, round and block against the brute-force model") {
  const std::vector<V> grids = {{1},     {2},       {3},       {6},       {7},      {9},    {12},
                                {16},    {24},      {36},      {189},     {4, 6},   {3, 3}, {6, 6},
                                {1, 12}, {2, 3, 4}, {3, 7, 9}, {4, 4, 4}, {2, 9, 2}};
  std::size_t checked = 0;
  for (const V& div : grids)
    for (int k : {2, 3, 4, 8})
      for (bool contiguous : {true, false}) {
        const Model m(div, ref_factor(k, div), contiguous);
        for (Pattern pat :
             {Pattern::merge, Pattern::swap, Pattern::broadcast, Pattern::allReduce}) {
          const Partners p(pat, BlockGrid(div), k, contiguous);
          CAPTURE(show(div));
          CAPTURE(k);
          CAPTURE(contiguous);
          CAPTURE(pattern_name(pat));
          REQUIRE(p.factored() == m.kv);
          REQUIRE(p.lastRound() == m.last(pat));
          for (int r = 0; r < m.R(); ++r) REQUIRE(p.step(r) == m.step(r));
          std::string bad;
          for (int round = 0; round <= m.last(pat) && bad.empty(); ++round)
            for (int g = 0; g < m.n; ++g) {
              ++checked;
              if (p.active(round, g) != m.active(pat, round, g) ||
                  p.in_link(round, g) != m.in(pat, round, g) ||
                  p.out_link(round, g) != m.out(pat, round, g)) {
                bad = "round " + std::to_string(round) + " gid " + std::to_string(g) + ": in " +
                      show(p.in_link(round, g)) + " vs " + show(m.in(pat, round, g)) + ", out " +
                      show(p.out_link(round, g)) + " vs " + show(m.out(pat, round, g));
                break;
              }
            }
          CHECK_MESSAGE(bad.empty(), bad);
        }
      }
  CHECK(checked > 100000);
}

TEST_CASE("Partners: explicit rounds, and the round list DIY would make is the default") {
  const V div{4, 6};
  Partners e(Pattern::swap, BlockGrid(div), std::vector<RoundK>{{1, 3}, {0, 4}, {1, 2}});
  const Model m(div, {{1, 3}, {0, 4}, {1, 2}}, true);
  for (int round = 0; round <= 3; ++round)
    for (int g = 0; g < 24; ++g) {
      CHECK(e.in_link(round, g) == m.in(Pattern::swap, round, g));
      CHECK(e.out_link(round, g) == m.out(Pattern::swap, round, g));
    }
  CHECK(e.dim(0) == 1);
  CHECK(e.size(1) == 4);
}

TEST_CASE("Partners: bad input is a clear error, never a hang") {
  // DIY's factoring loops forever at k = 1 and divides by zero at k = 0.
  for (int k : {1, 0, -2}) {
    CHECK_THROWS_AS(Partners::merge(BlockGrid::line(8), k), ValueError);
    CHECK_THROWS_WITH_AS(Partners::factor(k, V{8}), doctest::Contains("must be >= 2"), ValueError);
  }
  CHECK_THROWS_AS(BlockGrid(V{4, 0}), ValueError);
  CHECK_THROWS_AS(BlockGrid(V{}), ValueError);
  CHECK_THROWS_AS(BlockGrid(V{1 << 16, 1 << 16}), ValueError);
  CHECK_THROWS_WITH_AS(
      Partners(Pattern::merge, BlockGrid(V{6}), std::vector<RoundK>{{0, 2}, {0, 2}}),
      doctest::Contains("do not multiply to its division 6"), ValueError);
  CHECK_THROWS_AS(Partners(Pattern::merge, BlockGrid(V{6}), std::vector<RoundK>{{1, 6}}),
                  IndexError);
  CHECK_THROWS_AS(Partners(Pattern::merge, BlockGrid(V{6}), std::vector<RoundK>{{0, 0}}),
                  ValueError);
  Partners p = Partners::merge(BlockGrid::line(6), 2);
  CHECK_THROWS_AS(p.in_link(3, 0), IndexError);
  CHECK_THROWS_AS(p.out_link(0, 6), IndexError);
  CHECK_THROWS_AS(p.active(-1, 0), IndexError);
  CHECK_THROWS_AS(BlockGrid::line(6).coords(6), IndexError);
  CHECK(BlockGrid(V{2, 3, 4}).gid(BlockGrid(V{2, 3, 4}).coords(17)) == 17);
  CHECK(BlockGrid(V{2, 3, 4}).coords(17) == V{1, 2, 2});  // 17 = 1 + 2 * (2 + 3 * 2)
}
