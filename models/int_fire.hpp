#pragma once
/// IntFire: a leaky integrate-and-fire neuron with an array of synapses (MOOSE's IntFire).
///
/// Each step, with currTime the time at the end of the step:
///   1. every pending synaptic event due by currTime (within the slack of models/step_time.hpp)
///      adds its weight to Vm;
///   2. if Vm > thresh and currTime - lastSpike >= refractoryPeriod (same slack): the neuron
///      sends spikeOut(currTime), resets Vm to vReset (0 by default; MOOSE resets too), sets
///      lastSpike = currTime and spiked = 1;
///      otherwise Vm decays, Vm *= 1 - dt / tau, and spiked = 0.
/// reinit sets Vm = initVm (0 by default), drops every pending event, lastSpike = -infinity and
/// spiked = 0.
///
/// Events arrive through the `synapse` field element (Synapse::addSpike schedules the synapse's
/// weight at spike time + delay). They wait in a min-heap ordered by (time, weight), so events that
/// fall due in the same step are added to Vm in one fixed order, whatever order they arrived in.
/// `spiked` is a double so that a Reduce message (e.g. from SpikeStats) can sum it into a
/// population spike count.
#include <functional>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

#include "core/class_builder.hpp"
#include "models/synapse.hpp"
#include "msg/src_finfo.hpp"

namespace antler {

class IntFire {
 public:
  /// Sends the spike time (the end of the step it fired in).
  inline static SrcFinfo<double> spikeOut{"spikeOut", "sends the spike time when the neuron fires"};
  /// Adds due events, fires or decays (see the header comment).
  void process(const Eref& e, ProcPtr p);
  /// Vm = initVm, no pending events, lastSpike = -infinity, spiked = 0.
  void reinit(const Eref& e, ProcPtr p);
  /// Schedules `weight` to be added to Vm at `time` (what Synapse::addSpike calls).
  void addEvent(double time, double weight) {
    pending_.push({time, weight});
    if (time < nextDue_) nextDue_ = time;
  }
  /// Number of synaptic events not yet added to Vm.
  unsigned numPending() const { return static_cast<unsigned>(pending_.size()); }
  /// Membrane time constant.
  double tau() const { return tau_; }
  /// Sets tau (must be positive: ValueError otherwise).
  void setTau(double tau);
  /// The class info of IntFire (registered at load time).
  static const Cinfo* initCinfo();

 private:
  using Event = std::pair<double, double>;  // (time, weight): the heap's order is lexicographic
  double Vm_ = 0.0;
  double thresh_ = 0.0;  // MOOSE's defaults: thresh 0, tau 1
  double tau_ = 1.0;
  double refractoryPeriod_ = 0.0;
  double vReset_ = 0.0;
  double initVm_ = 0.0;
  double lastSpike_ = -std::numeric_limits<double>::infinity();
  double spiked_ = 0.0;
  std::vector<Synapse> synapses_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> pending_;
  // Time of the earliest pending event (infinity if none): process touches the heap only when
  // something is due, which spares most neurons a dependent cache miss every step.
  double nextDue_ = std::numeric_limits<double>::infinity();
};

}  // namespace antler
