// The smallest whole antler program: an element class with a value field, another with a reduce
// field, a model built and run through the Shell on any number of nodes, and one include.
// ctest example.minimal runs it on 3 nodes and checks its answer against the formula.
//
// Run: mpirun -n 3 minimal
#include <cstdio>

#include "antler/antler.hpp"

using namespace antler;

/// Counts its steps: value = start + the steps since reinit.
class Counter {
 public:
  void process(const Eref&, ProcPtr) { value_ += 1.0; }
  void reinit(const Eref&, ProcPtr) { value_ = start_; }
  static const Cinfo* initCinfo() {
    static const Cinfo* c = ClassBuilder<Counter>("Counter", "counts its steps")
                                .value("value", &Counter::value_, "start + steps since reinit")
                                .value("start", &Counter::start_, "the value reinit sets")
                                .proc<&Counter::process, &Counter::reinit>()
                                .build();
    return c;
  }

 private:
  double value_ = 0.0, start_ = 0.0;
};

/// Sums a field of its targets every step through its reduce field (a Reduce message).
class Total {
 public:
  void digest(const Eref&, const ReduceSum<double>* r) {
    total_ = r->value();
    count_ = static_cast<unsigned>(r->count());
  }
  inline static ReduceFinfo<Total, double, ReduceSum<double>> reduce{
      "reduce", &Total::digest, "connect to a 'get' field of the objects to sum"};
  void process(const Eref& e, ProcPtr) { reduce.send(e); }
  void reinit(const Eref& e, ProcPtr) { reduce.send(e); }
  static const Cinfo* initCinfo() {
    static const Cinfo* c = ClassBuilder<Total>("Total", "sums a field of its targets")
                                .readOnly("total", &Total::total_, "the last sum")
                                .readOnly("count", &Total::count_, "objects summed")
                                .reduce(Total::reduce)
                                .proc<&Total::process, &Total::reinit>()
                                .build();
    return c;
  }

 private:
  double total_ = 0.0;
  unsigned count_ = 0;
};

static const Cinfo* registered[] = {Counter::initCinfo(), Total::initCinfo()};

int main(int argc, char** argv) {
  Runtime rt(argc, argv);  // every rank; the others serve rank 0 from here and never return
  Shell& s = rt.shell();   // rank 0 builds and runs as if serial
  const Index n = 1001;
  const ObjId counters = s.create("Counter", "/counters", n);
  const ObjId total = s.create("Total", "/total");
  std::vector<double> start(n);
  for (Index i = 0; i < n; ++i) start[i] = i;
  Field<double>::setVec(s, counters.id, "start", start);
  s.addMsg("Reduce", total, "reduce", counters, "getValue");
  s.setClock(0, 1e-3);
  s.setClock(1, 1e-3);
  s.useClock(0, "/counters");
  s.useClock(1, "/total");  // after the counters: it sums this step's values
  s.reinit();
  s.start(10e-3);
  // Exact in doubles: sum(i) + 10 n.
  const double want = 0.5 * n * (n - 1) + 10.0 * n;
  const double got = Field<double>::get(s, total, "total");
  const unsigned count = Field<unsigned>::get(s, total, "count");
  const bool ok = got == want && count == n;
  std::printf("minimal: %u counters on %d node(s), total after 10 steps %.1f (want %.1f): %s\n",
              count, s.numNodes(), got, want, ok ? "OK" : "WRONG");
  return rt.finish(ok ? 0 : 1);
}
