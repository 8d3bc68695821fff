#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// SimpleSynHandler: MOOSE's synapse layout since 2014. The handler holds the synapses (its
/// `synapse` field element, entries of class Synapse, counted by numSynapses, and its
/// `compactSynapse` one, entries of class CompactSynapse in 8 bytes, counted by
/// numCompactSynapses: models/synapse.hpp; a handler may use either or both); a spike arriving at
/// a synapse's addSpike(t) queues the synapse's weight, as it is then, for time t + delay. Each
/// step, process sums the queued weights whose time has come (time <= the end of the step, with
/// the clock's slack: models/step_time.hpp), divides the sum by the tick's dt and sends it on
/// `activationOut` when it is not 0: one message per handler per step, an impulse of area sum(w)
/// over one dt, which a cell's `activation` input takes (IntFire adds it to Vm, LIF adds
/// activation x dt). Default tick 1, so a cell on tick 2 sees a step's events in that step.
///
/// Where events wait: per step, per clock thread, a queue of the events due in that step
/// (models/step_queues.hpp: an event is an append, in arrival order), kept by the Element for
/// the node's handlers (an ElementState set up by the clock's prepare hook at reinit). A step
/// adds its queues up into one sum per handler (from -0.0, so that a sum of weights has the
/// bits of one from 0.0 wherever it is not 0, and "no events" is a sum of 0, which sends
/// nothing). Handler i takes an
/// event in its queues only if it is due within R_i steps, R_i = its longest synaptic delay in
/// steps plus two, rounded up to a power of two; an event further ahead (a delay made longer after
/// reinit, a spike sent straight to addSpike, anything before the first run) waits in the handler's
/// heap, ordered by (time, arrival), and joins its step's sum when it comes. Order: events arrive
/// in the serial delivery order (msg/post_office.hpp); a step's sum is the queued weights in
/// arrival order, then the heap's in (time, arrival) order. R_i depends only on the handler's own
/// synapses, so which events wait where, and so the sums and the activation, have the same bits on
/// any split (MOOSE's priority queue leaves ties unordered and divides each weight by dt). reinit
/// drops every queued event; synapses, weights and delays stay.
///
/// The direct path: when a handler Element's only activationOut message is a OneToOne to a cell
/// Element whose class reads handler sums itself (IntFire: acceptDirect below), and the run
/// processes that cell on a later tick with the same step, nothing else sends to the cell's
/// activation and the cell takes no events of its own during the run (`quiet`), then the handler
/// sends nothing: its process adds the step's queues (and the heap's due events) into its sums
/// and turns those of the handlers with events into activations (sum / dt, what the message
/// would carry), and the cell's process adds each handler's activation to its own step sum as
/// the message would have (an empty one is -0.0, which adds nothing), and empties it. The
/// arithmetic and its order are those of the messages (the message would have been the step sum's
/// one addition after the events already in it), so the bits are the same; what goes is a message
/// per handler per step and a pass over the handlers. Decided at each run's start
/// (ProcInfo::schedule), on each node alone (the result does not depend on it).
#include <cstddef>
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
  /// The clock's hooks (core/proc_finfo.hpp): prepare sizes the Element's queues at reinit (and
  /// moves their events aside if the dt changed); processBlock runs a slice.
  static void prepare(const DataElement* e, const ProcInfo& p, bool reinit);
  static void processBlock(const DataElement* e, Index lo, SimpleSynHandler* objs, Index n,
                           ProcPtr p);
  /// Queues weight for time on handler d (local) of e (what Synapse::addSpike calls).
  static void addEvent(const DataElement* e, Index d, double time, double weight);
  /// Syn::addSpike(time) of syn[i], an entry of handler d[i] (local) of e, for i in 0 .. n-1,
  /// in that order: what a row of a Sparse message delivers (the queues found once). (Syn:
  /// Synapse or CompactSynapse.)
  template <class Syn>
  static void addEvents(const DataElement* e, const Index* d, const Syn* syn, std::size_t n,
                        double time);
  /// Events queued and not yet sent.
  unsigned numPending(const Eref& e) const;

  /// A handler's sum while it holds no events of the step: -0.0, the one x with x + w == w.
  static constexpr double kNoEvents = -0.0;
  /// Declares that the process of class `cell` reads the sums of the handler Element that
  /// feeds its `activation` DestFinfo directly (see "The direct path"), when quiet(cell Element)
  /// says that nothing but that activation adds to its step sums during a run.
  static void acceptDirect(const Cinfo* cell, const Finfo* activation,
                           bool (*quiet)(const Element* cell));
  /// For a cell's prepare hook: the handler Element that feeds cell directly in this run, or
  /// nullptr (then its activation comes by message).
  static const DataElement* directFeed(const DataElement* cell, const ProcInfo& p);
  /// The activations of handler Element h's step, one per local handler in index order: what
  /// its message would carry (sum / dt), kNoEvents where it would send none. For the cell h feeds
  /// directly, in its process: it adds and empties them.
  static double* feedActivations(const DataElement* h);
  EdgeArray<Synapse>& synapses() { return synapses_; }
  EdgeArray<CompactSynapse>& compactSynapses() { return compactSynapses_; }
  static const Cinfo* initCinfo();
  /// At most this many steps ahead in a handler's queues (events further ahead wait in its heap).
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
  /// The cell Element that handler Element h feeds directly in the run p describes, or nullptr.
  static const DataElement* directTarget(const DataElement* h, const ProcInfo& p);
  void putAside(double time, double weight);
  EdgeArray<Synapse> synapses_;  // lent to the Sparse messages that fill it, in their order
  EdgeArray<CompactSynapse> compactSynapses_;  // the same, in 8 bytes an entry
  std::vector<Event> heap_;  // events beyond the queues: a min-heap by (time, seq)
  std::uint64_t seq_ = 0;
};

extern template void SimpleSynHandler::addEvents(const DataElement*, const Index*, const Synapse*,
                                                 std::size_t, double);
extern template void SimpleSynHandler::addEvents(const DataElement*, const Index*,
                                                 const CompactSynapse*, std::size_t, double);

}  // namespace antler
#pragma GCC visibility pop
