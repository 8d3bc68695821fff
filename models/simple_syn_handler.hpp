#pragma once
/// SimpleSynHandler: MOOSE's synapse layout since 2014. The handler holds the synapses (its
/// `synapse` field element, entries of class Synapse, counted by numSynapses); a spike arriving at
/// a synapse's addSpike(t) queues the synapse's weight, as it is then, for time t + delay. Each
/// step, process sums the queued weights whose time has come (time <= the end of the step, with
/// the clock's slack: models/step_time.hpp), divides the sum by the tick's dt and sends it on
/// `activationOut` when it is not 0: one message per handler per step, an impulse of area sum(w)
/// over one dt, which a cell's `activation` input takes (IntFire adds it to Vm, LIF adds
/// activation x dt). Default tick 1, so a cell on tick 2 sees a step's events in that step.
///
/// Where events wait: the Element keeps one array of step slots for the node's handlers (an
/// ElementState set up by the clock's prepare hook at reinit), handler i owning R_i consecutive
/// slots, R_i = its longest synaptic delay in steps plus two. An event adds its weight to the slot
/// of its step (one memory access, fetched ahead by the delivery loop); a step reads each
/// handler's slot in index order. An event further ahead than its handler's slots (a delay made
/// longer after reinit, a spike sent straight to addSpike, anything before the first run) waits
/// in the handler's heap, ordered by (time, arrival), and joins its step's sum when it comes.
/// Order: events arrive in the serial delivery order (msg/post_office.hpp); a step's sum is the
/// slot's weights in arrival order, then the heap's in (time, arrival) order. R_i depends only on
/// the handler's own synapses, so which events wait where, and so the sums and the activation,
/// have the same bits on any split (MOOSE's priority queue leaves ties unordered and divides each
/// weight by dt). reinit drops every queued event; synapses, weights and delays stay.
#include <cstdint>
#include <vector>

#include "core/class_builder.hpp"
#include "core/edge_array.hpp"
#include "core/element.hpp"
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
  /// The clock's hooks (core/proc_finfo.hpp): prepare sizes the Element's slots at reinit (and
  /// moves their events aside if the dt changed); processBlock runs a slice.
  static void prepare(const DataElement* e, const ProcInfo& p, bool reinit);
  static void processBlock(const DataElement* e, Index lo, SimpleSynHandler* objs, Index n,
                           ProcPtr p);
  /// Queues weight for time on handler d (local) of e (what Synapse::addSpike calls).
  static void addEvent(const DataElement* e, Index d, double time, double weight);
  /// Fetches the slot an event at `time` for handler d would go to (a hint: changes nothing).
  static void prefetchEvent(const DataElement* e, Index d, double time);
  /// Events queued and not yet sent.
  unsigned numPending(const Eref& e) const;
  EdgeArray<Synapse>& synapses() { return synapses_; }
  static const Cinfo* initCinfo();
  /// At most this many slots per handler (events further ahead wait in its heap).
  static constexpr std::uint64_t kMaxSlots = 4096;

 private:
  struct Event {
    double time, weight;
    std::uint64_t seq;  // arrival order, for equal times
  };
  static bool later(const Event& a, const Event& b) {
    return a.time > b.time || (a.time == b.time && a.seq > b.seq);
  }
  class Ring;
  static Ring* ring_of(const DataElement* e);
  void putAside(double time, double weight);
  EdgeArray<Synapse> synapses_;  // lent to the Sparse messages that fill it, in their order
  std::vector<Event> heap_;      // events beyond the slots: a min-heap by (time, seq)
  std::uint64_t seq_ = 0;
};

}  // namespace antler
