#include "tests/support/test_classes.hpp"

#include "shell/shell.hpp"
#include "shell/simulation.hpp"

namespace antler::test {

const Cinfo* Adder::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<Adder>("TestAdder", "test element: sends and folds values")
          .value("x", &Adder::x_, "value sent each step")
          .readOnly("sum", &Adder::sum_, "fold of what was received")
          .readOnly("count", &Adder::count_, "values received")
          .readOnly("text", &Adder::text_, "strings received")
          .readOnly("doubled", &Adder::getDoubled, "2 x")
          .readOnlyFn<bool>(
              "positive", [](const Adder& a) { return a.x_ > 0; }, "x > 0 (a bool getter)")
          .lookup("weight", &Adder::weightOf, &Adder::setWeightOf, "a lookup field")
          .dest<&Adder::add>("add", "folds a value into sum")
          .dest<&Adder::relay>("relay", "sends v on out (a send from delivery)")
          .dest<&Adder::addPair>("addPair", "adds v * i")
          .dest<&Adder::addText>("addText", "appends a string")
          .dest<&Adder::scale>("scale", "x = k x + index")
          .src(Adder::out)
          .src(Adder::pair)
          .src(Adder::label)
          .proc<&Adder::process, &Adder::reinit>()
          .build();
  return c;
}

const Cinfo* Syn::initCinfo() {
  static const Cinfo* c = ClassBuilder<Syn>("TestSyn", "test array-field entry")
                              .value("weight", &Syn::weight_)
                              .readOnly("acc", &Syn::acc_)
                              .readOnly("hits", &Syn::hits_)
                              .dest<&Syn::hit>("hit", "acc += weight * v")
                              .build();
  return c;
}

const Cinfo* Receiver::initCinfo() {
  static const Cinfo* c = ClassBuilder<Receiver>("TestReceiver", "test element with an array field")
                              .fieldElement("syn", &Receiver::syn_, "the synapses", "numSyn")
                              .proc<&Receiver::process, &Receiver::reinit>()
                              .build();
  return c;
}

const Cinfo* Relax::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<Relax>("TestRelax", "relaxes Vm towards target")
          .value("Vm", &Relax::Vm_)
          .value("initVm", &Relax::initVm_)
          .value("target", &Relax::target_)
          .value("rate", &Relax::rate_)
          .value("level", &Relax::level_, "an int field (converted when reduced)")
          .proc<&Relax::process, &Relax::reinit>()
          .build();
  return c;
}

void Stopper::process(const Eref& e, ProcPtr p) {
  if (p->currTime >= stopAt_ - 1e-9) simulation_of(*e.element()).shell().stop();
}

const Cinfo* Stopper::initCinfo() {
  static const Cinfo* c = ClassBuilder<Stopper>("TestStopper", "stops the clock at a time")
                              .value("stopAt", &Stopper::stopAt_)
                              .proc<&Stopper::process, &Stopper::reinit>()
                              .build();
  return c;
}

const Cinfo* Faulty::initCinfo() {
  static const Cinfo* c = ClassBuilder<Faulty>("TestFaulty", "throws in process")
                              .value("failAt", &Faulty::failAt_)
                              .proc<&Faulty::process, &Faulty::reinit>()
                              .build();
  return c;
}

const Cinfo* Tap::initCinfo() {
  static const Cinfo* c = ClassBuilder<Tap>("TestTap", "test array-field entry that sends")
                              .dest<&Tap::relay>("relay", "re-sends v from this entry")
                              .src(Tap::out)
                              .build();
  return c;
}

void Gate::process(const Eref& e, ProcPtr p) {
  if (active_) out.send(e, x_ + p->currTime);
  if (taps_.empty()) return;
  const Element* taps = e.element()->child("tap");
  for (Index k = 0; k < taps_.size(); ++k)
    Tap::out.send(Eref(taps, e.dataIndex(), k), x_ + p->currTime + k);
}

void Gate::reinit(const Eref& e, ProcPtr) {
  if (active_) out.send(e, -x_);
}

const Cinfo* Gate::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<Gate>("TestGate", "test element: sends from some objects and from its taps")
          .value("x", &Gate::x_)
          .value("active", &Gate::active_, "sends on out only when true")
          .fieldElement("tap", &Gate::taps_, "entries that send", "numTap")
          .src(Gate::out)
          .proc<&Gate::process, &Gate::reinit>()
          .build();
  return c;
}

const Cinfo* Extremes::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<Extremes>("TestExtremes", "ReduceMax, ReduceMin and ReduceSum of a field")
          .readOnly("max", &Extremes::max_)
          .readOnly("hasMax", &Extremes::hasMax_)
          .readOnly("min", &Extremes::min_)
          .readOnly("hasMin", &Extremes::hasMin_)
          .readOnly("sum", &Extremes::sum_)
          .readOnly("count", &Extremes::count_)
          .reduce(Extremes::reduceMax)
          .reduce(Extremes::reduceMin)
          .reduce(Extremes::reduceSum)
          .proc<&Extremes::process, &Extremes::reinit>()
          .build();
  return c;
}

const Cinfo* Order::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<Order>("TestOrder", "ReduceTrace and ReducePlainSum of a field, every step")
          .readOnly("trace", &Order::trace_)
          .readOnly("sum", &Order::sum_)
          .reduce(Order::reduceTrace)
          .reduce(Order::reduceSum)
          .proc<&Order::process, &Order::reinit>()
          .build();
  return c;
}

const Cinfo* Block::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<Block>("TestBlocks", "a block of block rounds (shell/blocks.hpp)")
          .value("value", &Block::value_, "the block's own number")
          .readOnly("result", &Block::result_, "what the last rounds left")
          .value("fail", &Block::fail_, "sum throws in this round (-1: never)")
          .readOnly("calls", &Block::calls_, "sum calls so far")
          .readOnly("received", &Block::received_, "items the last spread received")
          .readOnly("checksum", &Block::checksum_, "sum of from * 1000 + item received")
          .blocks("sum", &Block::sum, "sums value over the blocks (or spreads gid 0's)")
          .blocks("spread", &Block::spread, "all_to_all: items to the block they name")
          .build();
  return c;
}

namespace {
[[maybe_unused]] const Cinfo* reg[] = {
    Adder::initCinfo(),    Syn::initCinfo(),     Receiver::initCinfo(), Relax::initCinfo(),
    Faulty::initCinfo(),   Stopper::initCinfo(), Tap::initCinfo(),      Gate::initCinfo(),
    Extremes::initCinfo(), Order::initCinfo(),   Block::initCinfo()};
}

}  // namespace antler::test
