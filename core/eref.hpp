#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Eref: the fast in-process handle of one object (Element pointer + indices).
#include "core/element.hpp"

namespace antler {

/// One object of a local Element: what process, dest and digest functions receive.
class Eref {
 public:
  /// The field index of an Eref given to a call declared not to read it (DestPrefetch's
  /// kFieldIndex = false, core/dest_finfo.hpp): no entry has it.
  static constexpr Index kNoField = ~Index{0};
  Eref() = default;
  Eref(const Element* e, Index d, Index f = 0) : e_(const_cast<Element*>(e)), d_(d), f_(f) {}
  Element* element() const { return e_; }
  Index dataIndex() const { return d_; }
  Index fieldIndex() const { return f_; }
  Id id() const { return e_->id(); }
  ObjId objId() const { return ObjId(e_->id(), d_, f_); }
  /// The object's bytes (valid only on the node that holds it).
  char* data() const { return e_->data(d_, f_); }
  /// True if the object lives on this node.
  bool isLocal() const { return e_->isLocal(d_); }

 private:
  Element* e_ = nullptr;
  Index d_ = 0, f_ = 0;
};

}  // namespace antler
#pragma GCC visibility pop
