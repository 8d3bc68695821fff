#include "models/simple_syn_handler.hpp"

#include <algorithm>

#include "models/step_time.hpp"

namespace antler {

void SimpleSynHandler::addEvent(double time, double weight) {
  const std::size_t R = ring_.size();
  if (R && dt_ > 0) [[likely]] {
    const std::uint64_t due = detail::due_step(time, dt_, invDt_, last_, last_ + 1 + R);
    if (due - last_ - 1 < R) {
      Slot& s = ring_[due % R];
      s.sum += weight;
      ++s.count;
      return;
    }
  }
  heap_.push_back({time, weight, seq_++});
  std::push_heap(heap_.begin(), heap_.end(), later);
}

void SimpleSynHandler::process(const Eref& e, ProcPtr p) {
  const long long k = std::llround(p->currTime / p->dt);
  const std::uint64_t step = k > 0 ? static_cast<std::uint64_t>(k) : 0;
  if (p->dt != dt_ && !ring_.empty()) [[unlikely]] {
    // The tick's dt changed since reinit: the ring's events wait in the heap, at the times of
    // their steps, until the next reinit sizes a ring for the new dt.
    const std::size_t R = ring_.size();
    for (std::uint64_t s = last_ + 1; s <= last_ + R; ++s) {
      Slot& x = ring_[s % R];
      if (x.count) {
        heap_.push_back({static_cast<double>(s) * dt_, x.sum, seq_++});
        std::push_heap(heap_.begin(), heap_.end(), later);
      }
    }
    ring_.clear();
  }
  double sum = 0.0;
  unsigned count = 0;
  if (!ring_.empty()) [[likely]] {
    Slot& s = ring_[step % ring_.size()];
    sum = s.sum;
    count = s.count;
    s = Slot{};
  }
  last_ = step;
  if (!heap_.empty()) [[unlikely]] {
    const double due = p->currTime + detail::step_slack(p->dt);
    while (!heap_.empty() && heap_.front().time <= due) {
      sum += heap_.front().weight;
      ++count;
      std::pop_heap(heap_.begin(), heap_.end(), later);
      heap_.pop_back();
    }
    if (heap_.empty()) seq_ = 0;
  }
  if (count && sum != 0.0) activationOut.send(e, sum / p->dt);
}

void SimpleSynHandler::reinit(const Eref&, ProcPtr p) {
  heap_.clear();
  seq_ = 0;
  last_ = 0;
  dt_ = p->dt;
  invDt_ = dt_ > 0 ? 1.0 / dt_ : 0.0;
  // Slots for the longest delay, plus the step a spike may arrive in before it counts.
  double longest = 0.0;
  for (std::size_t j = 0; j < synapses_.size(); ++j)
    longest = std::max(longest, synapses_[j].delay());
  const std::uint64_t steps =
      dt_ > 0 ? detail::due_step(longest, dt_, invDt_, 0, kMaxSlots) + 2 : 0;
  ring_.assign(synapses_.size() ? static_cast<std::size_t>(std::min(steps, kMaxSlots)) : 0, Slot{});
}

unsigned SimpleSynHandler::numPending() const {
  unsigned n = static_cast<unsigned>(heap_.size());
  for (const Slot& s : ring_) n += s.count;
  return n;
}

const Cinfo* SimpleSynHandler::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<SimpleSynHandler>(
          "SimpleSynHandler",
          "holds synapses and sends the weights of the spikes due each step to a cell's "
          "activation (MOOSE's synapse layout since 2014)")
          .fieldElement("synapse", &SimpleSynHandler::synapses_, "the synapses (entries: Synapse)",
                        "numSynapses")
          .readOnly("numPending", &SimpleSynHandler::numPending, "events queued, not yet sent")
          .src(SimpleSynHandler::activationOut)
          .proc<&SimpleSynHandler::process, &SimpleSynHandler::reinit>()
          .defaultTick(1)  // MOOSE's default tick for SimpleSynHandler
          .build();
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* registered = SimpleSynHandler::initCinfo();
}

}  // namespace antler
