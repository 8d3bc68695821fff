#include "models/chan_base.hpp"

#include <cmath>
#include <string>

namespace antler {

void ChanBase::send(const Eref& e) {
  Ik_ = (Ek_ - Vm_) * Gk_;
  channelOut.send(e, Gk_, Ek_);
  IkOut.send(e, Ik_);
}

const Cinfo* ChanBase::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<ChanBase>("ChanBase", "what every channel class shares (MOOSE's ChanBase)")
          .value("Ek", &ChanBase::Ek_, "reversal potential")
          .value("Gk", &ChanBase::Gk_, "conductance (process sets it each step)")
          .readOnly("Ik", &ChanBase::Ik_, "current, (Ek - Vm) Gk")
          .value("modulation", &ChanBase::modulation_, "scale factor of the conductance")
          .dest<&ChanBase::handleVm>("Vm", "the compartment's Vm")
          .src(ChanBase::channelOut)
          .src(ChanBase::IkOut)
          .shared("channel", {"channelOut"}, {"Vm"}, "to a compartment's channel field")
          .build();
  return c;
}

const Cinfo* Leakage::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<Leakage>("Leakage", "a channel of constant conductance Gbar (MOOSE's)",
                            ChanBase::initCinfo())
          .valueFn<double>(
              "Gbar", [](const Leakage& o) { return o.Gbar_; },
              [](Leakage& o, const double& g) {
                if (!std::isfinite(g))
                  throw ValueError("Leakage.Gbar must be finite, got " + std::to_string(g));
                o.Gbar_ = g;
                o.Gk_ = g * o.modulation_;  // MOOSE's: Gk follows at once
              },
              "conductance")
          .proc<&Leakage::process, &Leakage::reinit>()
          .defaultTick(4)  // MOOSE's default tick for Leakage
          .build();
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* registered = ChanBase::initCinfo();
[[maybe_unused]] const Cinfo* registeredLeakage = Leakage::initCinfo();
}  // namespace

}  // namespace antler
