#include "reduce/reduce_msg.hpp"

#include "core/error.hpp"
#include "reduce/context.hpp"

namespace antler {

namespace {
std::vector<std::string> get_fields(const Cinfo* c) {
  std::vector<std::string> out;
  for (const Finfo* f : c->finfos())
    if (f->kind() == FinfoKind::dest && static_cast<const DestFinfoBase*>(f)->getterOf())
      out.push_back(f->name());
  return out;
}
}  // namespace

ReduceMsg::~ReduceMsg() {
  if (job_) reduce_context(*src()).reduces().remove(job_->id());
}

Msg* reduce_connect(ReduceContext& sim, const ObjId& src, std::string_view srcField,
                    const ObjId& dest, std::string_view destField, bool single) {
  constexpr const char* op = "connect";
  Element* se = sim.elements().get(src.id);
  Element* de = sim.elements().get(dest.id);
  if (!se || !de) throw PathError("connect: the source or destination element does not exist");
  const Finfo* sf = se->cinfo()->findFinfo(srcField);
  if (!sf || sf->kind() != FinfoKind::reduce) {
    const auto names = se->cinfo()->fieldNames(FinfoKind::reduce);
    throw FieldError(std::string(op) + ": '" + std::string(srcField) +
                     "' is not a reduce field of " + se->cinfo()->name() + " (reduce fields: " +
                     (names.empty() ? std::string("none") : join_names(names)) + ")");
  }
  const Finfo* df = de->cinfo()->findFinfo(destField);
  if (!df || df->kind() != FinfoKind::dest || !static_cast<const DestFinfoBase*>(df)->getterOf())
    throw FieldError(std::string(op) + ": a Reduce message reads a 'get' field, and '" +
                     std::string(destField) + "' is not one of " + de->cinfo()->name() +
                     " ('get' fields: " + join_names(get_fields(de->cinfo())) + ")");
  if (src.dataIndex >= se->numData())
    throw IndexError(std::string(op) + ": requester index " + std::to_string(src.dataIndex) +
                     " out of range for " + se->path() + ", which has " +
                     std::to_string(se->numData()) + " entries");
  if (single && dest.dataIndex >= de->numData())
    throw IndexError(std::string(op) + ": target index " + std::to_string(dest.dataIndex) +
                     " out of range for " + de->path() + ", which has " +
                     std::to_string(de->numData()) + " entries");
  auto* rf = static_cast<const ReduceFinfoBase*>(sf);
  MsgTable& table = sim.msgs();
  auto m = std::make_unique<ReduceMsg>(table.nextId(), se, src.dataIndex, de, rf,
                                       static_cast<const DestFinfoBase*>(df));
  if (single) m->setSingleTarget(Target{dest.dataIndex, dest.fieldIndex});
  m->setJob(rf->makeJob(*m));  // may throw TypeError: nothing is linked yet
  ReduceBase* job = m->job();
  Msg* made = table.insert(std::move(m), rf, nullptr);
  sim.reduces().add(job);
  return made;
}

}  // namespace antler
