#include "core/element.hpp"

#include <algorithm>

#include "core/context.hpp"

namespace antler {

Context::Context(NodeLayout layout) : layout_(layout), elements_(*this) {}

Context::~Context() = default;

void Context::setLayout(NodeLayout l) {
  if (l.node == layout_.node && l.numNodes == layout_.numNodes) return;
  for (const Element* e : elements_.all())
    if (!e->isGlobal())
      throw StateError("setLayout: " + e->path() +
                       " is distributed over the current nodes; clear the model first");
  layout_ = l;
  touchTopology();
}

std::string ElementTable::path(Id id) const {
  const Element* e = get(id);
  return e ? e->path() : "/<deleted:" + std::to_string(id.value) + ">";
}

std::string ElementTable::path(const ObjId& o) const {
  const Element* e = get(o.id);
  if (!e) return path(o.id);
  if (e->isField())
    return path(e->parent()) + "[" + std::to_string(o.dataIndex) + "]/" + e->name() + "[" +
           std::to_string(o.fieldIndex) + "]";
  if (o.id == Id::root()) return "/";
  return e->path() + "[" + std::to_string(o.dataIndex) + "]";
}

Element::Element(Context& context, Id id, std::string name, const Cinfo* cinfo, Id parent)
    : context_(&context), id_(id), name_(std::move(name)), cinfo_(cinfo), parent_(parent) {}

Element::~Element() = default;

std::string Element::path() const {
  if (id_ == Id::root()) return "/";
  const Element* p = context_->elements().get(parent_);
  const std::string pp = p ? p->path() : "";
  return (pp == "/" ? "" : pp) + "/" + name_;
}

Element* Element::child(const std::string& name) const {
  const ElementTable& t = context_->elements();
  for (Id c : children_) {
    Element* e = t.get(c);
    if (e && e->name() == name) return e;
  }
  return nullptr;
}

int Element::owner(Index d) const {
  const NodeLayout& l = context_->layout();
  if (isGlobal()) return l.node;
  return block_owner(numData_, l.numNodes, d);
}

int Element::myNode() const {
  return context_->layout().node;
}

void Element::addConn(unsigned bindIndex, Conn c) {
  if (conns_.size() <= bindIndex) conns_.resize(bindIndex + 1);
  conns_[bindIndex].push_back(c);
}

void Element::dropConnsTo(const Msg* m) {
  for (auto& v : conns_) std::erase_if(v, [m](const Conn& c) { return c.msg == m; });
}

void Element::removeChild(Id c) {
  std::erase(children_, c);
}

DataElement::DataElement(Context& context, Id id, std::string name, const Cinfo* cinfo, Id parent,
                         Index n, bool global)
    : Element(context, id, std::move(name), cinfo, parent),
      global_(global),
      size_(cinfo->dinfo().size()) {
  const auto& l = context.layout();
  if (global)
    setRange(n, 0, n);
  else {
    auto [b, e] = block_range(n, l.numNodes, l.node);
    setRange(n, b, e);
  }
  base_ = cinfo->dinfo().allocate(numLocal());
}

DataElement::~DataElement() {
  cinfo()->dinfo().destroy(base_, numLocal());
}

FieldElement::FieldElement(Id id, std::string name, const Cinfo* cinfo, DataElement* parent,
                           const FieldElementFinfoBase* finfo)
    : Element(parent->context(), id, std::move(name), cinfo, parent->id()),
      parentData_(parent),
      finfo_(finfo) {
  setIsField();
  setRange(parent->numData(), parent->localBegin(), parent->localEnd());
}

char* FieldElement::data(Index d, Index f) const {
  return finfo_->lookup(parentData_->localData(d), f);
}

Index FieldElement::numField(Index d) const {
  return finfo_->getNum(parentData_->localData(d));
}

void FieldElement::setNumField(Index d, Index n) const {
  finfo_->setNum(parentData_->localData(d), n);
}

ElementTable::ElementTable(Context& context) : context_(&context) {
  elements_.push_back(std::make_unique<DataElement>(context, Id::root(), "root",
                                                    Neutral::initCinfo(), Id::root(), 1, true));
}

Element* ElementTable::insert(std::unique_ptr<Element> e) {
  if (e->id() != nextId()) throw InternalError("element inserted out of Id order");
  if (&e->context() != context_) throw InternalError("element inserted into another simulation");
  Element* raw = e.get();
  elements_.push_back(std::move(e));
  if (Element* p = get(raw->parent())) p->addChild(raw->id());
  context_->touchTopology();
  return raw;
}

void ElementTable::erase(Id id) {
  Element* e = get(id);
  if (!e) return;
  const std::vector<Id> kids = e->children();
  for (Id c : kids) erase(c);
  if (Element* p = get(e->parent()); p && id != Id::root()) p->removeChild(id);
  elements_[id.value].reset();
  context_->touchTopology();
}

void ElementTable::clear() {
  Element* root = get(Id::root());
  const std::vector<Id> kids = root->children();
  for (Id c : kids)
    if (!get(c)->isSystem()) erase(c);
}

std::vector<Element*> ElementTable::all() const {
  std::vector<Element*> out;
  for (auto& e : elements_)
    if (e) out.push_back(e.get());
  return out;
}

}  // namespace antler
