#include "models/spike_stats.hpp"

#include <cmath>
#include <limits>

namespace antler {

void SpikeStats::process(const Eref& e, ProcPtr p) {
  dt_ = p->dt;
  reduce.send(e);
}

void SpikeStats::digest(const Eref&, const ReduceSum<double>* r) {
  count_ = static_cast<unsigned>(std::llround(r->value()));
  num_ = static_cast<unsigned>(r->count());
  rate_ = num_ ? count_ / (num_ * dt_) : std::numeric_limits<double>::quiet_NaN();
}

const Cinfo* SpikeStats::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<SpikeStats>("SpikeStats", "firing rate of a population")
          .readOnly("count", &SpikeStats::count_, "spikes in the last step")
          .readOnly("num", &SpikeStats::num_, "number of neurons reduced")
          .readOnly("rate", &SpikeStats::rate_, "count / (num * dt) in Hz (NaN if num is 0)")
          .reduce(SpikeStats::reduce)
          .proc<&SpikeStats::process, &SpikeStats::reinit>()
          .defaultTick(7)  // MOOSE's default tick for SpikeStats
          .build();
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* registered = SpikeStats::initCinfo();
}

}  // namespace antler
