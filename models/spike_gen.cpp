#include "models/spike_gen.hpp"

namespace antler {

void SpikeGen::process(const Eref& e, ProcPtr p) {
  const double t = p->currTime;
  if (V_ > threshold_) {
    // MOOSE's half-step tolerance: a spike is allowed in the step whose end is within dt/2 of the
    // end of the refractory period.
    if (t + 0.5 * p->dt >= lastEvent_ + refractT_ && !(edgeTriggered_ && fired_)) {
      spikeOut.send(e, t);
      lastEvent_ = t;
      fired_ = true;
    }
  } else {
    fired_ = false;
  }
}

void SpikeGen::reinit(const Eref&, ProcPtr) {
  lastEvent_ = -refractT_;
  fired_ = false;
}

const Cinfo* SpikeGen::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<SpikeGen>("SpikeGen", "detects threshold crossings of a voltage")
          .value("threshold", &SpikeGen::threshold_, "spikes when V > threshold")
          .value("refractT", &SpikeGen::refractT_, "minimum time between two spikes")
          .value("edgeTriggered", &SpikeGen::edgeTriggered_,
                 "if true, fire only once per supra-threshold excursion")
          .readOnly("hasFired", &SpikeGen::fired_,
                    "true while V stays above threshold after a spike")
          .readOnly("lastEvent", &SpikeGen::lastEvent_, "time of the last spike")
          .dest<&SpikeGen::handleVm>("Vm", "sets the input voltage")
          .src(SpikeGen::spikeOut)
          .proc<&SpikeGen::process, &SpikeGen::reinit>()
          .defaultTick(5)  // MOOSE's default tick for SpikeGen
          .build();
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* registered = SpikeGen::initCinfo();
}

}  // namespace antler
