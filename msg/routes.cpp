#include "msg/detail/routes.hpp"

#include <algorithm>

#include "core/cinfo.hpp"
#include "core/context.hpp"
#include "core/layout.hpp"
#include "msg/msg.hpp"

namespace antler::detail {

namespace {

/// Appends the nodes owning the targets of a send from data index d through m (this node's
/// included; the caller drops it). Returns false when every node holding entries of the
/// destination may be a target (the caller sends everywhere).
bool target_nodes(const Msg* m, Index d, int P, std::vector<std::int32_t>& out) {
  const Element* dest = m->dest();
  const Index n = dest->numData();
  auto owner = [&](Index i) { return block_owner(n, P, i); };
  switch (m->kind()) {
    case MsgKind::single: {
      auto* s = static_cast<const SingleMsg*>(m);
      if (s->from().data == d) out.push_back(owner(s->to().data));
      return true;
    }
    case MsgKind::oneToOne:
      if (d < n) out.push_back(owner(d));
      return true;
    case MsgKind::diagonal: {
      const long j = static_cast<long>(d) + static_cast<const DiagonalMsg*>(m)->stride();
      if (j >= 0 && j < static_cast<long>(n)) out.push_back(owner(static_cast<Index>(j)));
      return true;
    }
    case MsgKind::oneToAll:
      if (n >= static_cast<Index>(P)) return false;
      for (Index i = 0; i < n; ++i) out.push_back(owner(i));
      return true;
    case MsgKind::sparse: {
      auto* s = static_cast<const SparseMsg*>(m);
      if (d >= s->numRows()) return true;
      auto [b, e] = s->row(d);
      int last = -1;
      for (const Index* t = b; t != e; ++t) {  // a row is sorted: its owners ascend
        const int o = owner(*t);
        if (o != last) out.push_back(last = o);
      }
      return true;
    }
    case MsgKind::reduce:
      return true;  // not delivered by the post office
  }
  return true;
}

}  // namespace

void Routes::build(const Context& ctx) {
  const NodeLayout& L = ctx.layout();
  const int P = L.numNodes, me = L.node;
  ports_.clear();
  targets_.clear();
  entries_ = 0;
  rows_ = reach_ = 0;
  std::vector<char> seen(static_cast<std::size_t>(P), 0);
  std::vector<std::int32_t> row;
  for (const Element* e : ctx.elements().all()) {
    const std::size_t nports = e->cinfo()->srcFinfos().size();
    for (std::size_t b = 0; b < nports; ++b) {
      const auto& conns = e->conns(static_cast<unsigned>(b));
      if (conns.empty()) continue;
      if (ports_.size() <= e->id().value) ports_.resize(e->id().value + 1);
      auto& ports = ports_[e->id().value];
      if (ports.size() <= b) ports.resize(b + 1);
      Port& p = ports[b];
      p.first = e->localBegin();
      // A global source (every node sends its own copy) or a global destination (every node
      // holds every target) keeps the allgather's reach: every node.
      bool all = e->isGlobal();
      for (const Conn& c : conns)
        all = all || (c.msg->kind() != MsgKind::reduce && c.msg->dest()->isGlobal());
      p.start.assign(1, 0);
      for (Index d = e->localBegin(); d < e->localEnd() && !all; ++d) {
        row.clear();
        for (const Conn& c : conns)
          if (!target_nodes(c.msg, d, P, row)) all = true;
        std::sort(row.begin(), row.end());
        row.erase(std::unique(row.begin(), row.end()), row.end());
        for (std::int32_t n : row)
          if (n != me) {
            p.nodes.push_back(n);
            seen[static_cast<std::size_t>(n)] = 1;
          }
        p.start.push_back(static_cast<std::uint32_t>(p.nodes.size()));
      }
      if (all) {
        p.toAll = true;
        p.start.clear();
        p.nodes.clear();
        for (int n = 0; n < P; ++n)
          if (n != me) seen[static_cast<std::size_t>(n)] = 1;
      }
      p.any = p.toAll ? P > 1 : !p.nodes.empty();
      if (!p.any) {
        p.start.clear();
        p.nodes.clear();
      }
      p.start.shrink_to_fit();
      p.nodes.shrink_to_fit();
      entries_ += p.nodes.size();
      rows_ += e->numLocal();
      reach_ += p.toAll ? std::uint64_t{e->numLocal()} * static_cast<std::uint64_t>(P - 1)
                        : p.nodes.size();
    }
  }
  for (int n = 0; n < P; ++n)
    if (seen[static_cast<std::size_t>(n)]) targets_.push_back(n);
}

}  // namespace antler::detail
