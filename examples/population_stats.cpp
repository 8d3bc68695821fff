// Population statistics through the reduce path, and a reduce class of your own.
//
// 2000 leaky cells relax towards different targets. A Stats object reduces their Vm every step
// (the built-in ReduceStats), and a Census object, a class defined here, finds the five cells
// with the highest Vm through TopK, a reduce class defined here too: three folds and a
// Boost.Serialization member, nothing else, and no change to antler. The driver also reads every
// Vm and checks both results against a plain serial computation.
//
// Run: mpirun -n 2 population_stats
#include <algorithm>
#include <boost/serialization/vector.hpp>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/class_builder.hpp"
#include "models/stats.hpp"
#include "reduce/reduce_finfo.hpp"
#include "shell/field.hpp"
#include "shell/runtime.hpp"

using namespace antler;

// ---- a user-defined reduce class: the k largest values with the objects holding them ----

struct TopK {
  struct Entry {
    double value;
    std::uint32_t id;
    Index data;
    // Larger value first; ties by index, so the answer does not depend on the split.
    bool operator<(const Entry& o) const {
      return value != o.value ? value > o.value : data < o.data;
    }
    template <class Ar>
    void serialize(Ar& ar, unsigned) {
      ar& value& id& data;
    }
  };
  static constexpr std::size_t k = 5;
  std::vector<Entry> best;

  void primaryReduce(double v, const ObjId& where) { insert({v, where.id.value, where.dataIndex}); }
  void secondaryReduce(const TopK& o) {
    for (const Entry& e : o.best) insert(e);
  }
  void tertiaryReduce(const TopK& o) { secondaryReduce(o); }
  template <class Ar>
  void serialize(Ar& ar, unsigned) {
    ar& best;
  }

 private:
  void insert(const Entry& e) {
    if (best.size() == k && !(e < best.back())) return;
    best.insert(std::upper_bound(best.begin(), best.end(), e), e);
    if (best.size() > k) best.pop_back();
  }
};

// ---- an element class with a reduce field ----

class Cell {
 public:
  void process(const Eref&, ProcPtr p) { Vm_ += p->dt / tau_ * (target_ - Vm_); }
  void reinit(const Eref&, ProcPtr) { Vm_ = -0.07; }
  static const Cinfo* initCinfo() {
    static const Cinfo* c = ClassBuilder<Cell>("RelaxCell", "relaxes Vm towards target")
                                .value("Vm", &Cell::Vm_, "membrane potential (V)")
                                .value("target", &Cell::target_, "resting target (V)")
                                .value("tau", &Cell::tau_, "time constant (s)")
                                .proc<&Cell::process, &Cell::reinit>()
                                .build();
    return c;
  }

 private:
  double Vm_ = -0.07, target_ = -0.065, tau_ = 0.01;
};

class Census {
 public:
  void digest(const Eref&, const TopK* r) { top_ = r->best; }
  inline static ReduceFinfo<Census, double, TopK> reduce{"reduce", &Census::digest,
                                                         "connect to any 'get' field"};
  void process(const Eref& e, ProcPtr) { reduce.send(e); }
  void reinit(const Eref& e, ProcPtr) { reduce.send(e); }
  std::vector<double> topValues() const {
    std::vector<double> v;
    for (auto& e : top_) v.push_back(e.value);
    return v;
  }
  std::vector<unsigned> topIndices() const {
    std::vector<unsigned> v;
    for (auto& e : top_) v.push_back(e.data);
    return v;
  }
  static const Cinfo* initCinfo() {
    static const Cinfo* c =
        ClassBuilder<Census>("Census", "the five largest values of a field")
            .readOnly("topValues", &Census::topValues, "largest values, descending")
            .readOnly("topIndices", &Census::topIndices, "their data indices")
            .reduce(Census::reduce)
            .proc<&Census::process, &Census::reinit>()
            .build();
    return c;
  }

 private:
  std::vector<TopK::Entry> top_;
};

