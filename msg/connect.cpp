#include "core/error.hpp"
#include "msg/context.hpp"
#include "msg/msg.hpp"

namespace antler {

namespace {

std::string sig(const std::vector<const std::type_info*>& t) {
  return "(" + (t.empty() ? std::string() : type_list_name(t)) + ")";
}

bool same_types(const std::vector<const std::type_info*>& a,
                const std::vector<const std::type_info*>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (*a[i] != *b[i]) return false;
  return true;
}

void check_index(const char* op, const char* role, const Element* e, Index d) {
  if (d >= e->numData())
    throw IndexError(std::string(op) + ": " + role + " index " + std::to_string(d) +
                     " out of range for " + e->path() + ", which has " +
                     std::to_string(e->numData()) + " entries");
}

std::unique_ptr<Msg> make_single(std::uint32_t id, Element* se, Element* de, const Finfo* sf,
                                 const Finfo* df, const ObjId& src, const ObjId& dest) {
  check_index("connect", "source", se, src.dataIndex);
  check_index("connect", "destination", de, dest.dataIndex);
  return std::make_unique<SingleMsg>(id, se, de, sf, df, Target{src.dataIndex, src.fieldIndex},
                                     Target{dest.dataIndex, dest.fieldIndex});
}

std::unique_ptr<Msg> make_one_to_one(std::uint32_t id, Element* se, Element* de, const Finfo* sf,
                                     const Finfo* df, const ObjId&, const ObjId&) {
  if (se->numData() != de->numData())
    throw MsgError("connect: OneToOne needs equal sizes, but " + se->path() + " has " +
                   std::to_string(se->numData()) + " entries and " + de->path() + " has " +
                   std::to_string(de->numData()));
  return std::make_unique<OneToOneMsg>(id, se, de, sf, df);
}

template <class M>
std::unique_ptr<Msg> make_plain(std::uint32_t id, Element* se, Element* de, const Finfo* sf,
                                const Finfo* df, const ObjId&, const ObjId&) {
  return std::make_unique<M>(id, se, de, sf, df);
}

std::unique_ptr<Msg> make_diagonal(std::uint32_t id, Element* se, Element* de, const Finfo* sf,
                                   const Finfo* df, const ObjId&, const ObjId&) {
  return std::make_unique<DiagonalMsg>(id, se, de, sf, df, 1);
}

/// The message kinds, in MsgKind order.
constexpr MsgKindInfo kMsgKinds[] = {
    {MsgKind::single, "Single", make_single, ""},
    {MsgKind::oneToOne, "OneToOne", make_one_to_one, ""},
    {MsgKind::oneToAll, "OneToAll", make_plain<OneToAllMsg>, ""},
    {MsgKind::diagonal, "Diagonal", make_diagonal, "setStride"},
    {MsgKind::sparse, "Sparse", make_plain<SparseMsg>, "setRandomConnectivity, pairFill"},
    {MsgKind::reduce, "Reduce", nullptr, ""},
};
static_assert(std::size(kMsgKinds) == static_cast<std::size_t>(MsgKind::reduce) + 1);

}  // namespace

std::span<const MsgKindInfo> msg_kinds() {
  return kMsgKinds;
}

Msg* connect(MsgContext& sim, std::string_view kindName, const ObjId& src,
             std::string_view srcField, const ObjId& dest, std::string_view destField) {
  constexpr const char* op = "connect";
  const MsgKind kind = parse_msg_kind(kindName, op);
  if (kind == MsgKind::reduce)
    throw MsgError("connect: Reduce messages start at a ReduceFinfo; use Shell::addMsg");
  Element* se = sim.elements().get(src.id);
  Element* de = sim.elements().get(dest.id);
  if (!se) throw PathError("connect: the source element does not exist");
  if (!de) throw PathError("connect: the destination element does not exist");

  const Finfo* sf = se->cinfo()->findFinfo(srcField);
  if (!sf || sf->kind() != FinfoKind::src) {
    const auto srcs = se->cinfo()->fieldNames(FinfoKind::src);
    throw FieldError(std::string(op) + ": '" + std::string(srcField) +
                     "' is not a source field of " + se->cinfo()->name() + " (" + se->path() +
                     "; source fields: " + (srcs.empty() ? std::string("none") : join_names(srcs)) +
                     ")");
  }
  const Finfo* df = de->cinfo()->findFinfo(destField);
  if (!df || df->kind() != FinfoKind::dest) {
    const auto dests = de->cinfo()->fieldNames(FinfoKind::dest);
    throw FieldError(std::string(op) + ": '" + std::string(destField) +
                     "' is not a destination field of " + de->cinfo()->name() + " (" + de->path() +
                     "; destination fields: " + join_names(dests) + ")");
  }
  auto* s = static_cast<const SrcFinfoBase*>(sf);
  auto* d = static_cast<const DestFinfoBase*>(df);
  if (d->getterOf())
    throw MsgError(std::string(op) + ": '" + d->name() + "' of " + de->cinfo()->name() +
                   " reads a value; only a Reduce message can target it");
  if (!same_types(s->argTypes(), d->argTypes()))
    throw TypeError(std::string(op) + ": " + se->cinfo()->name() + "." + s->name() + " sends " +
                    sig(s->argTypes()) + " but " + de->cinfo()->name() + "." + d->name() +
                    " takes " + sig(d->argTypes()));

  MsgTable& table = sim.msgs();
  std::unique_ptr<Msg> m =
      msg_kinds()[static_cast<std::size_t>(kind)].make(table.nextId(), se, de, sf, df, src, dest);
  return table.insert(std::move(m), s, d);
}

}  // namespace antler
