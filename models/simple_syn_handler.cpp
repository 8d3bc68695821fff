#include "models/simple_syn_handler.hpp"

#include <algorithm>

#include "models/step_time.hpp"

namespace antler {

void SimpleSynHandler::addEvent(double time, double weight) {
  heap_.push_back({time, weight, seq_++});
  std::push_heap(heap_.begin(), heap_.end(), later);
}

void SimpleSynHandler::process(const Eref& e, ProcPtr p) {
  if (heap_.empty()) return;
  const double due = p->currTime + detail::step_slack(p->dt);
  double activation = 0.0;
  while (!heap_.empty() && heap_.front().time <= due) {
    activation += heap_.front().weight / p->dt;
    std::pop_heap(heap_.begin(), heap_.end(), later);
    heap_.pop_back();
  }
  if (heap_.empty()) seq_ = 0;
  if (activation != 0.0) activationOut.send(e, activation);
}

void SimpleSynHandler::reinit(const Eref&, ProcPtr) {
  heap_.clear();
  seq_ = 0;
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