static const Cinfo* registered[] = {Cell::initCinfo(), Census::initCinfo()};

int main(int argc, char** argv) {
  Runtime rt(argc, argv);
  Shell& s = rt.shell();
  const Index n = 2000;
  const ObjId cells = s.create("RelaxCell", "/cells", n);
  const ObjId stats = s.create("Stats", "/stats");
  const ObjId census = s.create("Census", "/census");
  std::vector<double> target(n), tau(n);
  for (Index i = 0; i < n; ++i) {
    target[i] = -0.065 + 0.01 * std::sin(0.013 * i * i);
    tau[i] = 0.005 + 0.02 * ((i * 7919) % 1000) / 1000.0;
  }
  Field<double>::setVec(s, cells.id, "target", target);
  Field<double>::setVec(s, cells.id, "tau", tau);
  s.addMsg("Reduce", stats, "reduce", cells, "getVm");
  s.addMsg("Reduce", census, "reduce", cells, "getVm");
  s.setClock(0, 1e-4);
  s.useClock(0, "/cells");
  s.useClock(0, "/stats");
  s.useClock(0, "/census");
  s.reinit();

  std::printf("antler population stats: %u cells, %d node(s), %u thread(s) per node\n", n,
              s.numNodes(), s.numThreads());
  std::printf("%8s %14s %14s %14s %14s\n", "t (ms)", "mean Vm (mV)", "sdev (mV)", "min (mV)",
              "max (mV)");
  bool ok = true;
  for (int k = 1; k <= 5; ++k) {
    s.start(0.002);
    const double mean = Field<double>::get(s, stats, "mean"),
                 sdev = Field<double>::get(s, stats, "sdev");
    const double mn = Field<double>::get(s, stats, "min"), mx = Field<double>::get(s, stats, "max");
    std::printf("%8.1f %14.6f %14.6f %14.6f %14.6f\n", s.currentTime() * 1e3, mean * 1e3,
                sdev * 1e3, mn * 1e3, mx * 1e3);
    // The same statistics by a plain serial loop over every Vm.
    const auto vm = Field<double>::getVec(s, cells.id, "Vm");
    double sum = 0;
    for (double v : vm) sum += v;
    const double m = sum / n;
    double q = 0;
    for (double v : vm) q += (v - m) * (v - m);
    ok = ok && std::abs(mean - m) <= 1e-12 * std::abs(m) &&
         std::abs(sdev - std::sqrt(q / n)) <= 1e-9 * sdev &&
         mn == *std::min_element(vm.begin(), vm.end()) &&
         mx == *std::max_element(vm.begin(), vm.end()) &&
         Field<unsigned>::get(s, stats, "num") == n;
  }
  const auto vm = Field<double>::getVec(s, cells.id, "Vm");
  std::vector<unsigned> order(n);
  for (Index i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](unsigned a, unsigned b) { return vm[a] > vm[b]; });
  const auto topIdx = Field<std::vector<unsigned>>::get(s, census, "topIndices");
  const auto topVal = Field<std::vector<double>>::get(s, census, "topValues");
  std::printf("top %zu cells by Vm (TopK, a user-defined reduce class):", topIdx.size());
  for (std::size_t i = 0; i < topIdx.size(); ++i) {
    std::printf(" %u (%.6f mV)", topIdx[i], topVal[i] * 1e3);
    ok = ok && topIdx[i] == order[i] && topVal[i] == vm[order[i]];
  }
  std::printf("\nresult: mean=%.12g sdev=%.12g top=%u,%u,%u,%u,%u\n",
              Field<double>::get(s, stats, "mean"), Field<double>::get(s, stats, "sdev"),
              topIdx.at(0), topIdx.at(1), topIdx.at(2), topIdx.at(3), topIdx.at(4));
  std::printf("check against a serial loop over every Vm: %s\n", ok ? "OK" : "MISMATCH");
  return rt.finish(ok ? 0 : 1);
}
