#include "shell/detail/clock_element.hpp"

#include <string>

#include "core/class_builder.hpp"
#include "core/element.hpp"
#include "shell/clock.hpp"
#include "shell/simulation.hpp"

namespace antler {

namespace {
void check_tick(unsigned tick, const char* field) {
  if (tick >= Clock::kNumTicks)
    throw IndexError(std::string("/clock.") + field + "[" + std::to_string(tick) +
                     "]: tick out of range (ticks 0.." + std::to_string(Clock::kNumTicks - 1) +
                     ")");
}
}  // namespace

double ClockElement::dt() const {
  return clock_->dt();
}
void ClockElement::setDt(double dt) {
  clock_->setDt(dt);
}
double ClockElement::runTime() const {
  return clock_->runTime();
}
double ClockElement::currentTime() const {
  return clock_->currentTime();
}
unsigned long long ClockElement::currentStep() const {
  return clock_->currentStep();
}
unsigned long long ClockElement::nsteps() const {
  return clock_->nsteps();
}
unsigned long long ClockElement::stride() const {
  const auto s = clock_->stride();
  return s ? s : 1;  // MOOSE's stride with nothing scheduled
}
unsigned ClockElement::numTicks() const {
  return Clock::kNumTicks;
}
bool ClockElement::isRunning() const {
  return clock_->running();
}
std::vector<double> ClockElement::dts() const {
  return clock_->dts();
}
double ClockElement::tickDt(unsigned tick) const {
  check_tick(tick, "tickDt");
  return clock_->tickDt(tick);
}
void ClockElement::setTickDt(unsigned tick, double dt) {
  check_tick(tick, "tickDt");
  clock_->setTickDt(tick, dt);
}
unsigned long long ClockElement::tickStep(unsigned tick) const {
  check_tick(tick, "tickStep");
  return clock_->tickStep(tick);
}
void ClockElement::setTickStep(unsigned tick, unsigned long long steps) {
  clock_->setTickStep(tick, steps);
}
int ClockElement::defaultTick(std::string className) const {
  return Cinfo::require(className, "/clock.defaultTick")->defaultTick();
}

const Cinfo* ClockElement::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<ClockElement>("Clock", "the scheduler (/clock): its base dt, ticks and time")
          .value("baseDt", &ClockElement::dt, &ClockElement::setDt,
                 "base dt: every tick's dt is a whole number (tickStep) of it")
          .readOnly("runTime", &ClockElement::runTime, "nsteps x dt")
          .readOnly("currentTime", &ClockElement::currentTime, "model time reached so far")
          .readOnly("currentStep", &ClockElement::currentStep, "base steps taken since reinit")
          .readOnly("nsteps", &ClockElement::nsteps,
                    "base steps since reinit at the end of the last run asked for")
          .readOnly("stride", &ClockElement::stride,
                    "base steps per step of a run: the smallest tickStep in use")
          .readOnly("numTicks", &ClockElement::numTicks, "number of ticks (32)")
          .readOnly("isRunning", &ClockElement::isRunning, "true while a run is going on")
          .readOnly("dts", &ClockElement::dts, "every tick's dt (0: tick off)")
          .lookup("tickDt", &ClockElement::tickDt, &ClockElement::setTickDt,
                  "dt of a tick (setting it is setClock)")
          .lookup("tickStep", &ClockElement::tickStep, &ClockElement::setTickStep,
                  "base steps per step of a tick (0: off)")
          .lookup("defaultTick", &ClockElement::defaultTick,
                  "the tick a new element of a class goes on (-1: none)")
          .build();
  return c;
}

ObjId make_clock_element(Simulation& sim) {
  ElementTable& t = sim.elements();
  Element* root = t.get(Id::root());
  if (Element* old = root->child("clock"); old && old->isSystem()) return ObjId(old->id());
  auto* de = static_cast<DataElement*>(t.insert(std::make_unique<DataElement>(
      sim, t.nextId(), "clock", ClockElement::initCinfo(), Id::root(), 1, /*global=*/true)));
  de->setSystem();
  object<ClockElement>(de, 0)->clock_ = &sim.clock();
  return ObjId(de->id());
}

namespace {
[[maybe_unused]] const Cinfo* registered = ClockElement::initCinfo();
}

}  // namespace antler
