#include "models/spike_stats.hpp"

#include <cmath>
#include <limits>

namespace antler {

void SpikeStats::process(const Eref& e, ProcPtr p) {
  dt_ = p->dt;
  if (e.element()->hasConns(reduce.bindIndex())) {
    reduce.send(e);
    return;
  }
  // MOOSE's: this step's spikes as a rate, into the running statistics.
  rate_ = spikes_ / p->dt;
  count_ = spikes_;
  spikes_ = 0;
  run_.input(rate_);
  num_ = static_cast<unsigned>(run_.num);
}

void SpikeStats::reinit(const Eref& e, ProcPtr p) {
  run_.reinit();
  spikes_ = 0;
  fired_ = false;
  count_ = num_ = 0;
  rate_ = 0.0;
  dt_ = p->dt;
  if (e.element()->hasConns(reduce.bindIndex())) reduce.send(e);
}

void SpikeStats::Vm(double v) {
  if (!fired_ && v > threshold_) {
    fired_ = true;
    ++spikes_;
  } else if (fired_ && v < threshold_) {
    fired_ = false;
  }
}

void SpikeStats::digest(const Eref&, const ReduceSum<double>* r) {
  count_ = static_cast<unsigned>(std::llround(r->value()));
  num_ = static_cast<unsigned>(r->count());
  rate_ = num_ ? count_ / (num_ * dt_) : std::numeric_limits<double>::quiet_NaN();
}

const Cinfo* SpikeStats::initCinfo() {
  static const Cinfo* c = [] {
    ClassBuilder<SpikeStats> b("SpikeStats", "firing rate of a population");
    return add_window_fields(b, "steps")
        .readOnly("count", &SpikeStats::count_, "spikes in the last step")
        .readOnly("num", &SpikeStats::num_, "number of neurons reduced")
        .readOnly("rate", &SpikeStats::rate_,
                  "count / (num * dt) in Hz (NaN if num is 0); MOOSE's way: count / dt")
        .readOnly("mean", &SpikeStats::mean, "MOOSE's: mean rate since reinit (Hz)")
        .readOnly("sdev", &SpikeStats::sdev, "MOOSE's: its population standard deviation")
        .readOnly("sum", &SpikeStats::sum, "MOOSE's: sum of the rates")
        .value("threshold", &SpikeStats::threshold_, "MOOSE's: a Vm above it is a spike")
        .dest<&SpikeStats::addSpike>("addSpike", "MOOSE's: one spike (from any source)")
        .dest<&SpikeStats::Vm>("Vm", "MOOSE's: a membrane potential to watch for spikes")
        .reduce(SpikeStats::reduce)
        .proc<&SpikeStats::process, &SpikeStats::reinit>()
        .defaultTick(7)  // MOOSE's default tick for SpikeStats
        .build();
  }();
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* registered = SpikeStats::initCinfo();
}

}  // namespace antler
