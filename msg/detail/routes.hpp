#pragma once
// Routes between nodes (internal to the post office): for each (source Element, port) with
// messages and each of its entries on this node, the other nodes that own a target of a send
// from it. The targeted exchange (msg/post_office.hpp) sends each record only there.
//
// Built from the messages on every node without communication: every node holds every
// message's mapping (a Sparse message's matrix is whole on every node; the other kinds are
// formulas), and the layout says who owns which entry. The table holds a row per local entry of
// a port that has any remote target, and the nodes of each row: it grows with this node's
// sources and their target nodes, not with the number of entries in the model.
#include <cstdint>
#include <vector>

#include "core/fwd.hpp"

namespace antler {
class Context;
}

namespace antler::detail {

class Routes {
 public:
  struct Port {
    bool toAll = false;  ///< every other node gets every send (a global end; OneToAll on all)
    bool any = false;    ///< some send goes to another node
    Index first = 0;     ///< the data index of row 0 (the source's first local entry)
    /// Row i (data index first + i): its nodes are nodes[start[i], start[i + 1]), ascending.
    std::vector<std::uint32_t> start;
    std::vector<std::int32_t> nodes;
    /// The nodes of data index d (d local).
    std::pair<const std::int32_t*, const std::int32_t*> row(Index d) const {
      const std::size_t i = d - first;
      return {nodes.data() + start[i], nodes.data() + start[i + 1]};
    }
  };

  /// (Re)builds the table for ctx's messages and layout.
  void build(const Context& ctx);
  /// The routes of port `bind` of Element `src` (nullptr: no message leaves it).
  const Port* port(std::uint32_t src, std::uint32_t bind) const {
    if (src >= ports_.size() || bind >= ports_[src].size()) return nullptr;
    const Port& p = ports_[src][bind];
    return p.any ? &p : nullptr;
  }
  /// Every node some send may go to, ascending (this node excluded).
  const std::vector<int>& targets() const { return targets_; }
  /// Node entries held (rows' nodes): the table's size.
  std::size_t size() const { return entries_; }
  /// Local source entries of ports with messages (a record each could send), and the
  /// (entry, other node) pairs they reach: what the targeted exchange would deliver where the
  /// allgather delivers rows x (P - 1).
  std::uint64_t rows() const { return rows_; }
  std::uint64_t reach() const { return reach_; }

 private:
  std::vector<std::vector<Port>> ports_;  // by Element id, then bind index
  std::vector<int> targets_;
  std::size_t entries_ = 0;
  std::uint64_t rows_ = 0, reach_ = 0;
};

}  // namespace antler::detail
