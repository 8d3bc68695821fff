#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Typed ProcFinfo: the `proc` shared field (process + reinit) the clock calls on a slice.
#include "core/element.hpp"
#include "core/eref.hpp"
#include "core/finfo.hpp"
#include "core/proc_info.hpp"

namespace antler {

/// process and reinit of class T, both `void (T::*)(const Eref&, ProcPtr)`. Optionally, T may
/// define
///   `static void prepare(const DataElement* e, const ProcInfo& p, bool reinit)`: run by the
///       clock on one thread before each run (ProcFinfoBase::prepare), e.g. to set up the
///       Element's ElementState;
///   `static void processBlock(const DataElement* e, Index lo, T* objs, Index n, ProcPtr p)`: the
///       process of objects lo .. lo + n - 1 (objs[0] is lo) in one call, in index order, when a
///       class does something once per slice rather than per object (it must do what n calls
///       of Process would).
template <class T, auto Process, auto Reinit, bool kHooks = true>
class ProcFinfoT final : public ProcFinfoBase {
 public:
  using ProcFinfoBase::ProcFinfoBase;
  void process(const Element* e, Index lo, Index hi, const ProcInfo& p) const override {
    // The hot loop of the process phase: a contiguous slice, no lookups, one direct call each.
    auto* de = static_cast<const DataElement*>(e);
    T* base = reinterpret_cast<T*>(de->localData(lo));
    if constexpr (kHooks && requires { &T::processBlock; }) {
      T::processBlock(de, lo, base, hi - lo, &p);
    } else {
      for (Index i = lo; i < hi; ++i) (base[i - lo].*Process)(Eref(e, i), &p);
    }
  }
  void reinit(const Element* e, Index lo, Index hi, const ProcInfo& p) const override {
    T* base = reinterpret_cast<T*>(static_cast<const DataElement*>(e)->localData(lo));
    for (Index i = lo; i < hi; ++i) (base[i - lo].*Reinit)(Eref(e, i), &p);
  }
  void prepare(const Element* e, const ProcInfo& p, bool reinit) const override {
    if constexpr (kHooks && requires { &T::prepare; })
      T::prepare(static_cast<const DataElement*>(e), p, reinit);
  }
};

}  // namespace antler
#pragma GCC visibility pop
