// The Shell's handlers for messages (see shell/detail/handlers.hpp).
#include "msg/msg.hpp"
#include "reduce/reduce_msg.hpp"
#include "shell/detail/handlers.hpp"

namespace antler::shell_detail {

namespace {
/// A shared message (MOOSE's raxial to axial): the source's sources to the destination's
/// destinations and back, in order, all checked before any is made. Returns the first message.
Msg* connect_shared(Simulation& sim, const std::string& kindName, MsgKind kind, const ObjId& src,
                    const SharedMsgFinfo* ss, const ObjId& dest, const std::string& df) {
  const Cinfo* dc = sim.elements().get(dest.id)->cinfo();
  const auto* ds = dynamic_cast<const SharedMsgFinfo*>(dc->findFinfo(df));
  const Cinfo* sc = sim.elements().get(src.id)->cinfo();
  if (!ds) {
    std::vector<std::string> shared;
    for (const Finfo* f : dc->finfos())
      if (dynamic_cast<const SharedMsgFinfo*>(f)) shared.push_back(f->name());
    throw FieldError("addMsg: '" + ss->name() + "' of " + sc->name() +
                     " is a shared message field; connect it to a shared field of " + dc->name() +
                     ", not '" + df + "' (shared fields: " +
                     (shared.empty() ? std::string("none") : join_names(shared)) + ")");
  }
  if (kind != MsgKind::single && kind != MsgKind::oneToOne)
    throw MsgError("addMsg: the shared fields " + sc->name() + "." + ss->name() + " and " +
                   dc->name() + "." + ds->name() +
                   " connect both ways, with a Single or a OneToOne message, not " + kindName);
  if (ss->srcs().size() != ds->dests().size() || ds->srcs().size() != ss->dests().size())
    throw MsgError("addMsg: the shared fields " + sc->name() + "." + ss->name() + " (" +
                   ss->type() + ") and " + dc->name() + "." + ds->name() + " (" + ds->type() +
                   ") do not match");
  auto types = [](const Cinfo* c, const std::string& name) {
    const Finfo* f = c->findFinfo(name);
    if (auto* s = dynamic_cast<const SrcFinfoBase*>(f)) return &s->argTypes();
    if (auto* d = dynamic_cast<const DestFinfoBase*>(f)) return &d->argTypes();
    throw InternalError("shared field member '" + name + "' of " + c->name() + " is not a field");
  };
  auto same = [](const std::vector<const std::type_info*>* a,
                 const std::vector<const std::type_info*>* b) {
    if (a->size() != b->size()) return false;
    for (std::size_t i = 0; i < a->size(); ++i)
      if (*(*a)[i] != *(*b)[i]) return false;
    return true;
  };
  for (std::size_t i = 0; i < ss->srcs().size(); ++i)
    if (!same(types(sc, ss->srcs()[i]), types(dc, ds->dests()[i])))
      throw MsgError("addMsg: " + sc->name() + "." + ss->srcs()[i] + " does not match " +
                     dc->name() + "." + ds->dests()[i] + " in the shared fields " + ss->name() +
                     " and " + ds->name());
  for (std::size_t i = 0; i < ds->srcs().size(); ++i)
    if (!same(types(dc, ds->srcs()[i]), types(sc, ss->dests()[i])))
      throw MsgError("addMsg: " + dc->name() + "." + ds->srcs()[i] + " does not match " +
                     sc->name() + "." + ss->dests()[i] + " in the shared fields " + ds->name() +
                     " and " + ss->name());
  Msg* first = nullptr;
  for (std::size_t i = 0; i < ss->srcs().size(); ++i) {
    Msg* m = connect(sim, kindName, src, ss->srcs()[i], dest, ds->dests()[i]);
    if (!first) first = m;
  }
  for (std::size_t i = 0; i < ds->srcs().size(); ++i) {
    Msg* m = connect(sim, kindName, dest, ds->srcs()[i], src, ss->dests()[i]);
    if (!first) first = m;
  }
  if (!first) throw MsgError("addMsg: the shared field " + ss->name() + " has no members");
  return first;
}
}  // namespace

std::uint32_t do_add_msg(Simulation& sim, const std::string& kind, ObjId src, const std::string& sf,
                         ObjId dest, const std::string& df) {
  require_element(sim, src, "addMsg");
  require_element(sim, dest, "addMsg");
  Msg* m = nullptr;
  const MsgKind k = parse_msg_kind(kind, "addMsg");
  const Finfo* srcFinfo = sim.elements().get(src.id)->cinfo()->findFinfo(sf);
  if (k == MsgKind::reduce || (srcFinfo && srcFinfo->kind() == FinfoKind::reduce)) {
    // A reduce field reads every entry of an Element (Reduce) or one object (Single); OneToOne
    // (MOOSE's array of Tables reading an array) is a Single message per entry pair, d to d.
    if (k != MsgKind::reduce && k != MsgKind::single && k != MsgKind::oneToOne)
      throw MsgError("addMsg: the reduce field '" + sf +
                     "' connects with a Reduce message (every entry), a Single message (one " +
                     "object) or OneToOne (entry i of each to entry i of the other), not " + kind);
    if (k == MsgKind::oneToOne) {
      const Element* se = sim.elements().get(src.id);
      const Element* de = sim.elements().get(dest.id);
      if (se->numData() != de->numData() || de->isField())
        throw MsgError("addMsg: OneToOne from " + se->path() + "." + sf + " (" +
                       std::to_string(se->numData()) +
                       " entries) needs an element of as many "
                       "entries, not " +
                       de->path() + " (" + std::to_string(de->numData()) +
                       (de->isField() ? ", a field element)" : ")"));
      for (Index d = 0; d < se->numData(); ++d) {
        Msg* one = reduce_connect(sim, ObjId(src.id, d), sf, ObjId(dest.id, d), df, true);
        if (!m) m = one;
      }
      if (!m) throw MsgError("addMsg: OneToOne between empty elements");
    } else {
      m = reduce_connect(sim, src, sf, dest, df, k == MsgKind::single);
    }
  } else if (const auto* ss = dynamic_cast<const SharedMsgFinfo*>(srcFinfo)) {
    m = connect_shared(sim, kind, k, src, ss, dest, df);
  } else {
    m = connect(sim, kind, src, sf, dest, df);
  }
  return m->id();
}

Msg* require_msg(Simulation& sim, std::uint32_t id, MsgKind kind, const char* op) {
  Msg* m = sim.msgs().get(id);
  if (!m) throw MsgError(std::string(op) + ": no message with id " + std::to_string(id));
  if (m->kind() == kind) return m;
  const std::string name = to_string(m->kind());
  const char* config = msg_kinds()[static_cast<std::size_t>(m->kind())].configuration;
  throw MsgError(std::string(op) + ": message " + std::to_string(id) + " is a " + name +
                 " message, not " + to_string(kind) + " (a " + name + " message " +
                 (*config ? std::string("is configured with ") + config
                          : std::string("takes no configuration")) +
                 ")");
}

void do_random(Simulation& sim, std::uint32_t id, double p, std::uint64_t seed) {
  static_cast<SparseMsg*>(require_msg(sim, id, MsgKind::sparse, "setRandomConnectivity"))
      ->setRandomConnectivity(p, seed);
}

void do_pair_fill(Simulation& sim, std::uint32_t id, const ArrayView<Index>& s,
                  const ArrayView<Index>& d) {
  static_cast<SparseMsg*>(require_msg(sim, id, MsgKind::sparse, "pairFill"))->pairFill(s, d);
}

void do_set_stride(Simulation& sim, std::uint32_t id, long s) {
  static_cast<DiagonalMsg*>(require_msg(sim, id, MsgKind::diagonal, "setStride"))->setStride(s);
}

}  // namespace antler::shell_detail
