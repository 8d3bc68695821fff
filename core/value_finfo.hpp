#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Typed ValueFinfo / ReadOnlyValueFinfo / LookupValueFinfo. Made by ClassBuilder.
#include <type_traits>

#include "core/buffer.hpp"
#include "core/eref.hpp"
#include "core/finfo.hpp"

namespace antler {

/// A value field whose C++ type is F: what the reduce path reads through.
template <class F>
class TypedValueFinfo : public ValueFinfoBase {
 public:
  using ValueFinfoBase::ValueFinfoBase;
  const std::type_info& valueType() const final { return typeid(F); }
  void skip(Reader& r) const final { (void)r.get<F>(); }
  /// The value of the object at `obj` (local pointer).
  virtual F read(const Element* e, Index d, Index f) const = 0;
  /// Sets the value of the local object (d, f) of e.
  virtual void write(const Element* e, Index d, Index f, const F& v) const = 0;
  /// The values of local data entries lo .. lo + n - 1 of a DataElement e, into out: one virtual
  /// call per block rather than per object (what a Reduce message's fold reads through).
  virtual void readBlock(const Element* e, Index lo, Index n, F* out) const {
    for (Index i = 0; i < n; ++i) out[i] = read(e, lo + i, 0);
  }
};

namespace detail {
/// Calls a getter that takes (const T&) or (const Eref&, const T&) on obj, the object (d, f) of e.
template <class Get, class T>
decltype(auto) call_get_on(const Get& g, const Element* e, Index d, Index f, const T& obj) {
  if constexpr (std::is_invocable_v<const Get&, const Eref&, const T&>)
    return g(Eref(e, d, f), obj);
  else
    return g(obj);
}
template <class Get, class T>
decltype(auto) call_get(const Get& g, const Element* e, Index d, Index f) {
  return call_get_on<Get, T>(g, e, d, f, *reinterpret_cast<const T*>(e->data(d, f)));
}
template <class Set, class T, class F>
void call_set(const Set& s, const Element* e, Index d, Index f, const F& v) {
  T& obj = *reinterpret_cast<T*>(e->data(d, f));
  if constexpr (std::is_invocable_v<const Set&, const Eref&, T&, const F&>)
    s(Eref(e, d, f), obj, v);
  else
    s(obj, v);
}
}  // namespace detail

/// A value field of class T with type F read by Get and (unless Set is nullptr_t) written by Set.
/// Member is the data member when the field is a plain member (for strided reads), else nullptr.
template <class T, class F, class Get, class Set>
class ValueFinfoT final : public TypedValueFinfo<F> {
 public:
  static constexpr bool kReadOnly = std::is_same_v<Set, std::nullptr_t>;
  ValueFinfoT(std::string name, std::string doc, Get g, Set s, F T::*member)
      : TypedValueFinfo<F>(std::move(name), std::move(doc),
                           kReadOnly ? FinfoKind::readOnlyValue : FinfoKind::value),
        get_(std::move(g)),
        set_(std::move(s)),
        member_(member) {}
  F read(const Element* e, Index d, Index f) const override {
    return detail::call_get<Get, T>(get_, e, d, f);
  }
  void readBlock(const Element* e, Index lo, Index n, F* out) const override {
    if (e->isField()) return TypedValueFinfo<F>::readBlock(e, lo, n, out);
    const T* base = reinterpret_cast<const T*>(static_cast<const DataElement*>(e)->localData(lo));
    for (Index i = 0; i < n; ++i) out[i] = detail::call_get_on<Get, T>(get_, e, lo + i, 0, base[i]);
  }
  void get(const Element* e, Index d, Index f, Writer& w) const override {
    w.put<F>(read(e, d, f));
  }
  void write(const Element* e, Index d, Index f, const F& v) const override {
    if constexpr (kReadOnly) {
      (void)e, (void)d, (void)f, (void)v;
      throw FieldError("set: field '" + this->name() + "' is read-only");
    } else {
      detail::call_set<Set, T, F>(set_, e, d, f, v);
    }
  }
  void set(const Element* e, Index d, Index f, Reader& r) const override {
    if constexpr (kReadOnly) throw FieldError("set: field '" + this->name() + "' is read-only");
    write(e, d, f, r.get<F>());
  }
  void getRange(const Element* e, Index lo, Index hi, Writer& w) const override {
    if constexpr (std::is_trivially_copyable_v<F>) {
      if (!e->isField() && member_ && lo < hi) {
        const T* base =
            reinterpret_cast<const T*>(static_cast<const DataElement*>(e)->localData(lo));
        char* out = w.buffer().grow(static_cast<std::size_t>(hi - lo) * sizeof(F));
        for (Index i = 0; i < hi - lo; ++i)
          std::memcpy(out + i * sizeof(F), &(base[i].*member_), sizeof(F));
        return;
      }
    }
    for (Index d = lo; d < hi; ++d) {
      const Index nf = e->isField() ? e->numField(d) : 1;
      for (Index f = 0; f < nf; ++f) get(e, d, f, w);
    }
  }
  bool assignsOnly() const override { return member_ != nullptr && !kReadOnly; }
  void writeRange(const Element* e, Index lo, Index hi, Reader& r, ByteBuffer* undo,
                  std::uint64_t& written) const override {
    if constexpr (!kReadOnly && !std::is_invocable_v<const Set&, const Eref&, T&, const F&>) {
      if (!e->isField() && lo < hi) {
        T* base = reinterpret_cast<T*>(static_cast<const DataElement*>(e)->localData(lo));
        for (Index i = 0; i < hi - lo; ++i) {
          if (undo) Writer(*undo).put<F>(get_(base[i]));
          set_(base[i], r.get<F>());
          ++written;
        }
        return;
      }
    }
    for (Index d = lo; d < hi; ++d) {
      if (undo) {
        Writer w(*undo);
        this->get(e, d, 0, w);
      }
      this->set(e, d, 0, r);
      ++written;
    }
  }
  void validate(Reader& r, std::uint64_t n) const override {
    if constexpr (!kReadOnly && !std::is_invocable_v<const Set&, const Eref&, T&, const F&>) {
      if (!assignsOnly()) {
        T scratch{};
        for (std::uint64_t k = 0; k < n; ++k) set_(scratch, r.get<F>());
        return;
      }
    }
    for (std::uint64_t k = 0; k < n; ++k) (void)r.get<F>();
  }
  bool memberOffset(const char* sample, std::ptrdiff_t* offset) const override {
    if (!member_) return false;
    const T* obj = reinterpret_cast<const T*>(sample);
    *offset = reinterpret_cast<const char*>(&(obj->*member_)) - sample;
    return true;
  }

