#include "core/cinfo.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <mutex>

#include "core/error.hpp"

namespace antler {

namespace {
std::map<std::string, const Cinfo*, std::less<>>& registry() {
  static std::map<std::string, const Cinfo*, std::less<>> r;
  return r;
}

/// The file each registered class's code lives in, by class name.
std::map<std::string, std::string, std::less<>>& origins() {
  static std::map<std::string, std::string, std::less<>> r;
  return r;
}

/// A library load in progress (Cinfo::beginLoad .. endLoad). Static initializers run inside
/// dlopen on the thread that called it, one at a time, so a plain struct is enough.
struct Load {
  bool active = false;
  std::string library;
  std::vector<std::string> added;  // in registration order
  std::string clash, clashOld, clashNew;
};
Load& load() {
  static Load l;
  return l;
}

/// The file (shared library or program) that holds the code at address a, or "".
std::string file_of(const void* a) {
  Dl_info info{};
  if (a && dladdr(a, &info) && info.dli_fname && *info.dli_fname) return info.dli_fname;
  return {};
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
    case FinfoKind::blocks:
      return "blocks";
  }
  return "?";
}

std::string SharedMsgFinfo::type() const {
  std::string t = "shared(";
  for (std::size_t i = 0; i < srcs_.size(); ++i) t += (i ? ", " : "") + srcs_[i];
  t += srcs_.empty() || dests_.empty() ? "" : "; ";
  for (std::size_t i = 0; i < dests_.size(); ++i) t += (i ? ", " : "") + dests_[i];
  return t + ")";
}

Cinfo::Cinfo(std::string name, std::string doc, const Cinfo* base, std::unique_ptr<Dinfo> dinfo)
    : name_(std::move(name)), doc_(std::move(doc)), base_(base), dinfo_(std::move(dinfo)) {
  if (base_) {
    for (const Finfo* f : base_->finfos_) index(f);
    srcs_ = base_->srcs_;
    proc_ = base_->proc_;
    init_ = base_->init_;
    defaultTick_ = base_->defaultTick_;
    fieldElements_ = base_->fieldElements_;
  }
}

void Cinfo::index(const Finfo* f) {
  auto [it, added] = byName_.emplace(f->name(), f);
  if (!added) {
    // A class may replace its base class's proc or init (LIF's process is not Compartment's);
    // any other name twice is a mistake.
    const bool inherited = std::none_of(own_.begin(), own_.end(),
                                        [&](const auto& o) { return o.get() == it->second; });
    if (!inherited || dynamic_cast<const ProcFinfoBase*>(f) == nullptr)
      throw InternalError("class " + name_ + " declares field '" + f->name() + "' twice");
    std::replace(finfos_.begin(), finfos_.end(), it->second, f);
    it->second = f;
    return;
  }
  finfos_.push_back(f);
}

void Cinfo::add(std::unique_ptr<Finfo> f) {
  index(f.get());
  if (f->kind() == FinfoKind::shared)
    if (auto* p = dynamic_cast<const ProcFinfoBase*>(f.get()))
      (f->name() == "init" ? init_ : proc_) = p;
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
                       "' (classes: " + join_names(classNames(), 200) + ")",
                   ErrorDetails{{"class", std::string(name)}});
}

std::vector<std::string> Cinfo::classNames() {
  std::vector<std::string> out;
  for (auto& [n, c] : registry()) out.push_back(n);
  return out;
}

// Not inlined: the return address is in the code that registers (ClassBuilder::build or the
// class's initCinfo), which says which library the class comes from.
__attribute__((noinline)) void Cinfo::registerClass(const Cinfo* c) {
  const std::string from = file_of(__builtin_return_address(0));
  Load& l = load();
  auto [it, fresh] = registry().emplace(c->name(), c);
  if (!fresh && it->second != c) {
    if (!l.active) throw InternalError("two classes named " + c->name());
    // Inside dlopen: note the first clash and go on; endLoad rolls the load back.
    if (l.clash.empty()) {
      l.clash = c->name();
      l.clashOld = libraryOf(c->name());
      l.clashNew = from.empty() ? l.library : from;
    }
    return;
  }
  if (!fresh) return;  // the same Cinfo again
  origins()[c->name()] = from.empty() && l.active ? l.library : from;
  if (l.active) l.added.push_back(c->name());
}

std::string Cinfo::libraryOf(std::string_view name) {
  auto it = origins().find(name);
  return it == origins().end() ? std::string() : it->second;
}

void Cinfo::beginLoad(std::string library) {
  Load& l = load();
  if (l.active) throw InternalError("Cinfo::beginLoad: a library load is already in progress");
  l = Load{};
  l.active = true;
  l.library = std::move(library);
}

Cinfo::LoadResult Cinfo::endLoad(bool keep) {
  Load l = std::move(load());
  load() = Load{};
  LoadResult out;
  out.clash = l.clash;
  out.clashOldLibrary = l.clashOld;
  out.clashNewLibrary = l.clashNew;
  if (keep && l.clash.empty()) {
    out.added = std::move(l.added);
    std::sort(out.added.begin(), out.added.end());
  } else {
    // Nothing of a refused library stays registered. Its Cinfos are not freed: their code may
    // be unloaded with the library, and nothing else can reach them once they are unregistered.
    for (const std::string& n : l.added) {
      registry().erase(n);
      origins().erase(n);
    }
  }
  return out;
}

std::string FieldElementFinfoBase::type() const {
  return fieldCinfo_->name() + "[]";
}

}  // namespace antler
