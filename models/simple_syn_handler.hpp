#pragma once
/// SimpleSynHandler: MOOSE's synapse layout since 2014. The handler holds the synapses (its
/// `synapse` field element, entries of class Synapse, counted by numSynapses); a spike arriving at
/// a synapse's addSpike(t) queues the synapse's weight, as it is then, for time t + delay. Each
/// step, process sums the queued weights whose time has come (time <= the end of the step, with
/// the clock's slack: models/step_time.hpp), divided by the tick's dt, and sends the sum on
/// `activationOut` when it is not 0: one message per handler per step, an impulse of area sum(w)
/// over one dt, which a cell's `activation` input takes (IntFire adds it to Vm, LIF adds
/// activation x dt). Default tick 1, so a cell on tick 2 sees a step's events in that step.
///
/// Order: events arrive in the serial delivery order (msg/post_office.hpp) and wait in a heap
/// ordered by (time, arrival), so the weights of a step are summed in the same order on any
/// split, and the activation has the same bits (MOOSE's priority queue leaves ties unordered).
/// reinit drops every queued event; synapses, weights and delays stay.
#include <cstdint>
#include <vector>

#include "core/class_builder.hpp"
#include "core/edge_array.hpp"
#include "models/synapse.hpp"
#include "msg/src_finfo.hpp"

namespace antler {

class SimpleSynHandler {
 public:
  /// Sends sum(weights due) / dt each step it is not 0.
  inline static SrcFinfo<double> activationOut{
      "activationOut", "sends the sum of the weights due this step divided by dt (when not 0)"};
  void process(const Eref& e, ProcPtr p);
  void reinit(const Eref& e, ProcPtr p);
  /// Queues weight for time (what Synapse::addSpike calls on the handler that holds it).
  void addEvent(double time, double weight);
  /// Events queued and not yet sent.
  unsigned numPending() const { return static_cast<unsigned>(heap_.size()); }
  EdgeArray<Synapse>& synapses() { return synapses_; }
  static const Cinfo* initCinfo();

 private:
  struct Event {
    double time, weight;
    std::uint64_t seq;  // arrival order, for equal times
  };
  static bool later(const Event& a, const Event& b) {
    return a.time > b.time || (a.time == b.time && a.seq > b.seq);
  }
  EdgeArray<Synapse> synapses_;  // lent to the Sparse messages that fill it, in their order
  std::vector<Event> heap_;      // a min-heap by (time, seq)
  std::uint64_t seq_ = 0;
};

}  // namespace antler
