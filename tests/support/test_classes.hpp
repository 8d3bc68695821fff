#pragma once
// Element classes used only by the tests.
#include <stdexcept>
#include <string>
#include <vector>

#include "core/class_builder.hpp"
#include "core/comm/block_rounds.hpp"
#include "msg/src_finfo.hpp"
#include "reduce/reduce_extremes.hpp"
#include "reduce/reduce_finfo.hpp"

namespace antler::test {

/// Sends x + 0.1 * sum every step and folds what it receives as sum = 0.5 * sum + v, which
/// depends on the order values arrive in: a delivery-order bug changes the result.
class Adder {
 public:
  inline static SrcFinfo<double> out{"out", "sends x + 0.1 * sum each step"};
  inline static SrcFinfo<double, unsigned> pair{"pair", "sends (x, index) (for type checks)"};
  inline static SrcFinfo<std::string> label{"label", "sends a string (the Boost path)"};
  void process(const Eref& e, ProcPtr) {
    out.send(e, x_ + 0.1 * sum_);
    pair.send(e, x_, e.dataIndex());
    label.send(e, "n" + std::to_string(e.dataIndex()));
  }
  void reinit(const Eref&, ProcPtr) {
    sum_ = 0;
    count_ = 0;
    text_.clear();
  }
  void add(double v) {
    sum_ = 0.5 * sum_ + v;
    ++count_;
  }
  void relay(const Eref& e, double v) { out.send(e, v); }
  void addPair(double v, unsigned i) { sum_ += v * i; }
  void addText(const std::string& s) { text_ += s + ";"; }
  void scale(const Eref& e, double k) { x_ = k * x_ + e.dataIndex(); }
  double getDoubled() const { return 2 * x_; }
  double weightOf(unsigned i) const { return i < w_.size() ? w_[i] : -1.0; }
  void setWeightOf(unsigned i, double v) {
    if (w_.size() <= i) w_.resize(i + 1, 0.0);
    w_[i] = v;
  }
  static const Cinfo* initCinfo();

