#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// LIF: MOOSE's leaky integrate-and-fire neuron (intfire/LIF.cpp), a Compartment that fires. It
/// has every Compartment field (Vm, Cm, Rm, Em, inject, initVm, Ra, the init phase, cables,
/// injectMsg) and its membrane step, and each step, with t the end of the step:
///   if t < lastEventTime + refractoryPeriod:  Vm = vReset, the step's inputs are dropped (the
///       activation received meanwhile waits: it is added once the period is over);
///   else Vm += activation x dt (a SimpleSynHandler's weight w arrives as w / dt: Vm += w), and
///       if Vm > thresh: Vm = vReset, lastEventTime = t, spikeOut(t), hasFired;
///       otherwise the Compartment's exponential Euler step (the threshold is tested before it,
///       so a Vm that inject pushes over thresh fires in the next step).
/// VmOut(Vm) is sent in every case. reinit: the Compartment's, activation 0, lastEventTime =
/// -refractoryPeriod. Defaults: thresh 0, vReset 0, refractoryPeriod 0 (MOOSE's); default tick 2
/// (init on 1).
#include "models/compartment.hpp"

namespace antler {

class LIF : public Compartment {
 public:
  inline static SrcFinfo<double> spikeOut{"spikeOut", "sends the spike time when the neuron fires"};
  void process(const Eref& e, ProcPtr p);
  void reinit(const Eref& e, ProcPtr p);
  /// The Compartment's init phase, as LIF's own (so the clock's loop strides over LIF objects).
  void initProc(const Eref& e, ProcPtr p) { Compartment::initProc(e, p); }
  void initReinit(const Eref& e, ProcPtr p) { Compartment::initReinit(e, p); }
  /// Adds to the activation the next step integrates (x dt).
  void activation(double v) { activation_ += v; }
  static const Cinfo* initCinfo();

 private:
  double thresh_ = 0.0, vReset_ = 0.0, refractoryPeriod_ = 0.0;
  double lastEvent_ = 0.0, activation_ = 0.0;
  bool fired_ = false;
};

}  // namespace antler
#pragma GCC visibility pop
