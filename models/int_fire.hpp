#pragma once
/// IntFire: a leaky integrate-and-fire neuron with an array of synapses (MOOSE's IntFire).
///
/// Each step, with currTime the time at the end of the step:
///   1. the synaptic events due in this step (see below) add their weights to Vm;
///   2. if Vm > thresh and currTime - lastSpike >= refractoryPeriod (within the slack of
///      models/step_time.hpp): the neuron sends spikeOut(currTime), resets Vm to vReset (0 by
///      default; MOOSE resets too), sets lastSpike = currTime and spiked = 1;
///      otherwise Vm decays, Vm *= 1 - dt / tau, and spiked = 0.
/// reinit sets Vm = initVm (0 by default), drops every pending event, lastSpike = -infinity and
/// spiked = 0.
///
/// Events arrive through the `synapse` field element (Synapse::addSpike schedules the synapse's
/// weight, as it is when the spike arrives, at spike time + delay). An event at time t is due in
/// the first step whose end, plus the slack, is not before t: delays round up to whole steps.
///
/// Pending events wait in a ring of delay slots, one slot per future step: the slot of the step
/// n steps ahead holds the sum of the weights due then (and how many there are). Scheduling an
/// event adds its weight to one slot; a step reads one slot, and only when it holds events (a bit
/// mask in the neuron says which of the next 64 slots do). The ring has as many slots as the
/// largest synaptic delay in steps, plus one (sized at reinit from the synapses), and grows,
/// keeping every event in flight at its step, when an event falls further ahead (a delay set
/// after reinit, or a spike sent straight to addSpike). Events further than kMaxSlots steps ahead,
/// or sent before the neuron knows its dt (before any reinit), wait in a side list until they fit.
///
/// Order: a step's weights are summed in the order they arrive, then the sum is added to Vm. Sends
/// are delivered in the serial order (by source Element, then source global index: see
/// msg/post_office.hpp), one step after another, so the order of the additions into a slot, and
/// so the bits of Vm, are the same for any threads x nodes split. (Before the ring, each weight
/// was added to Vm on its own, in (time, weight) order: Vm then differed from today's in its last
/// bits when two or more events fell due in one step; a step with one event gives the same bits.)
/// `spiked` is a double so that a Reduce message (e.g. from SpikeStats) can sum it into a
/// population spike count.
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "core/class_builder.hpp"
#include "core/prefetch.hpp"
#include "models/step_time.hpp"
#include "models/synapse.hpp"
#include "msg/src_finfo.hpp"

namespace antler {

class alignas(64) IntFire {
 public:
  /// Sends the spike time (the end of the step it fired in).
  inline static SrcFinfo<double> spikeOut{"spikeOut", "sends the spike time when the neuron fires"};
  IntFire() = default;
  IntFire(const IntFire& o);
  IntFire& operator=(const IntFire& o);
  ~IntFire() { freeBlock(cold_, slots_); }
  /// Adds the step's events, fires or decays (see the header comment).
  void process(const Eref& e, ProcPtr p);
  /// Vm = initVm, no pending events, lastSpike = -infinity, spiked = 0; sizes the event ring.
  void reinit(const Eref& e, ProcPtr p);
  /// Schedules `weight` to be added to Vm at `time` (what Synapse::addSpike calls).
  void addEvent(double time, double weight) { place(time, weight, 1); }
  /// Fetches the ring slot an event at `time` would go to (a hint: changes nothing).
  void prefetchEvent(double time) const {
    // The step by one division (due_step's exact search can be one off; a hint needs no more).
    const double n = std::ceil(time / dt_) - static_cast<double>(step_ + 1);
    if (!(n >= 0 && n < static_cast<double>(slots_))) return;  // also dt_ == 0, NaN
    std::size_t i = head_ + static_cast<std::size_t>(n);
    if (i >= slots_) i -= slots_;
    prefetch(&ring()[i]);
  }
  /// Fetches the slot process will read, if it holds events (ProcFinfoT calls it ahead).
  void prefetchProcess() const {
    if (due_ & 1) prefetch(&ring()[head_]);
  }
  /// Number of synaptic events not yet added to Vm (counted over the ring: a getter, not kept).
  unsigned numPending() const;
  /// 1 if the neuron fired in the last step, else 0 (a double, for Reduce messages that sum it).
  double spiked() const { return spiked_ ? 1.0 : 0.0; }
  /// Membrane time constant.
  double tau() const { return cold_->tau; }
  /// Sets tau (must be positive: ValueError otherwise).
  void setTau(double tau);
  /// Slots in the event ring (for tests: the ring grows when it must).
  unsigned numSlots() const { return slots_; }
  /// The class info of IntFire (registered at load time).
  static const Cinfo* initCinfo();

