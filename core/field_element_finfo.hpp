#pragma once
/// Typed FieldElementFinfo: a std::vector<F> or EdgeArray<F> member of T seen as a child
/// FieldElement (an EdgeArray's entries may live in the Sparse messages that fill it:
/// core/edge_array.hpp).
#include <vector>

#include "core/edge_array.hpp"
#include "core/finfo.hpp"

namespace antler {

template <class T, class F, class Array = std::vector<F>>
class FieldElementFinfoT final : public FieldElementFinfoBase {
 public:
  FieldElementFinfoT(std::string name, std::string doc, const Cinfo* fieldCinfo, Array T::*m)
      : FieldElementFinfoBase(std::move(name), std::move(doc), fieldCinfo), m_(m) {}
  Index getNum(const char* parent) const override {
    return static_cast<Index>((reinterpret_cast<const T*>(parent)->*m_).size());
  }
  void setNum(char* parent, Index n) const override {
    (reinterpret_cast<T*>(parent)->*m_).resize(n);
  }
  char* lookup(char* parent, Index i) const override {
    return reinterpret_cast<char*>(&(reinterpret_cast<T*>(parent)->*m_)[i]);
  }
  std::unique_ptr<EdgeStoreBase> makeEdgeStore(std::size_t n) const override {
    if constexpr (std::is_same_v<Array, EdgeArray<F>>)
      return std::make_unique<EdgeStore<F>>(n);
    else
      return nullptr;
  }
  bool hasEdgeStore() const override { return std::is_same_v<Array, EdgeArray<F>>; }
  void lend(char* parent, const Index* f, const std::uint64_t* slot, std::size_t n,
            EdgeStoreBase& s) const override {
    if constexpr (std::is_same_v<Array, EdgeArray<F>>)
      (reinterpret_cast<T*>(parent)->*m_).lend(f, slot, n, static_cast<EdgeStore<F>&>(s));
  }
  void unlend(char* parent, const Index* f, const std::uint64_t* slot, std::size_t n,
              EdgeStoreBase& s) const override {
    if constexpr (std::is_same_v<Array, EdgeArray<F>>)
      (reinterpret_cast<T*>(parent)->*m_).unlend(f, slot, n, static_cast<EdgeStore<F>&>(s));
  }

 private:
  Array T::*m_;
};

}  // namespace antler
