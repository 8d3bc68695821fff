#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Where this process sits (node = MPI rank), and how entries are split over nodes and threads.
/// Block distribution: node r of P holds a contiguous range of an Element's N entries, the first
/// N % P nodes one entry more; inside a node, thread t of T processes a contiguous slice of the
/// node's range the same way. Contiguity is what makes the serial order of messages (by source
/// node, then thread, then send order) equal the order of the source's global index.
#include <utility>

#include "core/fwd.hpp"

namespace antler {

/// A process's node index and the node count of its simulation (core/context.hpp keeps it).
struct NodeLayout {
  int node = 0;
  int numNodes = 1;
};

/// [begin, end) of part `part` of `parts` contiguous blocks over n entries.
constexpr std::pair<Index, Index> block_range(Index n, int parts, int part) {
  const Index q = n / static_cast<Index>(parts);
  const Index r = n % static_cast<Index>(parts);
  const Index p = static_cast<Index>(part);
  const Index b = p * q + (p < r ? p : r);
  return {b, b + q + (p < r ? 1 : 0)};
}

/// Which block of `parts` holds entry i of n.
constexpr int block_owner(Index n, int parts, Index i) {
  const Index q = n / static_cast<Index>(parts);
  const Index r = n % static_cast<Index>(parts);
  const Index big = r * (q + 1);  // entries held by the first r (larger) blocks
  if (i < big) return static_cast<int>(i / (q + 1));
  return static_cast<int>(r + (i - big) / q);
}

}  // namespace antler
#pragma GCC visibility pop
