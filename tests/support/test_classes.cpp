#include "tests/support/test_classes.hpp"

#include "shell/shell.hpp"

namespace antler::test {

const Cinfo* Adder::initCinfo() {
  static const Cinfo* c =
      ClassBuilder<Adder>("TestAdder", "test element: sends and folds values")
          .value("x", &Adder::x_, "value sent each step")
          .readOnly("sum", &Adder::sum_, "fold of what was received")
          .readOnly("count", &Adder::count_, "values received")
          .readOnly("text", &Adder::text_, "strings received")
          .readOnly("doubled", &Adder::getDoubled, "2 x")
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

void Stopper::process(const Eref&, ProcPtr p) {
  if (p->currTime >= stopAt_ - 1e-9) Shell::instance().stop();
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

namespace {
[[maybe_unused]] const Cinfo* reg[] = {Adder::initCinfo(),    Syn::initCinfo(),
                                       Receiver::initCinfo(), Relax::initCinfo(),
                                       Faulty::initCinfo(),   Stopper::initCinfo()};
}

}  // namespace antler::test