  double x_ = 0, sum_ = 0;
  unsigned count_ = 0;
  std::string text_;
  std::vector<double> w_;
};

/// One entry of Receiver's array field.
class Syn {
 public:
  void hit(double v) {
    acc_ += weight_ * v;
    ++hits_;
  }
  static const Cinfo* initCinfo();
  double weight_ = 1, acc_ = 0;
  unsigned hits_ = 0;
};

/// Holds a variable number of Syn entries (the FieldElement "syn").
class Receiver {
 public:
  void process(const Eref&, ProcPtr) {}
  void reinit(const Eref&, ProcPtr) {
    for (auto& s : syn_) s.acc_ = 0, s.hits_ = 0;
  }
  static const Cinfo* initCinfo();
  std::vector<Syn> syn_;
};

/// Vm relaxes towards `target`: Vm <- Vm + rate * (target - Vm) each step.
class Relax {
 public:
  void process(const Eref&, ProcPtr) { Vm_ += rate_ * (target_ - Vm_); }
  void reinit(const Eref&, ProcPtr) { Vm_ = initVm_; }
  static const Cinfo* initCinfo();
  double Vm_ = 0, initVm_ = 0, target_ = 0, rate_ = 0.5;
  int level_ = 0;
};

/// Asks the clock to stop (Shell::stop) once the time reaches stopAt, from its process.
class Stopper {
 public:
  void process(const Eref&, ProcPtr p);
  void reinit(const Eref&, ProcPtr) {}
  static const Cinfo* initCinfo();
  double stopAt_ = 1e300;
};

/// Throws in process when its index equals `failAt` (tests error propagation from a run).
class Faulty {
 public:
  void process(const Eref& e, ProcPtr) {
    if (static_cast<int>(e.dataIndex()) == failAt_)
      throw ValueError("Faulty: failed at entry " + std::to_string(failAt_));
  }
  void reinit(const Eref&, ProcPtr) {}
  static const Cinfo* initCinfo();
  int failAt_ = -1;
};

/// One entry of Gate's array field "tap": a source port on a field element, so sends carry a
/// field index (records that never take the dense fast path).
class Tap {
 public:
  inline static SrcFinfo<double> out{"out", "sends from a field entry"};
  /// Re-sends v from this entry: a send from a field entry made during delivery (deferred).
  void relay(const Eref& e, double v) { out.send(e, v); }
  static const Cinfo* initCinfo();
};

/// A sender whose process loop skips objects: it sends x + currTime on `out` only when `active`
/// (so a slice's sends are not consecutive and batches are indexed, not dense), then x + currTime
/// + k from each of its tap entries k. Its reinit sends -x on `out` (when active).
class Gate {
 public:
  inline static SrcFinfo<double> out{"out", "sends x + currTime when active"};
  void process(const Eref& e, ProcPtr p);
  void reinit(const Eref& e, ProcPtr p);
  static const Cinfo* initCinfo();
  double x_ = 0;
  bool active_ = true;
  std::vector<Tap> taps_;
};

/// Asks, every step, for ReduceMax, ReduceMin and ReduceSum of whatever its three reduce fields
/// are connected to, and keeps the results (each built-in simple fold through the real path).
class Extremes {
 public:
  void digestMax(const Eref&, const ReduceMax<double>* r) {
    hasMax_ = r->has();
    max_ = r->value();
  }
  void digestMin(const Eref&, const ReduceMin<double>* r) {
    hasMin_ = r->has();
    min_ = r->value();
  }
  void digestSum(const Eref&, const ReduceSum<double>* r) {
    sum_ = r->value();
    count_ = static_cast<unsigned>(r->count());
  }
  inline static ReduceFinfo<Extremes, double, ReduceMax<double>> reduceMax{
      "reduceMax", &Extremes::digestMax, "ReduceMax of a 'get' field"};
  inline static ReduceFinfo<Extremes, double, ReduceMin<double>> reduceMin{
      "reduceMin", &Extremes::digestMin, "ReduceMin of a 'get' field"};
  inline static ReduceFinfo<Extremes, double, ReduceSum<double>> reduceSum{
      "reduceSum", &Extremes::digestSum, "ReduceSum of a 'get' field"};
  void process(const Eref& e, ProcPtr) {
    reduceMax.send(e);
    reduceMin.send(e);
    reduceSum.send(e);
  }
  void reinit(const Eref& e, ProcPtr p) { process(e, p); }
  static const Cinfo* initCinfo();
  double max_ = 0, min_ = 0, sum_ = 0;
  bool hasMax_ = false, hasMin_ = false;
  unsigned count_ = 0;
};

/// A reduce class whose every fold is visible: node partials are the values of the node's
/// targets joined by ',' (threads joined by ';'), and tertiaryReduce brackets its two sides,
/// "(left right)", so the string is the shape of the fold across nodes. Not trivially copyable
/// and without a size bound: the node stage must assume it is large. A value of -1 on the
/// targets makes a fold across nodes throw.
struct ReduceTrace {
  std::string s;
  void primaryReduce(double v) {
    s += (s.empty() ? "" : ",") + std::to_string(static_cast<long>(v));
  }
  void secondaryReduce(const ReduceTrace& o) {
    if (o.s.empty()) return;
    s = s.empty() ? o.s : s + ";" + o.s;
  }
  void tertiaryReduce(const ReduceTrace& o) {
    if (s.find("-1") != std::string::npos || o.s.find("-1") != std::string::npos)
      throw std::runtime_error("ReduceTrace: a partial holds -1");
    if (o.s.empty()) return;
    s = s.empty() ? o.s : "(" + s + " " + o.s + ")";
  }
  template <class Ar>
  void serialize(Ar& ar, unsigned) {
    ar& s;
  }
};

/// A plain floating-point sum (no compensation), whose bits depend on the order of the folds.
struct ReducePlainSum {
  double s = 0;
  void primaryReduce(double v) { s += v; }
  void secondaryReduce(const ReducePlainSum& o) { s += o.s; }
  void tertiaryReduce(const ReducePlainSum& o) { s += o.s; }
  template <class Ar>
  void serialize(Ar& ar, unsigned) {
    ar& s;
  }
};

/// Asks for a ReduceTrace and a ReducePlainSum every step and keeps the results.
class Order {
 public:
  void digestTrace(const Eref&, const ReduceTrace* r) { trace_ = r->s; }
  void digestSum(const Eref&, const ReducePlainSum* r) { sum_ = r->s; }
  inline static ReduceFinfo<Order, double, ReduceTrace> reduceTrace{
      "reduceTrace", &Order::digestTrace, "the shape of the fold, as a string"};
  inline static ReduceFinfo<Order, double, ReducePlainSum> reduceSum{"reduceSum", &Order::digestSum,
                                                                     "a plain floating-point sum"};
  void process(const Eref& e, ProcPtr) {
    reduceTrace.send(e);
    reduceSum.send(e);
  }
  void reinit(const Eref& e, ProcPtr p) { process(e, p); }
  static const Cinfo* initCinfo();
  std::string trace_;
  double sum_ = 0;
};

/// A block of block rounds (shell/blocks.hpp): a value folded by every pattern, items
/// redistributed by all_to_all, and a block that throws where told to.
class Block {
 public:
  /// Every pattern: round 0 starts from `value`; the gathering rounds (merge, swap, all-reduce up
  /// to its middle) sum what came in along the in-link, in link order; the spreading rounds
  /// (broadcast, all-reduce after its middle) take what came. Sends `result` to the out-link.
  void sum(comm::ReduceProxy& rp, const comm::Partners& p) {
    if (fail_ == static_cast<int>(rp.round())) throw std::runtime_error("TestBlock told to fail");
    if (rp.round() == 0) result_ = value_;
    const int R = static_cast<int>(p.factored().size());
    const bool spreading = p.pattern() == comm::Pattern::broadcast ||
                           (p.pattern() == comm::Pattern::allReduce && rp.round() > R);
    if (!rp.in_link().empty()) {
      if (spreading) {
        result_ = rp.dequeue<double>(rp.in_link().front());
      } else {
        double s = 0;
        for (int from : rp.in_link()) s += rp.dequeue<double>(from);
        result_ = s;
      }
    }
    for (int to : rp.out_link()) rp.enqueue(to, result_);
    ++calls_;
  }
  /// all_to_all: block g sends items (g * 7 + 13 i) % n for i < g % 5 + 1, each to the block whose
  /// gid is the item; a block keeps how many it received and the sum of from * 1000 + item.
  void spread(comm::ReduceProxy& rp) {
    const int n = rp.nblocks(), g = rp.gid();
    if (rp.round() == 0) {
      for (int i = 0; i < g % 5 + 1; ++i) {
        const int item = (g * 7 + 13 * i) % n;
        rp.enqueue(item, item);
      }
      return;
    }
    received_ = 0;
    checksum_ = 0;
    for (int from : rp.in_link())
      while (rp.incoming(from)) {
        const int item = rp.dequeue<int>(from);
        ++received_;
        checksum_ += from * 1000.0 + item;
      }
  }
  static const Cinfo* initCinfo();

  double value_ = 0, result_ = 0, checksum_ = 0;
  int fail_ = -1;
  unsigned calls_ = 0, received_ = 0;
};

}  // namespace antler::test
