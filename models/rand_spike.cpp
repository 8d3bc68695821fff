#include "models/rand_spike.hpp"

#include <algorithm>
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

static_assert(sizeof(RandSpike) == 40, "a step reads every object: keep it small");

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
  const double t = p->currTime;
  // The probability of the last (rate, refractT) seen: a population shares them, so the sweep
  // computes it once for each run of neighbouring objects with the same values (the same
  // expression each time, so the same bits as per object).
  double probRate = -1.0, probRefractT = 0.0, prob = 0.0;  // (no object draws at rate -1)
  // Each object's draw is the first number of its stream (seed, stream + step). Where the CPU
  // draws eight streams at once (first_draws_vectorised: ~0.4 ns a draw against ~3 one at a
  // time), a chunk's draws are made up front, for every object, and those of the objects that do
  // not draw this step (rate <= 0, refractory, probability >= 1) are thrown away; elsewhere only
  // the objects that draw do.
  constexpr Index kChunk = 256;
  std::uint64_t draws[kChunk];
  const bool batch = first_draws_vectorised();
  for (Index c = 0; c < n; c += kChunk) {
    const Index m = std::min(kChunk, n - c);
    RandSpike* const chunk = objs + c;
    if (batch) {
      for (Index i = 0; i < m; ++i) draws[i] = chunk[i].stream_ + step;
      first_draws(seed, draws, draws, m);
    }
    for (Index i = 0; i < m; ++i) {
      RandSpike& o = chunk[i];
      // Cleared only where set: a step that stores nothing leaves the object's cache line
      // clean, so the sweep reads the objects without writing them all back.
      if (o.fired_) [[unlikely]]
        o.fired_ = false;
      if (o.rate_ <= 0.0) continue;
      if (t - o.lastEvent_ + slack < o.refractT_) continue;
      if (o.rate_ != probRate || o.refractT_ != probRefractT) [[unlikely]] {
        prob = probability(o.rate_, o.refractT_, p->dt);
        probRate = o.rate_, probRefractT = o.refractT_;
      }
      std::uint64_t bits;
      if (!o.keyed_) [[unlikely]] {
        o.keyStream(Eref(e, lo + c + i));
        bits = Rng(seed, o.stream_ + step).next();
      } else {
        bits = batch ? draws[i] : Rng(seed, o.stream_ + step).next();
      }
      if (prob >= 1.0 || Rng::toUniform(bits) < prob) [[unlikely]] {
        spikeOut.send(Eref(e, lo + c + i), t);
        o.lastEvent_ = t;
        o.fired_ = true;
      }
    }
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
