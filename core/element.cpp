#include "core/element.hpp"

#include <algorithm>

namespace antler {

NodeLayout& node_layout() {
  static NodeLayout l;
  return l;
}

Element* Id::element() const {
  return ElementTable::instance().get(*this);
}

std::string Id::path() const {
  const Element* e = element();
  return e ? e->path() : "/<deleted:" + std::to_string(value) + ">";
}

std::string ObjId::path() const {
  const Element* e = element();
  if (!e) return id.path();
  if (e->isField()) {
    const Element* p = e->parent().element();
    return p->path() + "[" + std::to_string(dataIndex) + "]/" + e->name() + "[" +
           std::to_string(fieldIndex) + "]";
  }
  if (id == Id::root()) return "/";
  return e->path() + "[" + std::to_string(dataIndex) + "]";
}

Element::Element(Id id, std::string name, const Cinfo* cinfo, Id parent)
    : id_(id), name_(std::move(name)), cinfo_(cinfo), parent_(parent) {}

Element::~Element() = default;

std::string Element::path() const {
  if (id_ == Id::root()) return "/";
  const Element* p = parent_.element();
  const std::string pp = p ? p->path() : "";
  return (pp == "/" ? "" : pp) + "/" + name_;
}

Element* Element::child(const std::string& name) const {
  for (Id c : children_) {
    Element* e = c.element();
    if (e && e->name() == name) return e;
  }
  return nullptr;
}

int Element::owner(Index d) const {
  if (isGlobal()) return node_layout().node;
  return block_owner(numData_, node_layout().numNodes, d);
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

DataElement::DataElement(Id id, std::string name, const Cinfo* cinfo, Id parent, Index n,
                         bool global)
    : Element(id, std::move(name), cinfo, parent), global_(global), size_(cinfo->dinfo().size()) {
  const auto& l = node_layout();
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
    : Element(id, std::move(name), cinfo, parent->id()), parentData_(parent), finfo_(finfo) {
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

ElementTable& ElementTable::instance() {
  static ElementTable t;
  return t;
}

ElementTable::ElementTable() {
  elements_.push_back(
      std::make_unique<DataElement>(Id::root(), "root", Neutral::initCinfo(), Id::root(), 1, true));
}

Element* ElementTable::insert(std::unique_ptr<Element> e) {
  if (e->id() != nextId()) throw InternalError("element inserted out of Id order");
  Element* raw = e.get();
  elements_.push_back(std::move(e));
  if (Element* p = raw->parent().element()) p->addChild(raw->id());
  return raw;
}

void ElementTable::erase(Id id) {
  Element* e = get(id);
  if (!e) return;
  const std::vector<Id> kids = e->children();
  for (Id c : kids) erase(c);
  if (Element* p = e->parent().element(); p && id != Id::root()) p->removeChild(id);
  elements_[id.value].reset();
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
