// Element classes of a user's own, loaded into Python with antler.loadLibrary(path) and
// scriptable there with no binding code: an Oscillator population; a Spread object with a reduce
// field of its own reduce class (the range max - min, with the count); and a Power object whose
// reduce class reuses antler's exact accumulator (ExactSum) for a root mean square that has the
// same bits on any number of nodes and threads.
#include <algorithm>
#include <cmath>
#include <limits>

#include "antler/antler.hpp"  // the installed public API, one include

using namespace antler;

namespace {

/// x(t) = amplitude * sin(2 pi frequency t + phase), updated every step.
class Oscillator {
 public:
  void process(const Eref&, ProcPtr p) {
    x_ = amplitude_ * std::sin(2 * M_PI * frequency_ * p->currTime + phase_);
  }
  void reinit(const Eref&, ProcPtr) { x_ = amplitude_ * std::sin(phase_); }
  static const Cinfo* initCinfo() {
    static const Cinfo* c = ClassBuilder<Oscillator>("Oscillator", "a sine wave")
                                .value("amplitude", &Oscillator::amplitude_, "peak value")
                                .value("frequency", &Oscillator::frequency_, "Hz")
                                .value("phase", &Oscillator::phase_, "radians")
                                .readOnly("x", &Oscillator::x_, "current value")
                                .proc<&Oscillator::process, &Oscillator::reinit>()
                                .build();
    return c;
  }

 private:
  double amplitude_ = 1, frequency_ = 1, phase_ = 0, x_ = 0;
};

/// The reduce class: smallest and largest value and how many there were.
struct Range {
  double lo = std::numeric_limits<double>::infinity(),
         hi = -std::numeric_limits<double>::infinity();
  unsigned long n = 0;
  void primaryReduce(double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    ++n;
  }
  void secondaryReduce(const Range& o) {
    lo = std::min(lo, o.lo);
    hi = std::max(hi, o.hi);
    n += o.n;
  }
  void tertiaryReduce(const Range& o) { secondaryReduce(o); }
  template <class Ar>
  void serialize(Ar& ar, unsigned) {
    ar& lo& hi& n;
  }
};

/// Holds the range of whatever field its reduce field is connected to.
class Spread {
 public:
  void digest(const Eref&, const Range* r) {
    spread_ = r->n ? r->hi - r->lo : 0.0;
    count_ = static_cast<unsigned>(r->n);
  }
  inline static ReduceFinfo<Spread, double, Range> reduce{"reduce", &Spread::digest,
                                                          "connect to a 'get' field"};
  void process(const Eref& e, ProcPtr) { reduce.send(e); }
  void reinit(const Eref& e, ProcPtr) { reduce.send(e); }
  static const Cinfo* initCinfo() {
    static const Cinfo* c =
        ClassBuilder<Spread>("Spread", "max - min of a field over a population")
            .readOnly("spread", &Spread::spread_, "max - min of the last reduction")
            .readOnly("count", &Spread::count_, "values reduced")
            .reduce(Spread::reduce)
            .proc<&Spread::process, &Spread::reinit>()
            .build();
    return c;
  }

 private:
  double spread_ = 0;
  unsigned count_ = 0;
};

/// A reduce class that reuses antler's exact accumulator (ExactSum, reduce/exact_sum.hpp): the
/// sum of squares, each square added as its exact product, merged exactly between threads and
/// nodes, and rounded once when read. So the result does not depend on how the population was
/// split: the correctly rounded sum of the squares, on one core or on many nodes.
struct SumOfSquares {
  ExactSum squares;
  unsigned long n = 0;
  void primaryReduce(double v) {
    squares.addProduct(v, v);
    ++n;
  }
  void secondaryReduce(const SumOfSquares& o) {
    squares.merge(o.squares);
    n += o.n;
  }
  void tertiaryReduce(const SumOfSquares& o) { secondaryReduce(o); }
  template <class Ar>
  void serialize(Ar& ar, unsigned) {
    ar& squares& n;  // ExactSum serializes itself (only the digits in use)
  }
};

/// The root mean square of whatever field its reduce field is connected to.
class Power {
 public:
  void digest(const Eref&, const SumOfSquares* r) {
    sumSq_ = r->squares.value();
    rms_ = r->n ? std::sqrt(sumSq_ / static_cast<double>(r->n)) : 0.0;
  }
  inline static ReduceFinfo<Power, double, SumOfSquares> reduce{"reduce", &Power::digest,
                                                                "connect to a 'get' field"};
  void process(const Eref& e, ProcPtr) { reduce.send(e); }
  void reinit(const Eref& e, ProcPtr) { reduce.send(e); }
  static const Cinfo* initCinfo() {
    static const Cinfo* c =
        ClassBuilder<Power>("Power", "root mean square of a field over a population")
            .readOnly("rms", &Power::rms_, "sqrt(sumSq / count) of the last reduction")
            .readOnly("sumSq", &Power::sumSq_, "sum of the squares, correctly rounded")
            .reduce(Power::reduce)
            .proc<&Power::process, &Power::reinit>()
            .build();
    return c;
  }

 private:
  double rms_ = 0, sumSq_ = 0;
};

[[maybe_unused]] const Cinfo* registered[] = {Oscillator::initCinfo(), Spread::initCinfo(),
                                              Power::initCinfo()};

}  // namespace
