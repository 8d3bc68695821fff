#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Compartment: an isopotential membrane compartment (MOOSE's Compartment). Each step it integrates
///   Cm dVm/dt = (Em - Vm)/Rm + inject + I + sum over neighbours (V' - Vm)/Ra + sum Gk (Ek - Vm)
/// by MOOSE's exponential Euler, with what the step received gathered into A and B:
///   A = inject + injected + Em/Rm + sum V'/Ra + sum Gk Ek,  B = 1/Rm + sum 1/Ra + sum Gk,
///   x = exp(-B dt/Cm),  Vm = Vm x + (A/B)(1 - x)
/// (1 - x is computed with expm1, so it keeps its precision when dt << Rm Cm), then sends VmOut(Vm)
/// and starts the next step's A, B and injected sum afresh. Cables are MOOSE's: the `init` phase
/// (on the tick before process: ticks 2 and 3 by default) sends axialOut(Vm) and
/// raxialOut(Ra, Vm), so neighbours couple through the Vm of the previous step; connect a
/// compartment's `raxial` to the next one's `axial` (shared fields: raxialOut -> handleRaxial,
/// axialOut -> handleAxial), and the pair couples through the Ra of the compartment on the raxial
/// side. `channel` takes handleChannel(Gk, Ek) and gives back VmOut. Im is the axial and injectMsg
/// current of the last step (MOOSE's: without inject, leak or channels).
/// reinit sets Vm = initVm, clears the sums and sends VmOut(Vm), as MOOSE does. The geometry
/// (diameter, length, coordinates) is CompartmentBase's.
/// Inputs delivered after a step's process are used by the next step.
#include "core/class_builder.hpp"
#include "models/compartment_base.hpp"
#include "msg/src_finfo.hpp"

namespace antler {

class Compartment : public CompartmentBase {
 public:
  /// Sends Vm every step (and at reinit).
  inline static SrcFinfo<double> VmOut{"VmOut", "sends Vm every step and at reinit"};
  /// One exponential Euler step (see the header comment).
  void process(const Eref& e, ProcPtr p);
  /// Vm = initVm, sent; the injected sum is cleared.
  void reinit(const Eref& e, ProcPtr p);
  /// Adds a current to the next step's input.
  void injectMsg(double current) {
    sumInject_ += current;
    Im_ += current;
  }
  /// The init phase: sends axialOut(Vm) and raxialOut(Ra, Vm) to the neighbours.
  void initProc(const Eref& e, ProcPtr p);
  void initReinit(const Eref&, ProcPtr) {}
  /// A neighbour on the axial side: its Ra and Vm.
  void handleRaxial(double Ra, double Vm) {
    A_ += Vm / Ra;
    B_ += 1.0 / Ra;
    Im_ += (Vm - Vm_) / Ra;
  }
  /// A neighbour on the raxial side: its Vm (coupled through this compartment's Ra).
  void handleAxial(double Vm) {
    A_ += Vm / Ra_;
    B_ += 1.0 / Ra_;
    Im_ += (Vm - Vm_) / Ra_;
  }
  /// A channel's conductance and reversal potential for this step.
  void handleChannel(double Gk, double Ek) {
    A_ += Gk * Ek;
    B_ += Gk;
  }
  /// The axial and injectMsg current of the last step.
  double Im() const { return lastIm_; }
  inline static SrcFinfo<double> axialOut{"axialOut", "sends Vm to the raxial neighbour (init)"};
  inline static SrcFinfo<double, double> raxialOut{"raxialOut",
                                                   "sends Ra and Vm to the axial neighbour (init)"};
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

 protected:            // (LIF builds on them)
  double Vm_ = -0.06;  // MOOSE's defaults
  double Cm_ = 1.0;
  double Em_ = -0.06;
  double Rm_ = 1.0;
  double Ra_ = 1.0;
  double inject_ = 0.0;
  double initVm_ = -0.06;
  double sumInject_ = 0.0;
  double A_ = 0.0, B_ = 1.0;  // what the step received: sums of currents and conductances
  double Im_ = 0.0, lastIm_ = 0.0;
};

}  // namespace antler
#pragma GCC visibility pop
