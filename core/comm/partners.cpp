#include "core/comm/partners.hpp"

#include <limits>

#include "core/error.hpp"

namespace antler::comm {

namespace {

std::string list(std::span<const int> v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

/// DIY's factoring of one division: k while k divides the rest, else the largest j in (1, k) that
/// does, else the whole rest in one round.
void factor_one(int k, int division, std::vector<int>& out) {
  int rest = division;
  while (rest > 1) {
    int take = rest;  // no j in [2, k] divides it: one round of all of it
    for (int j = k; j > 1; --j)
      if (rest % j == 0) {
        take = j;
        break;
      }
    out.push_back(take);
    rest /= take;
  }
}

}  // namespace

// ---- BlockGrid ----

BlockGrid BlockGrid::line(int n) {
  return BlockGrid(std::vector<int>{n});
}

BlockGrid::BlockGrid(std::vector<int> divisions) : divisions_(std::move(divisions)) {
  if (divisions_.empty()) throw ValueError("BlockGrid: no dimensions (give at least one division)");
  std::int64_t n = 1;
  for (std::size_t d = 0; d < divisions_.size(); ++d) {
    if (divisions_[d] < 1)
      throw ValueError("BlockGrid: division " + std::to_string(divisions_[d]) + " in dimension " +
                       std::to_string(d) + " of " + list(divisions_) + " (each must be >= 1)");
    n *= divisions_[d];
    if (n > std::numeric_limits<int>::max())
      throw ValueError("BlockGrid: divisions " + list(divisions_) +
                       " make more than 2^31 - 1 blocks");
  }
  nblocks_ = static_cast<int>(n);
}

std::vector<int> BlockGrid::coords(int gid) const {
  if (gid < 0 || gid >= nblocks_)
    throw IndexError("BlockGrid::coords: gid " + std::to_string(gid) + " of a grid of " +
                         std::to_string(nblocks_) + " blocks (gids 0.." +
                         std::to_string(nblocks_ - 1) + ")",
                     static_cast<std::uint64_t>(gid), static_cast<std::uint64_t>(nblocks_));
  std::vector<int> c(divisions_.size());
  for (std::size_t d = 0; d < divisions_.size(); ++d) {
    c[d] = gid % divisions_[d];
    gid /= divisions_[d];
  }
  return c;
}

int BlockGrid::gid(std::span<const int> c) const {
  if (c.size() != divisions_.size())
    throw ValueError("BlockGrid::gid: " + std::to_string(c.size()) + " coordinates for a " +
                     std::to_string(divisions_.size()) + "-dimensional grid");
  int g = 0;
  for (std::size_t d = c.size(); d-- > 0;) {
    if (c[d] < 0 || c[d] >= divisions_[d])
      throw IndexError("BlockGrid::gid: coordinate " + std::to_string(c[d]) + " in dimension " +
                           std::to_string(d) + " (0.." + std::to_string(divisions_[d] - 1) + ")",
                       static_cast<std::uint64_t>(c[d]), static_cast<std::uint64_t>(divisions_[d]));
    g = g * divisions_[d] + c[d];
  }
  return g;
}

// ---- Partners ----

const char* pattern_name(Pattern p) {
  switch (p) {
    case Pattern::merge:
      return "merge";
    case Pattern::swap:
      return "swap";
    case Pattern::broadcast:
      return "broadcast";
    case Pattern::allReduce:
      return "allReduce";
  }
  return "?";
}

std::vector<RoundK> Partners::factor(int k, std::span<const int> divisions) {
  if (k < 2)
    throw ValueError("Partners: k = " + std::to_string(k) +
                     " (the radix must be >= 2: groups of k blocks per round)");
  std::vector<std::vector<int>> per(divisions.size());
  for (std::size_t d = 0; d < divisions.size(); ++d) factor_one(k, divisions[d], per[d]);
  std::vector<RoundK> out;
  for (std::size_t i = 0;; ++i) {  // interleave: each dimension's i-th factor, in dimension order
    bool any = false;
    for (std::size_t d = 0; d < per.size(); ++d)
      if (i < per[d].size()) {
        out.push_back({static_cast<int>(d), per[d][i]});
        any = true;
      }
    if (!any) return out;
  }
}

Partners::Partners(Pattern p, BlockGrid grid, int k, bool contiguous)
    : Partners(p, grid, factor(k, grid.divisions()), contiguous) {}

Partners::Partners(Pattern p, BlockGrid grid, std::vector<RoundK> rounds, bool contiguous)
    : pattern_(p), grid_(std::move(grid)), kvs_(std::move(rounds)), contiguous_(contiguous) {
  const auto& div = grid_.divisions();
  std::vector<std::int64_t> product(div.size(), 1);
  for (std::size_t r = 0; r < kvs_.size(); ++r) {
    const RoundK& kv = kvs_[r];
    if (kv.dim < 0 || kv.dim >= grid_.dims())
      throw IndexError(
          "Partners: round " + std::to_string(r) + " runs in dimension " + std::to_string(kv.dim) +
              " of a " + std::to_string(grid_.dims()) + "-dimensional grid",
          static_cast<std::uint64_t>(kv.dim), static_cast<std::uint64_t>(grid_.dims()));
    if (kv.size < 1)
      throw ValueError("Partners: round " + std::to_string(r) + " has group size " +
                       std::to_string(kv.size) + " (must be >= 1)");
    product[static_cast<std::size_t>(kv.dim)] *= kv.size;
    if (product[static_cast<std::size_t>(kv.dim)] > div[static_cast<std::size_t>(kv.dim)])
      break;  // reported below
  }
  for (std::size_t d = 0; d < div.size(); ++d)
    if (product[d] != div[d]) {
      std::string sizes;
      for (const RoundK& kv : kvs_)
        if (kv.dim == static_cast<int>(d))
          sizes += (sizes.empty() ? "" : " x ") + std::to_string(kv.size);
      throw ValueError("Partners: the group sizes of dimension " + std::to_string(d) + " (" +
                       (sizes.empty() ? "none" : sizes) + ") do not multiply to its division " +
                       std::to_string(div[d]) + " (grid " + list(div) + ")");
    }
  std::vector<int> cur = contiguous_ ? std::vector<int>(div.size(), 1) : div;
  for (const RoundK& kv : kvs_) {
    auto& c = cur[static_cast<std::size_t>(kv.dim)];
    if (contiguous_) {
      steps_.push_back(c);
      c *= kv.size;
    } else {
      c /= kv.size;
      steps_.push_back(c);
    }
  }
}

int Partners::step(int r) const {
  check(r, 0, "step");
  if (r >= static_cast<int>(kvs_.size()))
    throw IndexError("Partners::step: factored round " + std::to_string(r) + " of " +
                         std::to_string(kvs_.size()),
                     static_cast<std::uint64_t>(r), kvs_.size());
  return steps_[static_cast<std::size_t>(r)];
}

int Partners::position(int r, int gid) const {
  const int s = step(r);
  const RoundK& kv = kvs_[static_cast<std::size_t>(r)];
  const int c = grid_.coords(gid)[static_cast<std::size_t>(kv.dim)];
  return c / s % kv.size;
}

std::vector<int> Partners::group(int r, int gid) const {
  const int s = step(r);
  const RoundK& kv = kvs_[static_cast<std::size_t>(r)];
  std::vector<int> c = grid_.coords(gid);
  auto& x = c[static_cast<std::size_t>(kv.dim)];
  x -= (x / s % kv.size) * s;  // the group's first member
  std::vector<int> g;
  g.reserve(static_cast<std::size_t>(kv.size));
  for (int j = 0; j < kv.size; ++j, x += s) g.push_back(grid_.gid(c));
  return g;
}

int Partners::lastRound() const {
  const int R = static_cast<int>(kvs_.size());
  return pattern_ == Pattern::allReduce ? 2 * R : R;
}

void Partners::check(int round, int gid, const char* what) const {
  if (round < 0 || round > lastRound())
    throw IndexError(
        std::string("Partners::") + what + ": round " + std::to_string(round) + " of a " +
            pattern_name(pattern_) + " with rounds 0.." + std::to_string(lastRound()),
        static_cast<std::uint64_t>(round), static_cast<std::uint64_t>(lastRound() + 1));
  if (gid < 0 || gid >= nblocks())
    throw IndexError(std::string("Partners::") + what + ": gid " + std::to_string(gid) + " of " +
                         std::to_string(nblocks()) + " blocks",
                     static_cast<std::uint64_t>(gid), static_cast<std::uint64_t>(nblocks()));
}

int Partners::mergeRound(int round) const {
  const int R = static_cast<int>(kvs_.size());
  if (pattern_ == Pattern::broadcast) return R - round;
  if (pattern_ == Pattern::allReduce) return round < R ? round : 2 * R - round;
  return round;
}

bool Partners::mergeActive(int r, int gid) const {
  for (int q = 0; q < r; ++q)
    if (position(q, gid) != 0) return false;
  return true;
}

int Partners::outRound(int round) const {
  const int R = static_cast<int>(kvs_.size());
  if (pattern_ == Pattern::broadcast) return R - round - 1;
  if (pattern_ == Pattern::allReduce && round >= R) return 2 * R - round - 1;
  return round;
}

int Partners::size(int round) const {
  check(round, 0, "size");
  if (round == lastRound()) return 0;
  return kvs_[static_cast<std::size_t>(outRound(round))].size;
}

int Partners::dim(int round) const {
  check(round, 0, "dim");
  if (round == lastRound()) return -1;
  return kvs_[static_cast<std::size_t>(outRound(round))].dim;
}

bool Partners::active(int round, int gid) const {
  check(round, gid, "active");
  if (pattern_ == Pattern::swap) return true;
  return mergeActive(mergeRound(round), gid);
}

std::vector<int> Partners::in_link(int round, int gid) const {
  check(round, gid, "in_link");
  if (round == 0 || !active(round, gid)) return {};
  const int R = static_cast<int>(kvs_.size());
  switch (pattern_) {
    case Pattern::merge:
    case Pattern::swap:
      return group(round - 1, gid);
    case Pattern::broadcast:
      return {group(R - round, gid).front()};
    case Pattern::allReduce:
      if (round <= R) return group(round - 1, gid);
      return {group(2 * R - round, gid).front()};
  }
  return {};
}

std::vector<int> Partners::out_link(int round, int gid) const {
  check(round, gid, "out_link");
  if (round == lastRound() || !active(round, gid)) return {};
  const int R = static_cast<int>(kvs_.size());
  switch (pattern_) {
    case Pattern::merge:
      return {group(round, gid).front()};
    case Pattern::swap:
      return group(round, gid);
    case Pattern::broadcast:
      return group(R - round - 1, gid);
    case Pattern::allReduce:
      if (round < R) return {group(round, gid).front()};
      return group(2 * R - round - 1, gid);
  }
  return {};
}

}  // namespace antler::comm
