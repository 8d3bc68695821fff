#include "models/rand_spike.hpp"

#include <cmath>

#include "core/context.hpp"
#include "core/random.hpp"
#include "models/step_time.hpp"

namespace antler {

namespace {
/// FNV-1a: a hash of the element path that is the same on every node and in every build.
std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}
}  // namespace

void RandSpike::keyStream(const Eref& e) {
  // The path (not the Id, which changes when a model is rebuilt) keeps two RandSpike elements on
  // different streams and a rebuilt model on the same ones.
  stream_ = mix64(mix64(fnv1a(e.element()->path())) + e.dataIndex());
  keyed_ = true;
}

void RandSpike::process(const Eref& e, ProcPtr p) {
  processBlock(static_cast<const DataElement*>(e.element()), e.dataIndex(), this, 1, p);
}

void RandSpike::processBlock(const DataElement* e, Index lo, RandSpike* objs, Index n, ProcPtr p) {
  const auto step = static_cast<std::uint64_t>(std::llround(p->currTime / p->dt));
  const std::uint64_t seed = e->context().seed();
  const double slack = detail::step_slack(p->dt);
  for (Index i = 0; i < n; ++i) objs[i].step(Eref(e, lo + i), p, step, seed, slack);
}

void RandSpike::step(const Eref& e, ProcPtr p, std::uint64_t step, std::uint64_t seed,
                     double slack) {
  // Cleared only where set: a step that stores nothing leaves the object's cache line clean, so
  // the sweep reads the objects without writing them all back.
  if (fired_) [[unlikely]]
    fired_ = false;
  if (rate_ <= 0.0) return;
  if (p->currTime - lastEvent_ + slack < refractT_) return;
  if (!keyed_) keyStream(e);
  const double prob = probability(p->dt);
  Rng rng(seed, stream_ + step);
  if (prob >= 1.0 || rng.uniform() < prob) {
    spikeOut.send(e, p->currTime);
    lastEvent_ = p->currTime;
    fired_ = true;
  }
}

void RandSpike::reinit(const Eref& e, ProcPtr) {
  lastEvent_ = -refractT_;
  fired_ = false;
  keyStream(e);
}

const Cinfo* RandSpike::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<RandSpike>("RandSpike", "Poisson spike source")
          .value("rate", &RandSpike::rate_, "mean firing rate (Hz)")
          .value("refractT", &RandSpike::refractT_, "minimum time between two spikes")
          .readOnly("hasFired", &RandSpike::fired_, "true if it fired in the last step")
          .readOnly("lastEvent", &RandSpike::lastEvent_, "time of the last spike")
          .src(RandSpike::spikeOut)
          .proc<&RandSpike::process, &RandSpike::reinit>()
          .defaultTick(1)  // MOOSE's default tick for RandSpike
          .build();
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* registered = RandSpike::initCinfo();
}

}  // namespace antler
