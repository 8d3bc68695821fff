#include "models/int_fire.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "models/step_time.hpp"

namespace antler {

void IntFire::process(const Eref& e, ProcPtr p) {
  if (p->dt != dt_) [[unlikely]]
    retime(p);
  if (!far_.empty() && step_ >= farNext_) [[unlikely]]
    placeAside();
  // The slot of this step: its weights, summed as they arrived (see the header comment). A step
  // without events leaves Vm and the slot untouched.
  if (due_ & 1) {
    Slot& due = ring_[head_];
    Vm_ += due.sum;
    numPending_ -= due.count;
    due = Slot{};
  }
  due_ >>= 1;
  if (++head_ == ring_.size()) head_ = 0;
  ++step_;
  if (ring_.size() > 64) [[unlikely]] {  // the slot now 63 steps ahead enters the mask
    std::size_t i = head_ + 63;
    if (i >= ring_.size()) i -= ring_.size();
    if (ring_[i].count) due_ |= std::uint64_t{1} << 63;
  }
  const double slack = detail::step_slack(p->dt);
  if (Vm_ > thresh_ && p->currTime - lastSpike_ + slack >= refractoryPeriod_) {
    fire(e, p);
  } else {
    Vm_ *= 1.0 - p->dt / tau_;
    spiked_ = 0.0;
  }
}

void IntFire::fire(const Eref& e, ProcPtr p) {
  spikeOut.send(e, p->currTime);
  Vm_ = vReset_;
  lastSpike_ = p->currTime;
  spiked_ = 1.0;
}

void IntFire::reinit(const Eref&, ProcPtr p) {
  Vm_ = initVm_;
  lastSpike_ = -std::numeric_limits<double>::infinity();
  spiked_ = 0.0;
  dt_ = p->dt;
  step_ = 0;
  head_ = 0;
  due_ = 0;
  numPending_ = 0;
  far_.clear();
  // One slot per step of the longest delay, plus one: a spike sent in step s before this neuron
  // ran step s lands up to that many steps past step_.
  std::size_t slots = 1;
  if (dt_ > 0) {
    double longest = 0.0;
    for (std::size_t i = 0; i < synapses_.size(); ++i)
      longest = std::max(longest, synapses_[i].delay());
    const std::uint64_t n = detail::due_step(longest, dt_, 0, kMaxSlots);
    slots = static_cast<std::size_t>(std::min<std::uint64_t>(n + 1, kMaxSlots));
  }
  ring_.assign(slots, Slot{});
}

void IntFire::grow(std::size_t slots) {
  // Unroll the ring into a longer one: slot j of the new ring is due j steps after head_'s.
  std::vector<Slot> r(slots);
  const std::size_t n = ring_.size();
  for (std::size_t j = 0; j < n; ++j) r[j] = ring_[(head_ + j) % n];
  ring_.swap(r);
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
  farNext_ = far_.empty() ? at : std::min(farNext_, at);
  far_.push_back({time, weight, count});
  numPending_ += count;
}

void IntFire::placeAside() {
  std::vector<Event> aside;
  aside.swap(far_);
  for (const Event& ev : aside) {
    numPending_ -= ev.count;
    place(ev.time, ev.weight, ev.count);
  }
}

void IntFire::retime(ProcPtr p) {
  // The step length changed (a first process without reinit, or setClock between runs without
  // reinit): re-place what is pending by the time of its step under the old step length.
  std::vector<Event> pending;
  pending.swap(far_);
  if (dt_ > 0)
    for (std::size_t j = 0; j < ring_.size(); ++j) {
      const Slot& s = ring_[(head_ + j) % ring_.size()];
      if (s.count)
        pending.push_back({static_cast<double>(step_ + 1 + j) * dt_, s.sum, s.count});
    }
  dt_ = p->dt;
  const long long n = std::llround(p->currTime / p->dt);
  step_ = n > 1 ? static_cast<std::uint64_t>(n) - 1 : 0;
  head_ = 0;
  due_ = 0;
  std::fill(ring_.begin(), ring_.end(), Slot{});
  numPending_ = 0;
  for (const Event& ev : pending) place(ev.time, ev.weight, ev.count);
}

void IntFire::setTau(double tau) {
  if (!(tau > 0) || !std::isfinite(tau))
    throw ValueError("IntFire.tau must be a positive finite number, got " + std::to_string(tau));
  tau_ = tau;
}

const Cinfo* IntFire::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<IntFire>("IntFire", "leaky integrate-and-fire neuron with a synapse array")
          .value("Vm", &IntFire::Vm_, "membrane potential")
          .value("thresh", &IntFire::thresh_, "firing threshold: fires when Vm > thresh")
          .value("tau", &IntFire::tau, &IntFire::setTau, "membrane time constant (> 0)")
          .value("refractoryPeriod", &IntFire::refractoryPeriod_, "minimum time between two spikes")
          .value("vReset", &IntFire::vReset_, "Vm after a spike (default 0)")
          .value("initVm", &IntFire::initVm_, "Vm set by reinit (default 0)")
          .readOnly("lastSpike", &IntFire::lastSpike_,
                    "time of the last spike (-inf before the first)")
          .readOnly("spiked", &IntFire::spiked_, "1 if the neuron fired in the last step, else 0")
          .readOnly("numPending", &IntFire::numPending, "synaptic events not yet added to Vm")
          .fieldElement("synapse", &IntFire::synapses_, "the synapses (entries: Synapse)",
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
