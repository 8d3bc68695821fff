#include "models/compartment.hpp"

#include <cmath>
#include <string>

namespace antler {

namespace {
double positive(const char* field, double v) {
  if (!(v > 0) || !std::isfinite(v))
    throw ValueError(std::string("Compartment.") + field +
                     " must be a positive finite number, got " + std::to_string(v));
  return v;
}
}  // namespace

void Compartment::process(const Eref& e, ProcPtr p) {
  const double A = A_ + inject_ + sumInject_ + Em_ / Rm_;
  const double B = B_;
  if (B > 1e-15) {
    const double oneMinusX = -std::expm1(-B * p->dt / Cm_);  // 1 - x, x = exp(-B dt / Cm)
    Vm_ = Vm_ * (1.0 - oneMinusX) + (A / B) * oneMinusX;
  } else {
    Vm_ += (A - Vm_ * B) * p->dt / Cm_;  // MOOSE's fallback for a vanishing conductance
  }
  A_ = 0.0;
  B_ = 1.0 / Rm_;
  lastIm_ = Im_;
  Im_ = 0.0;
  sumInject_ = 0.0;
  VmOut.send(e, Vm_);
}

void Compartment::reinit(const Eref& e, ProcPtr) {
  Vm_ = initVm_;
  A_ = 0.0;
  B_ = 1.0 / Rm_;
  Im_ = lastIm_ = 0.0;
  sumInject_ = 0.0;
  VmOut.send(e, Vm_);
}

void Compartment::initProc(const Eref& e, ProcPtr) {
  axialOut.send(e, Vm_);
  raxialOut.send(e, Ra_, Vm_);
}

void Compartment::setCm(double v) {
  Cm_ = positive("Cm", v);
}
void Compartment::setRm(double v) {
  const double old = Rm_;
  Rm_ = positive("Rm", v);
  B_ += 1.0 / Rm_ - 1.0 / old;  // the leak part of the next step's conductance
}
void Compartment::setRa(double v) {
  Ra_ = positive("Ra", v);
}

const Cinfo* Compartment::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<Compartment>("Compartment", "passive membrane compartment",
                                CompartmentBase::initCinfo())
          .value("Vm", &Compartment::Vm_, "membrane potential")
          .value("Cm", &Compartment::Cm, &Compartment::setCm, "membrane capacitance (> 0)")
          .value("Em", &Compartment::Em_, "resting potential")
          .value("Rm", &Compartment::Rm, &Compartment::setRm, "membrane resistance (> 0)")
          .value("Ra", &Compartment::Ra, &Compartment::setRa, "axial resistance (> 0)")
          .value("inject", &Compartment::inject_, "constant injected current")
          .value("initVm", &Compartment::initVm_, "Vm set by reinit")
          .readOnly("Im", &Compartment::Im, "axial and injectMsg current of the last step")
          .dest<&Compartment::injectMsg>("injectMsg", "adds a current to the next step")
          .dest<&Compartment::handleRaxial>("handleRaxial", "an axial neighbour's Ra and Vm")
          .dest<&Compartment::handleAxial>("handleAxial", "a raxial neighbour's Vm")
          .dest<&Compartment::handleChannel>("handleChannel", "a channel's Gk and Ek")
          .src(Compartment::VmOut)
          .src(Compartment::axialOut)
          .src(Compartment::raxialOut)
          .shared("axial", {"axialOut"}, {"handleRaxial"},
                  "to the raxial field of the neighbour towards the soma")
          .shared("raxial", {"raxialOut"}, {"handleAxial"},
                  "to the axial field of the neighbour away from the soma")
          .shared("channel", {"VmOut"}, {"handleChannel"}, "to a channel's channel field")
          .proc<&Compartment::process, &Compartment::reinit>()
          .init<&Compartment::initProc, &Compartment::initReinit>()
          .defaultTick(3)  // MOOSE's default tick for Compartment
          .build();
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* registered = Compartment::initCinfo();
}

}  // namespace antler
