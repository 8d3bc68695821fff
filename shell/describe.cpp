// The Shell's descriptions: what bindings and tools need to know about elements, fields,
// messages and the schedule, as plain data, checked as the commands check (no communication:
// every node holds the whole tree).
#include "core/detail/path.hpp"
#include "core/field_element_finfo.hpp"
#include "msg/msg.hpp"
#include "shell/detail/handlers.hpp"
#include "shell/shell.hpp"
#include "shell/simulation.hpp"

namespace antler {

using namespace shell_detail;

namespace {
const Element* described(const Simulation& sim, ObjId o) {
  const Element* e = sim.elements().get(o.id);
  if (!e) throw PathError("the element " + std::to_string(o.id.value) + " no longer exists");
  return e;
}
}  // namespace

Shell::ElementInfo Shell::elementInfo(ObjId o) const {
  const Element* e = described(sim_, o);
  ElementInfo i;
  i.className = e->cinfo()->name();
  i.path = e->path();
  i.name = e->name();
  i.numData = e->numData();
  i.isField = e->isField();
  i.isGlobal = e->isGlobal();
  i.parent = e->parent();
  i.fieldDimension = e->isField() ? static_cast<const FieldElement*>(e)->fieldDimension() : 0;
  i.children = e->children();
  return i;
}

ObjId Shell::resolve(std::string_view path, std::string_view operation) const {
  return resolve_path(sim_.elements(), absolute(path), operation);
}

std::optional<ObjId> Shell::lookup(std::string_view path) const {
  const ObjId o = find_path(sim_.elements(), absolute(path));
  if (!sim_.elements().get(o.id)) return std::nullopt;
  return o;
}

const std::type_info& Shell::valueType(ObjId o, std::string_view field, std::string_view operation,
                                       bool writable) const {
  const std::string op(operation);
  return require_value(described(sim_, o), field, op.c_str(), writable)->valueType();
}

std::pair<const std::type_info*, const std::type_info*> Shell::lookupTypes(
    ObjId o, std::string_view field, std::string_view operation, bool writable) const {
  const Element* e = described(sim_, o);
  const std::string op(operation);
  const LookupValueFinfoBase* lf = require_lookup(e, field, op.c_str());
  if (writable && !lf->hasSetter())
    throw FieldError(op + ": lookup field " + e->cinfo()->name() + "." + std::string(field) +
                     " is read-only");
  return {&lf->keyType(), &lf->valueType()};
}

const std::vector<const std::type_info*>& Shell::destTypes(ObjId o, std::string_view dest) const {
  return require_dest(described(sim_, o), dest, "call")->argTypes();
}

namespace {
Shell::MsgInfo describe(const Msg* m) {
  Shell::MsgInfo i;
  i.id = m->id();
  i.kind = to_string(m->kind());
  i.src = m->src()->id();
  i.dest = m->dest()->id();
  i.srcPath = m->src()->path();
  i.srcField = m->srcFinfo()->name();
  i.destPath = m->dest()->path();
  i.destField = m->destFinfo()->name();
  i.from = ObjId(i.src);
  i.to = ObjId(i.dest);
  switch (m->kind()) {
    case MsgKind::sparse:
      i.entries = static_cast<const SparseMsg*>(m)->numEntries();
      break;
    case MsgKind::single: {
      const auto* s = static_cast<const SingleMsg*>(m);
      i.from = ObjId(i.src, s->from().data, s->from().field);
      i.to = ObjId(i.dest, s->to().data, s->to().field);
      break;
    }
    case MsgKind::diagonal:
      i.stride = static_cast<const DiagonalMsg*>(m)->stride();
      break;
    default:
      break;
  }
  return i;
}
}  // namespace

std::vector<Shell::MsgInfo> Shell::messages() const {
  std::vector<MsgInfo> out;
  for (const Msg* m : sim_.msgs().all()) out.push_back(describe(m));
  return out;
}

Shell::MsgInfo Shell::messageInfo(std::uint32_t id) const {
  const Msg* m = sim_.msgs().get(id);
  if (!m) throw MsgError("Msg: no message with id " + std::to_string(id));
  return describe(m);
}

std::string Shell::classDoc(std::string_view className, std::string_view operation) {
  return Cinfo::require(className, operation)->doc();
}

std::vector<std::string> Shell::classBases(std::string_view className, std::string_view operation) {
  std::vector<std::string> out;
  for (const Cinfo* c = Cinfo::require(className, operation); c; c = c->base())
    out.push_back(c->name());
  return out;
}

std::vector<std::vector<std::string>> Shell::schedule() const {
  std::vector<std::vector<std::string>> out(Clock::kNumTicks);
  for (unsigned k = 0; k < Clock::kNumTicks; ++k)
    for (const Clock::Entry& x : sim_.clock().elements(k))
      if (const Element* e = sim_.elements().get(x.id))
        out[k].push_back(x.phase == Clock::Phase::init ? e->path() + ":init" : e->path());
  return out;
}

int Shell::tickOf(ObjId o, bool init) const {
  described(sim_, o);
  return sim_.clock().tickOf(o.id, init ? Clock::Phase::init : Clock::Phase::process);
}

std::vector<double> Shell::tickDts() const {
  return sim_.clock().dts();
}

std::uint64_t Shell::currentStep() const {
  return sim_.clock().currentStep();
}

std::uint64_t Shell::currentSeed() const {
  return sim_.seed();
}

void Shell::interrupt() {
  sim_.clock().requestStop();
}

}  // namespace antler
