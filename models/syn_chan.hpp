#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// SynChan: a synaptic channel with a dual-exponential conductance (MOOSE's SynChan,
/// biophysics/SynChan.cpp; the fields it shares with other channels are ChanBase's). A
/// SimpleSynHandler's activationOut drives `activation`; the channel sits on a compartment through
/// the `channel` shared field (channelOut(Gk, Ek) to the compartment's handleChannel, the
/// compartment's VmOut to `Vm`). Each step, with the activation A summed since the last step:
///   X = A xconst1 + X xconst2,  Y = X yconst1 + Y yconst2,  Gk = Y norm modulation,
///   Ik = (Ek - Vm) Gk,  then channelOut(Gk, Ek) and IkOut(Ik),
/// where xconst1 = tau1 (1 - exp(-dt/tau1)), xconst2 = exp(-dt/tau1), the same for y with tau2
/// (y: 1 and 0 when tau2 is 0), and norm scales the peak of a unit response to Gbar:
/// Gbar e / tau1 when tau1 = tau2, Gbar (tau1 - tau2) / (tau1 tau2 (exp(-tp/tau1) -
/// exp(-tp/tau2))) with tp = tau1 tau2 ln(tau1/tau2) / (tau1 - tau2) otherwise, Gbar when tau2 is
/// 0 (tau1 and tau2 compared as MOOSE's doubleEq does: relative 1e-6). reinit takes the tick's dt,
/// zeroes A, X, Y, Gk and Ik and sends channelOut and IkOut. MOOSE's defaults: tau1 = tau2 = 1 ms,
/// Gbar 0, Ek 0, modulation 1; before the first reinit the constants use dt = 25 us, as MOOSE's.
#include "core/class_builder.hpp"
#include "models/chan_base.hpp"

namespace antler {

class SynChan : public ChanBase {
 public:
  void process(const Eref& e, ProcPtr p);
  void reinit(const Eref& e, ProcPtr p);
  /// Adds to the activation of the next step (from a SimpleSynHandler's activationOut).
  void activation(double v) { activation_ += v; }
  static const Cinfo* initCinfo();

 private:
  double tau1_ = 1e-3, tau2_ = 1e-3;
  bool normalizeWeights_ = false;
  double xconst1_ = 0.0, yconst1_ = 1.0, xconst2_ = 1.0, yconst2_ = 0.0, norm_ = 1.0;
  double activation_ = 0.0, X_ = 0.0, Y_ = 0.0;
  double dt_ = 25e-6;

  double Gbar() const { return Gbar_; }
  void setGbar(double g);
  double tau1() const { return tau1_; }
  void setTau1(double t);
  double tau2() const { return tau2_; }
  void setTau2(double t);
  void constants();
  void normalize();
};

}  // namespace antler
#pragma GCC visibility pop
