#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Typed FieldElementFinfo: a std::vector<F> or EdgeArray<F> of each T object seen as a child
/// FieldElement (an EdgeArray's entries may live in the Sparse messages that fill it:
/// core/edge_array.hpp). The array is a data member, or what a member function returns (for a
/// class that keeps it out of line).
#include <type_traits>
#include <vector>

#include "core/edge_array.hpp"
#include "core/finfo.hpp"

namespace antler {

namespace detail {
/// The array of an object: through a data member or a `Array& (T::*)()` member function.
template <class T, class Array>
struct ArrayAccess {
  Array T::*member = nullptr;
  Array& (T::*fn)() = nullptr;
  Array& operator()(char* p) const {
    T& o = *reinterpret_cast<T*>(p);
    return member ? o.*member : (o.*fn)();
  }
};
}  // namespace detail

template <class T, class F, class Array = std::vector<F>>
class FieldElementFinfoT final : public FieldElementFinfoBase {
  static constexpr bool kEdge = std::is_same_v<Array, EdgeArray<F>>;

 public:
  FieldElementFinfoT(std::string name, std::string doc, const Cinfo* fieldCinfo,
                     detail::ArrayAccess<T, Array> a)
      : FieldElementFinfoBase(std::move(name), std::move(doc), fieldCinfo), a_(a) {}
  Index getNum(const char* parent) const override {
    return static_cast<Index>(a_(const_cast<char*>(parent)).size());
  }
  void setNum(char* parent, Index n) const override { a_(parent).resize(n); }
  char* lookup(char* parent, Index i) const override {
    return reinterpret_cast<char*>(&a_(parent)[i]);
  }
  std::unique_ptr<EdgeStoreBase> makeEdgeStore(std::size_t n) const override {
    if constexpr (kEdge)
      return std::make_unique<EdgeStore<F>>(n);
    else
      return nullptr;
  }
  bool hasEdgeStore() const override { return kEdge; }
  void lend(char* parent, const Index* f, const std::uint64_t* slot, std::size_t n,
            EdgeStoreBase& s) const override {
    if constexpr (kEdge) a_(parent).lend(f, slot, n, static_cast<EdgeStore<F>&>(s));
  }
  void reserve(char* const* parents, const std::size_t* sizes, std::size_t n) const override {
    if constexpr (kEdge) {
      std::vector<EdgeArray<F>*> arrays(n);
      for (std::size_t k = 0; k < n; ++k) arrays[k] = &a_(parents[k]);
      EdgeArray<F>::reserveAll(arrays.data(), sizes, n);
    }
  }
  void unlend(char* parent, const Index* f, const std::uint64_t* slot, std::size_t n,
              EdgeStoreBase& s) const override {
    if constexpr (kEdge) a_(parent).unlend(f, slot, n, static_cast<EdgeStore<F>&>(s));
  }
  bool compact(char* parent, EdgeStoreBase& s) const override {
    if constexpr (kEdge)
      return a_(parent).compact(static_cast<EdgeStore<F>&>(s));
    else
      return false;
  }
  void restore(char* parent, const Index* f, const std::uint64_t* slot, std::size_t n,
               EdgeStoreBase& s) const override {
    if constexpr (kEdge) a_(parent).restore(f, slot, n, static_cast<EdgeStore<F>&>(s));
  }

 private:
  detail::ArrayAccess<T, Array> a_;
};

}  // namespace antler
#pragma GCC visibility pop
