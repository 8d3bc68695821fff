#pragma once
/// The element /clock (MOOSE's Clock element, Id 1 there): every field reads or sets the Clock.
///
///   baseDt        the base dt (setting it keeps every tick's step, so every tick's dt scales)
///   runTime       nsteps x dt;  currentTime, currentStep, nsteps, stride, numTicks, isRunning
///   dts           every tick's dt (0: off)
///   tickDt[i]     tick i's dt (set: MOOSE's setClock rule);  tickStep[i] its step in base dts
///   defaultTick[c] the tick a new element of class c goes on (-1: none)
///
/// It is a global element created with its Simulation, on every node at the same point, so it has
/// the same id everywhere; clearModel keeps it, and delete, move and copy refuse it.
#include "core/cinfo.hpp"
#include "core/id.hpp"

namespace antler {

class Clock;
class Simulation;

class ClockElement {
 public:
  double dt() const;
  void setDt(double dt);
  double runTime() const;
  double currentTime() const;
  unsigned long long currentStep() const;
  unsigned long long nsteps() const;
  unsigned long long stride() const;
  unsigned numTicks() const;
  bool isRunning() const;
  std::vector<double> dts() const;
  double tickDt(unsigned tick) const;
  void setTickDt(unsigned tick, double dt);
  unsigned long long tickStep(unsigned tick) const;
  void setTickStep(unsigned tick, unsigned long long steps);
  int defaultTick(std::string className) const;
  static const Cinfo* initCinfo();

 private:
  friend ObjId make_clock_element(Simulation& sim);
  // Every field is the clock's, this simulation's (set when /clock is made).
  Clock* clock_ = nullptr;
};

/// Makes sim's /clock if it is not there yet (the Simulation does, when it is made).
ObjId make_clock_element(Simulation& sim);

}  // namespace antler
