#include "models/syn_chan.hpp"

#include <cmath>
#include <string>

#include "models/moose_eq.hpp"

namespace antler {

namespace {

using detail::moose_eq;

double checked_tau(const char* field, double t) {
  if (!(t >= 0) || !std::isfinite(t))
    throw ValueError(std::string("SynChan.") + field + " must be a finite number >= 0, got " +
                     std::to_string(t));
  return t;
}

}  // namespace

void SynChan::constants() {
  xconst1_ = tau1_ * (1.0 - std::exp(-dt_ / tau1_));
  xconst2_ = std::exp(-dt_ / tau1_);
  if (moose_eq(tau2_, 0.0)) {
    yconst1_ = 1.0;
    yconst2_ = 0.0;
  } else {
    yconst1_ = tau2_ * (1.0 - std::exp(-dt_ / tau2_));
    yconst2_ = std::exp(-dt_ / tau2_);
  }
}

void SynChan::normalize() {
  if (moose_eq(tau2_, 0.0)) {
    norm_ = Gbar_;
  } else if (moose_eq(tau1_, tau2_)) {
    norm_ = Gbar_ * std::exp(1.0) / tau1_;
  } else {
    const double tpeak = tau1_ * tau2_ * std::log(tau1_ / tau2_) / (tau1_ - tau2_);
    norm_ = Gbar_ * (tau1_ - tau2_) /
            (tau1_ * tau2_ * (std::exp(-tpeak / tau1_) - std::exp(-tpeak / tau2_)));
  }
}

void SynChan::setGbar(double g) {
  if (!std::isfinite(g)) throw ValueError("SynChan.Gbar must be finite, got " + std::to_string(g));
  Gbar_ = g;
  normalize();
}

void SynChan::setTau1(double t) {
  if (checked_tau("tau1", t) == 0.0)
    throw ValueError("SynChan.tau1 must be > 0 (the decay time constant), got 0");
  tau1_ = t;
  constants();  // (MOOSE updates only the x constants here; the y ones are unchanged by tau1)
  normalize();
}

void SynChan::setTau2(double t) {
  tau2_ = checked_tau("tau2", t);
  constants();
  normalize();
}

void SynChan::process(const Eref& e, ProcPtr) {
  X_ = activation_ * xconst1_ + X_ * xconst2_;
  Y_ = X_ * yconst1_ + Y_ * yconst2_;
  activation_ = 0.0;
  Gk_ = Y_ * norm_ * modulation_;
  send(e);
}

void SynChan::reinit(const Eref& e, ProcPtr p) {
  dt_ = p->dt;
  activation_ = 0.0;
  Gk_ = Ik_ = 0.0;
  X_ = Y_ = 0.0;
  constants();
  normalize();
  channelOut.send(e, Gk_, Ek_);
  IkOut.send(e, Ik_);
}

const Cinfo* SynChan::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<SynChan>("SynChan",
                            "synaptic channel with a dual-exponential conductance (MOOSE's)",
                            ChanBase::initCinfo())
          .value("Gbar", &SynChan::Gbar, &SynChan::setGbar,
                 "peak conductance of a unit activation's response")
          .value("tau1", &SynChan::tau1, &SynChan::setTau1, "decay time constant (tau1 >= tau2)")
          .value("tau2", &SynChan::tau2, &SynChan::setTau2, "rise time constant (0: none)")
          .value("normalizeWeights", &SynChan::normalizeWeights_,
                 "MOOSE's flag (kept; MOOSE does not use it either)")
          .dest<&SynChan::activation>("activation", "adds to the next step's activation")
          .proc<&SynChan::process, &SynChan::reinit>()
          .defaultTick(4)  // MOOSE's default tick for SynChan
          .build();
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* registered = SynChan::initCinfo();
}

}  // namespace antler