  /// The most slots a ring may have (6.5 s at dt = 0.1 ms); events further ahead wait aside.
  static constexpr std::uint64_t kMaxSlots = 1u << 16;

 private:
  struct Slot {
    double sum = 0.0;    // weights due in the slot's step, summed in arrival order
    unsigned count = 0;  // how many
  };
  struct Event {  // an event waiting aside (see Far)
    double time, weight;
    unsigned count;
  };
  struct Far {  // events not in the ring (too far ahead, or dt not known yet)
    std::vector<Event> events;
    std::uint64_t next = 0;  // the first step at which one of them may fit the ring
  };
  /// Adds `count` events of total `weight` at `time` to the slot of their step.
  void place(double time, double weight, unsigned count) {
    if (dt_ > 0) {
      const std::uint64_t step = step_;
      const std::uint64_t n = detail::due_step(time, dt_, step, step + 1 + kMaxSlots);
      if (n <= step + kMaxSlots) {
        const std::size_t ahead = n - step - 1;
        if (ahead >= slots_) grow(ahead + 1);
        std::size_t i = head_ + ahead;
        if (i >= slots_) i -= slots_;
        Slot& slot = ring()[i];
        slot.sum += weight;
        slot.count += count;
        if (ahead < 64) due_ |= std::uint64_t{1} << ahead;
        return;
      }
    }
    putAside(time, weight, count);
  }
  /// Sends the spike and resets (out of line: keeps the step's common path short).
  [[gnu::noinline]] void fire(const Eref& e, ProcPtr p);
  void grow(std::size_t slots);
  void resetRing(std::size_t slots);
  void putAside(double time, double weight, unsigned count);
  void placeAside();
  void retime(ProcPtr p);

  /// What a spike, reinit, the fields and the synapses use, with the event ring right after it
  /// in one allocation (so the object needs one pointer for both).
  struct Cold {
    double lastSpike = -std::numeric_limits<double>::infinity();
    double refractoryPeriod = 0.0;
    double vReset = 0.0;
    double initVm = 0.0;
    double tau = 1.0;  // MOOSE's default
    EdgeArray<Synapse> synapses;  // lent to the Sparse messages that fill it, in their order
    Far far;
  };
  static_assert(alignof(Cold) >= alignof(Slot));
  Slot* ring() const { return reinterpret_cast<Slot*>(cold_ + 1); }
  /// A new block with `slots` empty slots; the cold part moved from `from` (if any).
  static Cold* makeBlock(std::size_t slots, Cold* from);
  static void freeBlock(Cold* c, std::size_t slots);
  EdgeArray<Synapse>& synapses() { return cold_->synapses; }
  double lastSpike() const { return cold_->lastSpike; }
  double refractoryPeriod() const { return cold_->refractoryPeriod; }
  void setRefractoryPeriod(double v) { cold_->refractoryPeriod = v; }
  double vReset() const { return cold_->vReset; }
  void setVReset(double v) { cold_->vReset = v; }
  double initVm() const { return cold_->initVm; }
  void setInitVm(double v) { cold_->initVm = v; }

  // One cache line (the class is aligned to it): what every step and every event read. A step
  // without a spike reads nothing else but the due slot of the ring, when it holds events.
  double Vm_ = 0.0;
  // Bit j set: the slot j steps after head_'s holds events (j < 64). A step without events then
  // costs no read of the ring, which lives elsewhere in memory.
  std::uint64_t due_ = 0;
  double dt_ = 0.0;               // the step length the ring counts in (0: not known yet)
  std::uint64_t step_ : 62 = 0;   // the last step processed (0 after reinit)
  std::uint64_t spiked_ : 1 = 0;  // fired in the last step
  std::uint64_t hasFar_ : 1 = 0;  // cold_->far holds events
  Cold* cold_ = makeBlock(1, nullptr);  // ring()[head_] is due in step step_ + 1
  std::uint32_t slots_ = 1;
  std::uint32_t head_ = 0;
  double thresh_ = 0.0;  // MOOSE's default
  // 1 - dt / tau, the decay of a step without a spike: computed when dt or tau changes (the
  // same expression, so the same bits), not divided out per neuron per step.
  double decay_ = 1.0;
};

}  // namespace antler
