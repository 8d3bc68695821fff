#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// IntFire: a leaky integrate-and-fire neuron with an array of synapses (MOOSE's IntFire).
///
/// Each step, with currTime the time at the end of the step:
///   1. the synaptic events due in this step (see below) add their weights to Vm;
///   2. if Vm > thresh and currTime - lastSpike > refractoryPeriod (strictly, by more than the
///      slack of models/step_time.hpp, as MOOSE's strict test): the neuron sends
///      spikeOut(currTime), resets Vm to vReset (-1e-7 by default, MOOSE's reset value), sets
///      lastSpike = currTime and spiked = 1; otherwise Vm decays, Vm *= 1 - dt / tau, and
///      spiked = 0.
/// Defaults are MOOSE's: thresh 0, tau 1, refractoryPeriod 0.1 s. reinit sets Vm = initVm (0 by
/// default), drops every pending event, lastSpike = -infinity and spiked = 0 (MOOSE keeps the
/// last spike time across reinit, so a neuron that fired late in one run may start the next one
/// refractory; antler starts every run alike: README, "where antler differs").
///
/// MOOSE's layouts both work: synapses on the IntFire (`synapse`, below; MOOSE before 2014) and
/// a SimpleSynHandler whose activationOut drives `activation` (MOOSE 3/4): an activation v is
/// added to Vm in the next process, summed with the events due then in arrival order. A handler
/// Element that alone feeds an IntFire Element OneToOne, on an earlier tick with the same step,
/// hands over its step's activations instead of sending (models/simple_syn_handler.hpp, "The
/// direct path"): the neuron adds its handler's activation (sum / dt) to its step sum in its
/// process, where the message would have put it, so Vm has the same bits.
///
/// Events arrive through the `synapse` field element (Synapse::addSpike schedules the synapse's
/// weight, as it is when the spike arrives, at spike time + delay), or the `compactSynapse` one
/// (CompactSynapse: the same in 8 bytes, weight and delay in single precision; models/synapse.hpp).
/// An event at time t is due in the first step whose end, plus the slack, is not before t: delays
/// round up to whole steps.
///
/// Pending events wait in queues that the whole Element shares (the layout Brian2 and NEST use):
/// per step, per clock thread, the events due in that step as (neuron, weight), appended in the
/// order they arrive. Scheduling an event writes one entry at the end of its step's queue, in
/// order, wherever its neuron is; a step first adds its queues up into a sum per neuron (an
/// array of the node's neurons that stays in cache), each thread the neurons of its slice, then
/// walks its neurons. (Until 2026-11 this was a ring of rows x neurons x 16 B, touched at random
/// by every event: 816 MB at 1e6 neurons and 5 ms of delays, which no cache holds.) During a run
/// the thread that delivers to a neuron is the thread that processes it, so a neuron's events are
/// in one queue in arrival order; between runs (a Shell call) the threads' queues are merged into
/// the first, in thread order, and events go there. Events can be queued up to R steps ahead,
/// R the largest synaptic delay of the node's neurons in steps, plus one (sized at reinit). An
/// event further ahead (a delay set after reinit, a spike sent straight to addSpike), or sent
/// before the Element has its queues (before any reinit or run), waits in a list of its
/// neuron's until its step is within R, and R grows to fit such delays before the next run (at
/// most kMaxSlots steps, and kMaxRingEntries steps x neurons beyond what the synapses need). The
/// list changes where an event waits, never the order in which a step's events are added: an
/// event for step s leaves it, in arrival order, in the process of step s - R at the latest,
/// before any event for s can go straight to its queue.
///
/// The queues are the Element's (an ElementState, core/element.hpp), set up by the clock on one
/// thread before each run (prepare: sized at reinit, re-timed when dt changed since the last run,
/// grown when events asked for more steps, a queue per clock thread of the run), so an IntFire
/// Element runs on one tick. A copy of an IntFire Element (Shell::copy) starts with no pending
/// events; reinit empties them anyway.
///
/// Order: a step's weights are summed in the order they arrive, then the sum is added to Vm. Sends
/// are delivered in the serial order (by source Element, then source global index: see
/// msg/post_office.hpp), one step after another, so the order of the additions into a neuron's
/// step sum, and so the bits of Vm, are the same for any threads x nodes split. (Before the step
/// sums, each weight was added to Vm on its own, in (time, weight) order: Vm then differed from
/// today's in its last bits when two or more events fell due in one step; a step with one event
/// gives the same bits.)
/// `spiked` is a double so that a Reduce message (e.g. from SpikeStats) can sum it into a
/// population spike count.
///
/// A Reduce message that reads Vm (a Stats of the population) is fed by the neuron sweep itself,
/// 512 neurons at a time while their Vm is in L1 (core/element.hpp: SweepSink), rather than
/// reading the 16-byte neurons again: one pass over the neurons a step, not two. A reader the
/// sweep cannot feed (a Single message's) folds a copy the sweep writes as it goes, one double a
/// neuron (ElementState::memberCopy). Only during a run, and only when no message sets Vm (then
/// process alone changes it, so the fed partial and the copy hold the values the neurons do and
/// the reduction the same bits); otherwise, and where the sweep has not run since Vm last
/// changed, the reduction reads the neurons.
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "core/class_builder.hpp"
#include "core/element.hpp"
#include "models/step_time.hpp"
#include "models/synapse.hpp"
#include "msg/src_finfo.hpp"

