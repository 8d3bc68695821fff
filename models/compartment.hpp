#pragma once
/// Compartment: a passive isopotential membrane compartment (MOOSE's Compartment, without the
/// axial and channel messages). Each step it integrates Cm dVm/dt = (Em - Vm)/Rm + I, with
/// I = inject + the sum of this step's injectMsg inputs, by MOOSE's exponential Euler:
///   A = inject + injected + Em/Rm,  B = 1/Rm,  x = exp(-B dt/Cm),  Vm = Vm x + (A/B)(1 - x)
/// (1 - x is computed with expm1, so it keeps its precision when dt << Rm Cm), then clears the
/// injected sum and sends VmOut(Vm). The update is exact for an input constant over the step.
/// reinit sets Vm = initVm, clears the injected sum and sends VmOut(Vm), as MOOSE does.
/// injectMsg inputs delivered after a step's process are used by the next step.
#include "core/class_builder.hpp"
#include "msg/src_finfo.hpp"

namespace antler {

class Compartment {
 public:
  /// Sends Vm every step (and at reinit).
  inline static SrcFinfo<double> VmOut{"VmOut", "sends Vm every step and at reinit"};
  /// One exponential Euler step (see the header comment).
  void process(const Eref& e, ProcPtr p);
  /// Vm = initVm, sent; the injected sum is cleared.
  void reinit(const Eref& e, ProcPtr p);
  /// Adds a current to the next step's input.
  void injectMsg(double current) { sumInject_ += current; }
  /// Membrane capacitance.
  double Cm() const { return Cm_; }
  /// Sets Cm (positive and finite: ValueError otherwise).
  void setCm(double v);
  /// Membrane resistance.
  double Rm() const { return Rm_; }
  /// Sets Rm (positive and finite: ValueError otherwise).
  void setRm(double v);
  /// Axial resistance.
  double Ra() const { return Ra_; }
  /// Sets Ra (positive and finite: ValueError otherwise).
  void setRa(double v);
  /// The class info of Compartment (registered at load time).
  static const Cinfo* initCinfo();

 private:
  double Vm_ = -0.06;  // MOOSE's defaults
  double Cm_ = 1.0;
  double Em_ = -0.06;
  double Rm_ = 1.0;
  double Ra_ = 1.0;
  double inject_ = 0.0;
  double initVm_ = -0.06;
  double sumInject_ = 0.0;
};

}  // namespace antler
