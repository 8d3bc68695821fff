#pragma once
/// Typed ProcFinfo: the `proc` shared field (process + reinit) the clock calls on a slice.
#include "core/eref.hpp"
#include "core/finfo.hpp"
#include "core/proc_info.hpp"

namespace antler {

/// process and reinit of class T, both `void (T::*)(const Eref&, ProcPtr)`.
template <class T, auto Process, auto Reinit>
class ProcFinfoT final : public ProcFinfoBase {
 public:
  using ProcFinfoBase::ProcFinfoBase;
  void process(const Element* e, Index lo, Index hi, const ProcInfo& p) const override {
    // The hot loop of the process phase: a contiguous slice, no lookups, one direct call each.
    T* base = reinterpret_cast<T*>(static_cast<const DataElement*>(e)->localData(lo));
    for (Index i = lo; i < hi; ++i) (base[i - lo].*Process)(Eref(e, i), &p);
  }
  void reinit(const Element* e, Index lo, Index hi, const ProcInfo& p) const override {
    T* base = reinterpret_cast<T*>(static_cast<const DataElement*>(e)->localData(lo));
    for (Index i = lo; i < hi; ++i) (base[i - lo].*Reinit)(Eref(e, i), &p);
  }
};

}  // namespace antler
