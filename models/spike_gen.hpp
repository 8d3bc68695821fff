#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// SpikeGen: turns a voltage into spike events (MOOSE's SpikeGen). Its input V is set through the
/// dest `Vm` (connect a Compartment's VmOut to it). Each step, with t the time at the end of the
/// step, as in MOOSE:
///   if V > threshold:  if t + dt/2 >= lastEvent + refractT and not (edgeTriggered and hasFired):
///                        send spikeOut(t), lastEvent = t, hasFired = true
///   else:              hasFired = false
/// So an edge-triggered SpikeGen fires once per supra-threshold excursion (on the first step of it
/// that is out of the refractory period); a level-triggered one fires every refractT while V stays
/// above threshold. reinit sets lastEvent = -refractT (the first spike is allowed at once) and
/// hasFired = false; V keeps its value until a message sets it.
#include "core/class_builder.hpp"
#include "msg/src_finfo.hpp"

namespace antler {

class SpikeGen {
 public:
  /// Sends the spike time.
  inline static SrcFinfo<double> spikeOut{"spikeOut", "sends the spike time"};
  /// Fires if V is above threshold and the refractory period is over (see the header comment).
  void process(const Eref& e, ProcPtr p);
  /// lastEvent = -refractT, hasFired = false.
  void reinit(const Eref& e, ProcPtr p);
  /// Sets the input voltage V (the dest `Vm`).
  void handleVm(double v) { V_ = v; }
  /// The class info of SpikeGen (registered at load time).
  static const Cinfo* initCinfo();

 private:
  double threshold_ = 0.0;
  double refractT_ = 0.0;
  double lastEvent_ = 0.0;
  double V_ = 0.0;
  bool fired_ = false;
  bool edgeTriggered_ = true;  // MOOSE's default
};

}  // namespace antler
#pragma GCC visibility pop
