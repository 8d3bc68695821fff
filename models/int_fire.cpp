#include "models/int_fire.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <new>
#include <string>

#include "core/huge_pages.hpp"
#include "models/step_time.hpp"

namespace antler {

IntFire::Cold* IntFire::makeBlock(std::size_t slots, Cold* from) {
  // sizeof(Cold) is a multiple of alignof(Cold) >= alignof(Slot): the ring starts aligned.
  // From the pool: every neuron's block sits in a few huge pages, not scattered over the heap.
  void* raw = SmallBlockPool::instance().allocate(sizeof(Cold) + slots * sizeof(Slot));
  Cold* c = from ? new (raw) Cold(std::move(*from)) : new (raw) Cold();
  std::uninitialized_value_construct_n(reinterpret_cast<Slot*>(c + 1), slots);
  return c;
}

void IntFire::freeBlock(Cold* c, std::size_t slots) {
  if (!c) return;
  c->~Cold();  // Slot is trivially destructible
  SmallBlockPool::instance().deallocate(c, sizeof(Cold) + slots * sizeof(Slot));
}

IntFire::IntFire(const IntFire& o) { *this = o; }

IntFire& IntFire::operator=(const IntFire& o) {
  if (this == &o) return *this;
  Cold* c = makeBlock(o.slots_, nullptr);
  try {
    *c = *o.cold_;
  } catch (...) {
    freeBlock(c, o.slots_);
    throw;
  }
  std::copy(o.ring(), o.ring() + o.slots_, reinterpret_cast<Slot*>(c + 1));
  freeBlock(cold_, slots_);
  cold_ = c;
  Vm_ = o.Vm_;
  due_ = o.due_;
  dt_ = o.dt_;
  step_ = o.step_;
  spiked_ = o.spiked_;
  hasFar_ = o.hasFar_;
  slots_ = o.slots_;
  head_ = o.head_;
  thresh_ = o.thresh_;
  decay_ = o.decay_;
  return *this;
}

void IntFire::process(const Eref& e, ProcPtr p) {
  if (p->dt != dt_) [[unlikely]]
    retime(p);
  if (hasFar_ && step_ >= cold_->far.next) [[unlikely]]
    placeAside();
  // The slot of this step: its weights, summed as they arrived (see the header comment). A step
  // without events leaves Vm and the slot untouched.
  if (due_ & 1) {
    Slot& due = ring()[head_];
    Vm_ += due.sum;
    due = Slot{};
  }
  due_ >>= 1;
  if (++head_ == slots_) head_ = 0;
  ++step_;
  if (slots_ > 64) [[unlikely]] {  // the slot now 63 steps ahead enters the mask
    std::size_t i = head_ + 63;
    if (i >= slots_) i -= slots_;
    if (ring()[i].count) due_ |= std::uint64_t{1} << 63;
  }
  // Vm > thresh first: lastSpike and refractoryPeriod are on the second line.
  if (Vm_ > thresh_ && p->currTime - cold_->lastSpike + detail::step_slack(p->dt) >=
                           cold_->refractoryPeriod) [[unlikely]] {
    fire(e, p);
  } else {
    Vm_ *= decay_;  // == 1.0 - p->dt / tau: dt_ == p->dt here
    spiked_ = 0;
  }
}

void IntFire::fire(const Eref& e, ProcPtr p) {
  spikeOut.send(e, p->currTime);
  Vm_ = cold_->vReset;
  cold_->lastSpike = p->currTime;
  spiked_ = 1;
}

unsigned IntFire::numPending() const {
  unsigned n = 0;
  for (std::uint32_t j = 0; j < slots_; ++j) n += ring()[j].count;
  for (const Event& ev : cold_->far.events) n += ev.count;
  return n;
}

void IntFire::reinit(const Eref&, ProcPtr p) {
  Vm_ = cold_->initVm;
  cold_->lastSpike = -std::numeric_limits<double>::infinity();
  spiked_ = 0;
  dt_ = p->dt;
  decay_ = 1.0 - dt_ / cold_->tau;
  step_ = 0;
  cold_->far = Far{};
  hasFar_ = 0;
  // One slot per step of the longest delay, plus one: a spike sent in step s before this neuron
  // ran step s lands up to that many steps past step_.
  std::size_t slots = 1;
  if (dt_ > 0) {
    double longest = 0.0;
    const EdgeArray<Synapse>& syn = cold_->synapses;
    for (std::size_t i = 0; i < syn.size(); ++i) longest = std::max(longest, syn[i].delay());
    const std::uint64_t n = detail::due_step(longest, dt_, 0, kMaxSlots);
    slots = static_cast<std::size_t>(std::min<std::uint64_t>(n + 1, kMaxSlots));
  }
  resetRing(slots);
}

void IntFire::resetRing(std::size_t slots) {
  if (slots != slots_) {
    Cold* c = makeBlock(slots, cold_);
    freeBlock(cold_, slots_);
    cold_ = c;
    slots_ = static_cast<std::uint32_t>(slots);
  } else {
    std::fill(ring(), ring() + slots_, Slot{});
  }
  head_ = 0;
  due_ = 0;
}

void IntFire::grow(std::size_t slots) {
  // Unroll the ring into a longer one: slot j of the new ring is due j steps after head_'s.
  Cold* c = makeBlock(slots, cold_);
  Slot* r = reinterpret_cast<Slot*>(c + 1);
  for (std::uint32_t j = 0; j < slots_; ++j) r[j] = ring()[(head_ + j) % slots_];
  freeBlock(cold_, slots_);
  cold_ = c;
  slots_ = static_cast<std::uint32_t>(slots);
  head_ = 0;
}

void IntFire::putAside(double time, double weight, unsigned count) {
  // It may fit the ring once `time` is within kMaxSlots steps (never, for NaN or +infinity; at
  // the next process if dt is not known yet).
  std::uint64_t at = 0;
  if (dt_ > 0) {
    const double s = std::floor(time / dt_) - static_cast<double>(kMaxSlots) - 2.0;
    at = std::isnan(s) || s >= 1.8e19 ? std::numeric_limits<std::uint64_t>::max()
         : s > 0                      ? static_cast<std::uint64_t>(s)
                                      : 0;
  }
  Far& far = cold_->far;
  far.next = far.events.empty() ? at : std::min(far.next, at);
  far.events.push_back({time, weight, count});
  hasFar_ = 1;
}

void IntFire::placeAside() {
  std::vector<Event> aside;
  aside.swap(cold_->far.events);
  hasFar_ = 0;
  for (const Event& ev : aside) place(ev.time, ev.weight, ev.count);
}

void IntFire::retime(ProcPtr p) {
  // The step length changed (a first process without reinit, or setClock between runs without
  // reinit): re-place what is pending by the time of its step under the old step length.
  std::vector<Event> pending;
  pending.swap(cold_->far.events);
  hasFar_ = 0;
  if (dt_ > 0)
    for (std::uint32_t j = 0; j < slots_; ++j) {
      const Slot& s = ring()[(head_ + j) % slots_];
      if (s.count)
        pending.push_back({static_cast<double>(step_ + 1 + j) * dt_, s.sum, s.count});
    }
  dt_ = p->dt;
  decay_ = 1.0 - dt_ / cold_->tau;
  const long long n = std::llround(p->currTime / p->dt);
  step_ = n > 1 ? static_cast<std::uint64_t>(n) - 1 : 0;
  resetRing(slots_);
  for (const Event& ev : pending) place(ev.time, ev.weight, ev.count);
}

void IntFire::setTau(double tau) {
  if (!(tau > 0) || !std::isfinite(tau))
    throw ValueError("IntFire.tau must be a positive finite number, got " + std::to_string(tau));
  cold_->tau = tau;
  decay_ = 1.0 - dt_ / tau;
}

const Cinfo* IntFire::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<IntFire>("IntFire", "leaky integrate-and-fire neuron with a synapse array")
          .value("Vm", &IntFire::Vm_, "membrane potential")
          .value("thresh", &IntFire::thresh_, "firing threshold: fires when Vm > thresh")
          .value("tau", &IntFire::tau, &IntFire::setTau, "membrane time constant (> 0)")
          .value("refractoryPeriod", &IntFire::refractoryPeriod, &IntFire::setRefractoryPeriod,
                 "minimum time between two spikes")
          .value("vReset", &IntFire::vReset, &IntFire::setVReset, "Vm after a spike (default 0)")
          .value("initVm", &IntFire::initVm, &IntFire::setInitVm, "Vm set by reinit (default 0)")
          .readOnly("lastSpike", &IntFire::lastSpike,
                    "time of the last spike (-inf before the first)")
          .readOnly("spiked", &IntFire::spiked, "1 if the neuron fired in the last step, else 0")
          .readOnly("numPending", &IntFire::numPending, "synaptic events not yet added to Vm")
          .fieldElement("synapse", &IntFire::synapses, "the synapses (entries: Synapse)",
                        "numSynapses")
          .src(IntFire::spikeOut)
          .proc<&IntFire::process, &IntFire::reinit>()
          .build();
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* registered = IntFire::initCinfo();
}

}  // namespace antler

static_assert(sizeof(antler::IntFire) == 64, "IntFire is meant to fill one cache line");
