#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// ReduceMsg: connects a ReduceFinfo of one requesting object to a 'get' field of every entry of
/// another Element (e.g. Stats "reduce" -> IntFire "getVm"), or of one object (e.g. a Table's
/// "requestOut" -> one compartment's "getVm"). It owns the reduction job that runs each time the
/// requester sends.
#include <memory>
#include <string_view>

#include "core/value_finfo.hpp"
#include "msg/msg.hpp"
#include "reduce/reduce_base.hpp"

namespace antler {

class ReduceContext;  // reduce/context.hpp

class ReduceMsg;

/// The type-erased part of ReduceFinfo<T, F, R>.
class ReduceFinfoBase : public SrcFinfoBase {
 public:
  ReduceFinfoBase(std::string name, std::string doc)
      : SrcFinfoBase(std::move(name), std::move(doc), FinfoKind::reduce) {}
  const std::vector<const std::type_info*>& argTypes() const override {
    static const std::vector<const std::type_info*> none;
    return none;
  }
  std::ptrdiff_t fixedArgBytes() const override { return 0; }
  /// The type the reduction folds (F).
  virtual const std::type_info& reducedType() const = 0;
  /// The reduce class's name, for introspection.
  virtual std::string reduceClassName() const = 0;
  std::string type() const override {
    return type_name(reducedType()) + " -> " + reduceClassName();
  }
  /// Makes the job for msg; TypeError if the target field's type cannot be read as F.
  virtual std::unique_ptr<ReduceBase> makeJob(const ReduceMsg& msg) const = 0;
};

/// A message from one requesting object to every entry of a target Element's value field.
class ReduceMsg final : public Msg {
 public:
  ReduceMsg(std::uint32_t id, Element* src, Index requester, Element* dest,
            const ReduceFinfoBase* rf, const DestFinfoBase* getDest)
      : Msg(id, MsgKind::reduce, src, dest, rf, getDest), requester_(requester) {}
  /// Data index of the requesting object.
  Index requester() const { return requester_; }
  /// The value field read on the targets.
  const ValueFinfoBase* getter() const {
    return static_cast<const DestFinfoBase*>(destFinfo())->getterOf();
  }
  const ReduceFinfoBase* reduceFinfo() const {
    return static_cast<const ReduceFinfoBase*>(srcFinfo());
  }
  /// True if the message reads one object (a Single message from a reduce field, e.g. a Table).
  bool isSingle() const { return single_; }
  /// The one object read when isSingle().
  Target singleTarget() const { return target_; }
  void setSingleTarget(Target t) {
    single_ = true;
    target_ = t;
  }
  /// Its job leaves its simulation's reduce queue with it.
  ~ReduceMsg() override;
  /// The reduction this message runs.
  ReduceBase* job() const { return job_.get(); }
  void setJob(std::unique_ptr<ReduceBase> j) { job_ = std::move(j); }

 private:
  Index requester_;
  bool single_ = false;
  Target target_;
  std::unique_ptr<ReduceBase> job_;
};

/// Checks and creates a Reduce message from src.srcField (a ReduceFinfo) to dest.destField (a
/// 'getX' function), over every entry of dest's Element, or over the one object dest when
/// `single`: errors name the fields that would be valid; nothing changes on error.
Msg* reduce_connect(ReduceContext& sim, const ObjId& src, std::string_view srcField,
                    const ObjId& dest, std::string_view destField, bool single = false);

}  // namespace antler
#pragma GCC visibility pop