namespace antler {

class alignas(16) IntFire {
 public:
  /// Sends the spike time (the end of the step it fired in).
  inline static SrcFinfo<double> spikeOut{"spikeOut", "sends the spike time when the neuron fires"};
  IntFire() = default;
  IntFire(const IntFire& o);
  IntFire& operator=(const IntFire& o);
  ~IntFire() { freeCold(cold()); }
  /// Adds the step's events, fires or decays (see the header comment).
  void process(const Eref& e, ProcPtr p);
  /// Vm = initVm, no pending events, lastSpike = -infinity, spiked = 0.
  void reinit(const Eref& e, ProcPtr p);
  /// The clock's hooks (core/proc_finfo.hpp): prepare sets up the Element's event queues before a
  /// run (sized from the synapses at reinit; re-timed when dt changed, grown when events asked
  /// for more steps); processBlock runs process over a slice, adding its step's queues up first.
  static void prepare(const DataElement* e, const ProcInfo& p, bool reinit);
  static void processBlock(const DataElement* e, Index lo, IntFire* objs, Index n, ProcPtr p);
  /// True if nothing adds to the neurons' step sums during a run but their activation: no
  /// message reaches their synapses (SimpleSynHandler's direct path).
  static bool quiet(const Element* e);
  /// Schedules `weight` on neuron d (local) of e at `time` (what Synapse::addSpike calls).
  static void addEvent(const DataElement* e, Index d, double time, double weight);
  /// addSpike(time) of syn[i], an entry of neuron d[i] (local) of e, for i in 0 .. n-1, in that
  /// order: what a row of a Sparse message delivers (the queues found once). Syn: Synapse or
  /// CompactSynapse.
  template <class Syn>
  static void addEvents(const DataElement* e, const Index* d, const Syn* syn, std::size_t n,
                        double time);
  /// MOOSE's `activation` input (from a SimpleSynHandler's activationOut): v is added to Vm in
  /// the neuron's next process, with the events due then (in arrival order), as MOOSE's IntFire
  /// adds its summed activation (Vm += activation: a handler's weight w arrives as w / dt).
  void activation(const Eref& e, double v);
  /// Number of synaptic events not yet added to Vm (counted over the queues: a getter, not kept).
  unsigned numPending(const Eref& e) const;
  /// 1 if the neuron fired in the last step, else 0 (a double, for Reduce messages that sum it).
  double spiked() const { return (tagged_ & kSpiked) ? 1.0 : 0.0; }
  /// Membrane time constant.
  double tau() const { return cold()->tau; }
  void setTau(const Eref& e, double tau);
  /// Firing threshold: fires when Vm > thresh.
  double thresh() const { return cold()->thresh; }
  void setThresh(const Eref& e, double thresh);
  static const Cinfo* initCinfo();

  /// At most this many steps ahead in the queues, and this many steps x neurons of a node when
  /// they grow for events that did not fit (the limit the ring of rows x neurons had, kept so that
  /// the same events wait aside); delays known at reinit always fit.
  static constexpr std::uint64_t kMaxSlots = 1u << 16;
  static constexpr std::uint64_t kMaxRingEntries = std::uint64_t{1} << 26;

