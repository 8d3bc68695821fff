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
  const double A = inject_ + sumInject_ + Em_ / Rm_;
  const double B = 1.0 / Rm_;
  const double oneMinusX = -std::expm1(-B * p->dt / Cm_);  // 1 - x, x = exp(-B dt / Cm)
  Vm_ = Vm_ * (1.0 - oneMinusX) + (A / B) * oneMinusX;
  sumInject_ = 0.0;
  VmOut.send(e, Vm_);
}

void Compartment::reinit(const Eref& e, ProcPtr) {
  Vm_ = initVm_;
  sumInject_ = 0.0;
  VmOut.send(e, Vm_);
}

void Compartment::setCm(double v) {
  Cm_ = positive("Cm", v);
}
void Compartment::setRm(double v) {
  Rm_ = positive("Rm", v);
}
void Compartment::setRa(double v) {
  Ra_ = positive("Ra", v);
}

const Cinfo* Compartment::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<Compartment>("Compartment", "passive membrane compartment")
          .value("Vm", &Compartment::Vm_, "membrane potential")
          .value("Cm", &Compartment::Cm, &Compartment::setCm, "membrane capacitance (> 0)")
          .value("Em", &Compartment::Em_, "resting potential")
          .value("Rm", &Compartment::Rm, &Compartment::setRm, "membrane resistance (> 0)")
          .value("Ra", &Compartment::Ra, &Compartment::setRa, "axial resistance (> 0)")
          .value("inject", &Compartment::inject_, "constant injected current")
          .value("initVm", &Compartment::initVm_, "Vm set by reinit")
          .dest<&Compartment::injectMsg>("injectMsg", "adds a current to the next step")
          .src(Compartment::VmOut)
          .proc<&Compartment::process, &Compartment::reinit>()
          .build();
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* registered = Compartment::initCinfo();
}

}  // namespace antler
