#include "models/lif.hpp"

namespace antler {

void LIF::process(const Eref& e, ProcPtr p) {
  const double t = p->currTime;
  fired_ = false;
  if (t < lastEvent_ + refractoryPeriod_) {
    Vm_ = vReset_;
    A_ = 0.0;
    B_ = 1.0 / Rm_;
    sumInject_ = 0.0;
    VmOut.send(e, Vm_);
    return;
  }
  Vm_ += activation_ * p->dt;
  activation_ = 0.0;
  if (Vm_ > thresh_) {
    Vm_ = vReset_;
    lastEvent_ = t;
    fired_ = true;
    spikeOut.send(e, t);
    VmOut.send(e, Vm_);
    return;
  }
  Compartment::process(e, p);
}

void LIF::reinit(const Eref& e, ProcPtr p) {
  activation_ = 0.0;
  fired_ = false;
  lastEvent_ = -refractoryPeriod_;
  Compartment::reinit(e, p);
}

const Cinfo* LIF::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<LIF>("LIF",
                        "leaky integrate-and-fire neuron: a Compartment that fires (MOOSE's)",
                        Compartment::initCinfo())
          .value("thresh", &LIF::thresh_, "fires when Vm > thresh")
          .value("vReset", &LIF::vReset_, "Vm after a spike and during the refractory period")
          .value("refractoryPeriod", &LIF::refractoryPeriod_, "time after a spike without input")
          .readOnly("hasFired", &LIF::fired_, "true if it fired in the last step")
          .readOnly("lastEventTime", &LIF::lastEvent_, "time of the last spike")
          .dest<&LIF::activation>("activation",
                                  "added x dt to Vm in the next step (a SimpleSynHandler's output)")
          .src(LIF::spikeOut)
          .proc<&LIF::process, &LIF::reinit>()
          .init<&LIF::initProc, &LIF::initReinit>()
          .defaultTick(2)  // MOOSE's default tick for LIF (init on 1)
          .build();
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* registered = LIF::initCinfo();
}

}  // namespace antler