 private:
  struct Slot {
    double sum = 0.0;    // weights due in the row's step, summed in arrival order
    unsigned count = 0;  // how many
  };
  struct Event {  // an event waiting aside (see Far)
    double time, weight;
    unsigned count;
  };
  struct Far {  // events not in the queues (too far ahead, or no queues yet)
    std::vector<Event> events;
    std::uint64_t next = 0;  // the first step after which one of them may fit the queues
  };
  class Ring;
  struct Fired;  // (Ring::fired)
  static Ring* ring_of(const DataElement* e);
  /// Queues an event for its step if the step is within reach (after step `last`); false if
  /// not. t: the queue it goes to (Ring::queueThread, asked once for a run of events), or ~0u
  /// for the queue asked now (the second form).
  [[gnu::always_inline]] static inline bool placeIn(Ring& r, unsigned t, Index col,
                                                    std::uint64_t last, double time, double weight,
                                                    unsigned count);
  static bool placeIn(Ring& r, Index col, std::uint64_t last, double time, double weight,
                      unsigned count);
  void place(Ring* r, Index col, std::uint64_t last, double time, double weight, unsigned count);
  void putAside(const Ring* r, double time, double weight, unsigned count);
  void placeAside(Ring& r, Index col, std::uint64_t last);
  /// Sends the spike, resets Vm (see the header comment); this is objs[i], data index lo + i.
  [[gnu::noinline]] void fire(const DataElement* e, Index lo, const IntFire* objs, ProcPtr p,
                              Fired* fired);
  /// What a step reads: its queues (own), a SimpleSynHandler's activations after them (both),
  /// or the activations alone when the queues are known empty (feed).
  enum class Rows : unsigned { own, both, feed };
  /// kFlags of processRows: the neurons share thresh and decay (Ring::shared); the sweep writes
  /// Vm out, to the copy (Ring::vm) and the sinks (Ring::sinks); it tests no neuron's flags
  /// (Ring::Fired).
  static constexpr unsigned kSharedParams = 1, kCopyVm = 2, kNoFlagTest = 4;
  /// fired: the calling clock thread's record (Ring::fired), or nullptr outside a run.
  template <Rows kRows, unsigned kFlags>
  static void processRows(const DataElement* e, Ring* r, Index lo, IntFire* objs, Index n,
                          ProcPtr p, Fired* fired);
  /// The step's rule on v, Vm with the step's input added: the value Vm takes. (Vm is held in a
  /// register through the sweep and stored once: stores to the sums or the Vm copy may alias it
  /// as far as the compiler knows, so writing it as it changes would store and reload it.)
  /// thresh and decay: the neuron's (Ring::thresh and Ring::decay, or its entries of Ring's
  /// per-neuron arrays). The caller has cleared the spike flag (fire sets it).
  /// A neuron that fires is recorded in `fired`, if given. lo: the data index of objs[0] (the
  /// slice's first neuron).
  [[gnu::always_inline]] inline double fireOrDecay(const DataElement* e, Index lo,
                                                   const IntFire* objs, ProcPtr p, double slack,
                                                   double thresh, double decay, double v,
                                                   Fired* fired);
  /// Ring's copy of the neurons' thresh and decay, from the neurons (see Ring::paramsValid).
  static void loadParams(Ring& r, const IntFire* objs);
  /// Writes neuron e's thresh and decay into Ring's copy, if it has one.
  void storeParams(const Eref& e) const;
  static void prepareRing(const DataElement* e, const ProcInfo& p, bool reinit);

  struct alignas(64) Cold {
    double lastSpike = -std::numeric_limits<double>::infinity();
    double refractoryPeriod = 0.1;  // MOOSE's defaults
    double vReset = -1.0e-7;
    double initVm = 0.0;
    double tau = 1.0;             // MOOSE's default
    double thresh = 0.0;          // MOOSE's default (the sweep reads the Element's copy: Ring)
    EdgeArray<Synapse> synapses;  // lent to the Sparse messages that fill it, in their order
    EdgeArray<CompactSynapse> compactSynapses;  // the same, in 8 bytes an entry
    Far far;
  };

 public:
  /// What each neuron's constructor allocates (its Cold block): Dinfo::footprint.
  static constexpr std::size_t kOwnedBytes = sizeof(Cold);

 private:
  static Cold* makeCold();
  static void freeCold(Cold* c);
  Cold* cold() const { return reinterpret_cast<Cold*>(tagged_ & ~kTags); }
  bool hasFar() const { return tagged_ & kHasFar; }
  void setFlag(std::uintptr_t f, bool on) { tagged_ = on ? (tagged_ | f) : (tagged_ & ~f); }
  EdgeArray<Synapse>& synapses() { return cold()->synapses; }
  EdgeArray<CompactSynapse>& compactSynapses() { return cold()->compactSynapses; }
  double lastSpike() const { return cold()->lastSpike; }
  double refractoryPeriod() const { return cold()->refractoryPeriod; }
  void setRefractoryPeriod(double v) { cold()->refractoryPeriod = v; }
  double vReset() const { return cold()->vReset; }
  void setVReset(double v) { cold()->vReset = v; }
  double initVm() const { return cold()->initVm; }
  void setInitVm(double v) { cold()->initVm = v; }

  // A quarter of a cache line: what every step reads and writes. Events do not touch it (they go
  // to the Element's queues), thresh and the decay are the Element's (Ring: one value each where
  // the node's neurons share them, the usual case, else an array each), and the rest is behind
  // the pointer, whose low bits (Cold is 64-byte aligned) hold two flags.
  static constexpr std::uintptr_t kSpiked = 1, kHasFar = 2, kTags = 63;
  double Vm_ = 0.0;
  std::uintptr_t tagged_ = reinterpret_cast<std::uintptr_t>(makeCold());  // Cold* | flags
};

}  // namespace antler
#pragma GCC visibility pop
