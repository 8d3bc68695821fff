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
/// Where events wait: each handler keeps a ring of R step slots (R = its longest synaptic delay
/// in steps, plus two, sized at reinit), so an event adds its weight to the slot of its step and
/// a step reads one slot: no search, no allocation. An event further ahead than the ring (a delay
/// set after reinit, a spike sent straight to addSpike, anything before the first reinit) waits
/// in a heap ordered by (time, arrival) instead, and joins its step's sum when that step comes.
/// Order: events arrive in the serial delivery order (msg/post_office.hpp); a step's sum is its
/// slot's weights in arrival order, then its heap weights in (time, arrival) order, divided by
/// dt once. Which events wait in the heap depends on the handler's own synapses and the times
/// only, so the sums, and the activation, have the same bits on any split (MOOSE's priority
/// queue leaves ties unordered and divides each weight by dt). reinit drops every queued event;
/// synapses, weights and delays stay.
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
  unsigned numPending() const;
  EdgeArray<Synapse>& synapses() { return synapses_; }
  static const Cinfo* initCinfo();
  /// At most this many steps in a handler's ring (events further ahead wait in its heap).
  static constexpr std::uint64_t kMaxSlots = 4096;

 private:
  struct Event {
    double time, weight;
    std::uint64_t seq;  // arrival order, for equal times
  };
  static bool later(const Event& a, const Event& b) {
    return a.time > b.time || (a.time == b.time && a.seq > b.seq);
  }
  struct Slot {
    double sum = 0.0;
    unsigned count = 0;
  };
  EdgeArray<Synapse> synapses_;  // lent to the Sparse messages that fill it, in their order
  std::vector<Slot> ring_;       // slot s % R: the weights due in step s (empty before reinit)
  std::vector<Event> heap_;      // events beyond the ring: a min-heap by (time, seq)
  std::uint64_t seq_ = 0;
  std::uint64_t last_ = 0;  // the last step processed (in steps of dt_)
  double dt_ = 0.0, invDt_ = 0.0;
};

}  // namespace antler
