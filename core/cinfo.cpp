#include "core/cinfo.hpp"

#include <algorithm>
#include <mutex>

#include "core/error.hpp"

namespace antler {

namespace {
std::map<std::string, const Cinfo*, std::less<>>& registry() {
  static std::map<std::string, const Cinfo*, std::less<>> r;
  return r;
}
}  // namespace

const char* to_string(FinfoKind k) {
  switch (k) {
    case FinfoKind::value:
      return "value";
    case FinfoKind::readOnlyValue:
      return "readonly value";
    case FinfoKind::lookupValue:
      return "lookup value";
    case FinfoKind::dest:
      return "dest";
    case FinfoKind::src:
      return "src";
    case FinfoKind::shared:
      return "shared";
    case FinfoKind::fieldElement:
      return "field element";
    case FinfoKind::reduce:
      return "reduce";
  }
  return "?";
}

Cinfo::Cinfo(std::string name, std::string doc, const Cinfo* base, std::unique_ptr<Dinfo> dinfo)
    : name_(std::move(name)), doc_(std::move(doc)), base_(base), dinfo_(std::move(dinfo)) {
  if (base_) {
    for (const Finfo* f : base_->finfos_) index(f);
    srcs_ = base_->srcs_;
    proc_ = base_->proc_;
    fieldElements_ = base_->fieldElements_;
  }
}

void Cinfo::index(const Finfo* f) {
  if (!byName_.emplace(f->name(), f).second)
    throw InternalError("class " + name_ + " declares field '" + f->name() + "' twice");
  finfos_.push_back(f);
}

void Cinfo::add(std::unique_ptr<Finfo> f) {
  index(f.get());
  if (f->kind() == FinfoKind::shared)
    if (auto* p = dynamic_cast<const ProcFinfoBase*>(f.get())) proc_ = p;
  if (f->kind() == FinfoKind::fieldElement)
    fieldElements_.push_back(static_cast<const FieldElementFinfoBase*>(f.get()));
  own_.push_back(std::move(f));
}

void Cinfo::addSrc(const SrcFinfoBase& s) {
  index(&s);
  if (!s.hasBindIndex()) {
    s.setBindIndex(static_cast<unsigned>(srcs_.size()));
  } else if (s.bindIndex() != srcs_.size()) {
    throw InternalError("SrcFinfo '" + s.name() + "' added to class " + name_ +
                        " already belongs to another class at a different bind index");
  }
  srcs_.push_back(&s);
}

const Finfo* Cinfo::findFinfo(std::string_view name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? nullptr : it->second;
}

std::vector<std::string> Cinfo::fieldNames() const {
  std::vector<std::string> out;
  for (auto* f : finfos_) out.push_back(f->name());
  return out;
}

std::vector<std::string> Cinfo::fieldNames(FinfoKind kind) const {
  std::vector<std::string> out;
  for (auto* f : finfos_)
    if (f->kind() == kind) out.push_back(f->name());
  return out;
}

bool Cinfo::isA(std::string_view className) const {
  for (const Cinfo* c = this; c; c = c->base_)
    if (c->name_ == className) return true;
  return false;
}

const Cinfo* Cinfo::find(std::string_view name) {
  auto& r = registry();
  auto it = r.find(name);
  return it == r.end() ? nullptr : it->second;
}

const Cinfo* Cinfo::require(std::string_view name, std::string_view operation) {
  if (const Cinfo* c = find(name)) return c;
  throw ClassError(std::string(operation) + ": unknown class '" + std::string(name) +
                   "' (classes: " + join_names(classNames(), 200) + ")");
}

std::vector<std::string> Cinfo::classNames() {
  std::vector<std::string> out;
  for (auto& [n, c] : registry()) out.push_back(n);
  return out;
}

void Cinfo::registerClass(const Cinfo* c) {
  auto [it, fresh] = registry().emplace(c->name(), c);
  if (!fresh && it->second != c) throw InternalError("two classes named " + c->name());
}

std::string FieldElementFinfoBase::type() const {
  return fieldCinfo_->name() + "[]";
}

}  // namespace antler
