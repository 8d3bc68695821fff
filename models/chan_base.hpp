#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// ChanBase: what every channel class shares (MOOSE's ChanBase and ChanCommon): Ek, Gk, Ik,
/// modulation and the compartment's Vm, the `channel` shared field (channelOut(Gk, Ek) to a
/// compartment's handleChannel, the compartment's VmOut to `Vm`) and IkOut. Each channel class
/// adds Gbar (its setter is the class's own) and process/reinit, which end with send(): Ik =
/// (Ek - Vm) Gk, then channelOut(Gk, Ek) and IkOut(Ik). SynChan and Leakage derive from it, so
/// wildcards with [ISA=ChanBase] find them, as in MOOSE.
#include "core/class_builder.hpp"
#include "msg/src_finfo.hpp"

namespace antler {

class ChanBase {
 public:
  inline static SrcFinfo<double, double> channelOut{"channelOut",
                                                    "sends Gk and Ek to the compartment"};
  inline static SrcFinfo<double> IkOut{"IkOut", "sends the channel current Ik every step"};
  /// The compartment's Vm (the channel field's second half).
  void handleVm(double Vm) { Vm_ = Vm; }
  static const Cinfo* initCinfo();

 protected:
  double Gbar_ = 0.0, Ek_ = 0.0, Gk_ = 0.0, Ik_ = 0.0, modulation_ = 1.0, Vm_ = 0.0;  // MOOSE's
  /// Ik = (Ek - Vm) Gk, then channelOut(Gk, Ek) and IkOut(Ik).
  void send(const Eref& e);
};

/// Leakage: a channel of constant conductance, Gk = Gbar modulation (MOOSE's Leakage).
class Leakage : public ChanBase {
 public:
  void process(const Eref& e, ProcPtr) {
    Gk_ = Gbar_ * modulation_;
    send(e);
  }
  void reinit(const Eref& e, ProcPtr p) { process(e, p); }
  static const Cinfo* initCinfo();
};

}  // namespace antler
#pragma GCC visibility pop
