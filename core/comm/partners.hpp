#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Partners: who talks to whom in each round of a block reduction (DIY's RegularPartners and
/// its merge, swap, broadcast and all-reduce patterns, with DIY's rules, written from its
/// documented behaviour and checked against tables derived from its source in the tests).
///
/// Blocks are numbered 0..n-1 (gids) and may sit on a regular grid (BlockGrid): gid = x +
/// divx * (y + divy * z ...). The rounds come from factoring each dimension's division by k:
///
///   factor(k, d): while d > 1, take k if k divides d, else the largest j in (1, k) that does,
///                 else all of d at once.
///   6 blocks, k = 2: rounds of 2 then 3; 7, k = 2: one round of 7; 12, k = 4: 4 then 3;
///   24, k = 3: 3, 2, 2, 2.
///
/// Dimensions interleave: round 0 is dimension 0's first factor, round 1 dimension 1's first,
/// ..., then each dimension's second factor, skipping dimensions with none left. In a round of
/// group size s in dimension d, the blocks whose coordinates differ only in d form groups of s,
/// `step` apart in d: contiguous (distance doubling, the default) starts at step 1 and multiplies
/// it by s after each round in d; not contiguous (distance halving) starts at division(d) / s and
/// divides. A group is listed in coordinate order (its first block, the group's root, first).
///
/// Patterns over R factored rounds (a round's in-link: the blocks it receives from, sent in the
/// round before; its out-link: the blocks it sends to, received in the round after):
///
///   merge       R + 1 rounds (0..R). A block is active in round r while it was its group's root
///               in every round before r. In-link of round r: its group of round r - 1; out-link:
///               the root of its group of round r. gid 0 holds the result in round R.
///   broadcast   the merge reversed: round r is merge round R - r with in- and out-links swapped.
///               gid 0 alone is active in round 0; every block in round R.
///   allReduce   merge (rounds 0..R) then broadcast (rounds R..2R): 2R + 1 rounds; in round R
///               gid 0 receives from its last group and sends back to it.
///   swap        R + 1 rounds, every block active in every round. In-link of round r: its group
///               of round r - 1; out-link: its group of round r.
///
/// Round 0 has no in-link and the last round no out-link. Links list gids in group order and
/// include the block itself where it is in the group.
///
/// Bad input is an error here, not a hang: k < 2 (DIY's own factoring loops at k = 1 and divides
/// by zero at k = 0), a division < 1, an explicit round list whose group sizes do not multiply
/// to each dimension's division, a round or gid out of range.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace antler::comm {

/// Blocks on a regular grid: divisions per dimension, gid = x0 + d0 * (x1 + d1 * (x2 + ...)).
class BlockGrid {
 public:
  /// n blocks in one dimension.
  static BlockGrid line(int n);
  /// A grid with these divisions (each >= 1; at least one dimension).
  explicit BlockGrid(std::vector<int> divisions);
  int dims() const { return static_cast<int>(divisions_.size()); }
  const std::vector<int>& divisions() const { return divisions_; }
  /// The number of blocks (the product of the divisions).
  int nblocks() const { return nblocks_; }
  /// The coordinates of gid.
  std::vector<int> coords(int gid) const;
  /// The gid at these coordinates.
  int gid(std::span<const int> coords) const;

 private:
  std::vector<int> divisions_;
  int nblocks_ = 1;
};

/// One factored round: the dimension it runs in and its group size.
struct RoundK {
  int dim = 0;
  int size = 1;
  bool operator==(const RoundK&) const = default;
};

/// The four patterns of DIY's regular partners.
enum class Pattern : std::uint8_t { merge, swap, broadcast, allReduce };
/// "merge", "swap", "broadcast", "allReduce".
const char* pattern_name(Pattern p);

/// Who talks to whom in each round of a pattern over a block grid (see the top of the file).
class Partners {
 public:
  /// The pattern over grid with radix k (>= 2), DIY's factoring and interleaving.
  Partners(Pattern p, BlockGrid grid, int k, bool contiguous = true);
  /// The pattern with explicit factored rounds (sizes >= 1 whose product in each dimension is
  /// that dimension's division).
  Partners(Pattern p, BlockGrid grid, std::vector<RoundK> rounds, bool contiguous = true);

  static Partners merge(BlockGrid g, int k = 2, bool contiguous = true) {
    return Partners(Pattern::merge, std::move(g), k, contiguous);
  }
  static Partners swap(BlockGrid g, int k = 2, bool contiguous = true) {
    return Partners(Pattern::swap, std::move(g), k, contiguous);
  }
  static Partners broadcast(BlockGrid g, int k = 2, bool contiguous = true) {
    return Partners(Pattern::broadcast, std::move(g), k, contiguous);
  }
  static Partners allReduce(BlockGrid g, int k = 2, bool contiguous = true) {
    return Partners(Pattern::allReduce, std::move(g), k, contiguous);
  }

  /// DIY's factoring of k over each division, interleaved over the dimensions.
  static std::vector<RoundK> factor(int k, std::span<const int> divisions);

  Pattern pattern() const { return pattern_; }
  const BlockGrid& grid() const { return grid_; }
  int nblocks() const { return grid_.nblocks(); }
  bool contiguous() const { return contiguous_; }
  /// The factored rounds (R of them).
  const std::vector<RoundK>& factored() const { return kvs_; }
  /// The gid distance between group members in factored round r.
  int step(int r) const;
  /// gid's group in factored round r, in group order.
  std::vector<int> group(int r, int gid) const;
  /// gid's position in its group of factored round r (0: the group's root).
  int position(int r, int gid) const;

  /// The pattern's last round: R (merge, swap, broadcast) or 2R (allReduce). Rounds run
  /// 0..lastRound(), callbacks once per active block in each.
  int lastRound() const;
  /// The size of the groups `round` sends to: the factored round its out-links come from (0 in
  /// the last round). DIY's broadcast and all-reduce name the mirrored merge round instead (and
  /// read past their table in round 0); merge and swap agree with DIY.
  int size(int round) const;
  /// The dimension of that factored round (-1 in the last round).
  int dim(int round) const;
  /// Whether gid takes part in `round`.
  bool active(int round, int gid) const;
  /// The blocks gid receives from in `round` (empty in round 0 and where gid is inactive).
  std::vector<int> in_link(int round, int gid) const;
  /// The blocks gid sends to in `round` (empty in the last round and where gid is inactive).
  std::vector<int> out_link(int round, int gid) const;

 private:
  void check(int round, int gid, const char* what) const;
  int mergeRound(int round) const;  // broadcast and allReduce: the merge round a round mirrors
  int outRound(int round) const;    // the factored round a round's out-links come from
  bool mergeActive(int r, int gid) const;

  Pattern pattern_;
  BlockGrid grid_;
  std::vector<RoundK> kvs_;
  bool contiguous_;
  std::vector<int> steps_;
};

}  // namespace antler::comm
#pragma GCC visibility pop
