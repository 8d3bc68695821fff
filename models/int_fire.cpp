#include "models/int_fire.hpp"

#include <cmath>
#include <string>

#include "models/step_time.hpp"

namespace antler {

void IntFire::process(const Eref& e, ProcPtr p) {
  const double slack = detail::step_slack(p->dt);
  const double due = p->currTime + slack;
  if (nextDue_ <= due) {
    while (!pending_.empty() && pending_.top().first <= due) {
      Vm_ += pending_.top().second;
      pending_.pop();
    }
    nextDue_ = pending_.empty() ? std::numeric_limits<double>::infinity() : pending_.top().first;
  }
  if (Vm_ > thresh_ && p->currTime - lastSpike_ + slack >= refractoryPeriod_) {
    spikeOut.send(e, p->currTime);
    Vm_ = vReset_;
    lastSpike_ = p->currTime;
    spiked_ = 1.0;
  } else {
    Vm_ *= 1.0 - p->dt / tau_;
    spiked_ = 0.0;
  }
}

void IntFire::reinit(const Eref&, ProcPtr) {
  Vm_ = initVm_;
  pending_ = {};
  nextDue_ = std::numeric_limits<double>::infinity();
  lastSpike_ = -std::numeric_limits<double>::infinity();
  spiked_ = 0.0;
}

void IntFire::setTau(double tau) {
  if (!(tau > 0) || !std::isfinite(tau))
    throw ValueError("IntFire.tau must be a positive finite number, got " + std::to_string(tau));
  tau_ = tau;
}

const Cinfo* IntFire::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<IntFire>("IntFire", "leaky integrate-and-fire neuron with a synapse array")
          .value("Vm", &IntFire::Vm_, "membrane potential")
          .value("thresh", &IntFire::thresh_, "firing threshold: fires when Vm > thresh")
          .value("tau", &IntFire::tau, &IntFire::setTau, "membrane time constant (> 0)")
          .value("refractoryPeriod", &IntFire::refractoryPeriod_, "minimum time between two spikes")
          .value("vReset", &IntFire::vReset_, "Vm after a spike (default 0)")
          .value("initVm", &IntFire::initVm_, "Vm set by reinit (default 0)")
          .readOnly("lastSpike", &IntFire::lastSpike_,
                    "time of the last spike (-inf before the first)")
          .readOnly("spiked", &IntFire::spiked_, "1 if the neuron fired in the last step, else 0")
          .readOnly("numPending", &IntFire::numPending, "synaptic events not yet added to Vm")
          .fieldElement("synapse", &IntFire::synapses_, "the synapses (entries: Synapse)",
                        "numSynapses")
          .src(IntFire::spikeOut)
          .proc<&IntFire::process, &IntFire::reinit>()
          .build();
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* registered = IntFire::initCinfo();
}

}  // namespace antler