 private:
  Get get_;
  Set set_;
  F T::*member_;
};

/// A lookup field of class T: value F read and written with a key K.
template <class T, class K, class F, class Get, class Set>
class LookupValueFinfoT final : public LookupValueFinfoBase {
 public:
  LookupValueFinfoT(std::string name, std::string doc, Get g, Set s)
      : LookupValueFinfoBase(std::move(name), std::move(doc)),
        get_(std::move(g)),
        set_(std::move(s)) {}
  const std::type_info& keyType() const override { return typeid(K); }
  const std::type_info& valueType() const override { return typeid(F); }
  bool hasSetter() const override { return !std::is_same_v<Set, std::nullptr_t>; }
  void get(const Element* e, Index d, Index f, Reader& key, Writer& w) const override {
    const K k = key.get<K>();
    const T& obj = *reinterpret_cast<const T*>(e->data(d, f));
    w.put<F>(get_(obj, k));
  }
  void set(const Element* e, Index d, Index f, Reader& key, Reader& value) const override {
    if constexpr (std::is_same_v<Set, std::nullptr_t>) {
      throw FieldError("set: lookup field '" + name() + "' is read-only");
    } else {
      const K k = key.get<K>();
      const F v = value.get<F>();
      T& obj = *reinterpret_cast<T*>(e->data(d, f));
      set_(obj, k, v);
    }
  }

 private:
  Get get_;
  Set set_;
};

}  // namespace antler
#pragma GCC visibility pop
