#pragma once
/// Typed FieldElementFinfo: a std::vector<F> member of T seen as a child FieldElement.
#include <vector>

#include "core/finfo.hpp"

namespace antler {

template <class T, class F>
class FieldElementFinfoT final : public FieldElementFinfoBase {
 public:
  FieldElementFinfoT(std::string name, std::string doc, const Cinfo* fieldCinfo,
                     std::vector<F> T::*m)
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

 private:
  std::vector<F> T::*m_;
};

}  // namespace antler
