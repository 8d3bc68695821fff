// Special values at chunk boundaries, through the real reduce path.
//
// A fold is most fragile where a partial starts or ends: the first value a thread's partial sees
// (is the identity handled, is a NaN kept out of min/max?), the last one, a chunk of one value, an
// empty chunk (a thread or node with no targets contributes an identity partial), and the start of
// a 512-value block inside ReduceStats. So every built-in reduce class (ReduceStats through Stats,
// ReduceMax/Min/Sum through TestExtremes, ReduceFieldDimension through doSyncDataHandler) is fed
// NaN, +inf, -inf and each class's identity (the extreme finite values, 0; 0 entries for
// ReduceFieldDimension) at each such position, for the node count ctest
// runs this at (1..4) and 1, 2 and 3 threads, and compared with a serial loop computed here. The
// chunk layout is recomputed here from the documented rule (block distribution: the first n % P
// parts one longer), so a layout bug is a mismatch, not a shared assumption.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "core/element.hpp"
#include "core/value_finfo.hpp"
#include "reduce/reduce_extremes.hpp"
#include "reduce/reduce_field_dimension.hpp"
#include "reduce/reduce_msg.hpp"
#include "reduce/reduce_queue.hpp"
#include "reduce/reduce_stats.hpp"
#include "shell/simulation.hpp"
#include "tests/support/model.hpp"
#include "tests/support/test_classes.hpp"

using namespace antler;
using antler::test::Model;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kHuge = std::numeric_limits<double>::max();
// Where ReduceStats starts a new block inside a thread's slice (reduce/reduce_finfo.hpp).
constexpr std::size_t kBlock = 512;

struct Range {
  std::size_t b, e;
};

/// Part `part` of `parts` over [0, n), sizes n / parts, the first n % parts one longer (written
/// out as a running sum, not with antler's block_range).
Range part_of(std::size_t n, std::size_t parts, std::size_t part) {
  std::size_t b = 0;
  for (std::size_t k = 0; k < part; ++k) b += n / parts + (k < n % parts ? 1 : 0);
  return {b, b + n / parts + (part < n % parts ? 1 : 0)};
}

/// The thread chunks of every node, in fold order (node 0's threads, node 1's, ...).
std::vector<Range> chunks(std::size_t n, std::size_t P, std::size_t T) {
  std::vector<Range> out;
  for (std::size_t p = 0; p < P; ++p) {
    const Range node = part_of(n, P, p);
    for (std::size_t t = 0; t < T; ++t) {
      const Range r = part_of(node.e - node.b, T, t);
      out.push_back({node.b + r.b, node.b + r.e});
    }
  }
  return out;
}

/// First and last index of every non-empty chunk (a chunk of one: its only index), and the two
/// indices around each block start inside a chunk.
std::vector<std::size_t> boundaries(std::size_t n, std::size_t P, std::size_t T) {
  std::set<std::size_t> s;
  for (const Range& c : chunks(n, P, T)) {
    if (c.b == c.e) continue;
    s.insert(c.b);
    s.insert(c.e - 1);
    for (std::size_t k = c.b + kBlock; k < c.e; k += kBlock) s.insert(k - 1), s.insert(k);
  }
  return {s.begin(), s.end()};
}

std::vector<double> population(std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] =
        1e3 + 7.5 * std::sin(0.37 * static_cast<double>(i)) - 0.001 * static_cast<double>(i % 13);
  return v;
}

/// Every value vector the sweep reduces for n entries on P nodes x T threads: the plain
/// population; one special value (NaN, +-inf, and each class's identity: lowest for Max, max for
/// Min, 0 for Sum) at each boundary; each special at every chunk's first (and, separately, last)
/// index at once; and all-NaN, all +inf, all -inf, all lowest, all 0.
std::vector<std::vector<double>> configs(std::size_t n, std::size_t P, std::size_t T) {
  const std::vector<double> specials{kNaN, kInf, -kInf, -kHuge, kHuge, 0.0};
  const std::vector<double> base = population(n);
  std::vector<std::vector<double>> out{base};
  for (std::size_t pos : boundaries(n, P, T))
    for (double s : specials) {
      out.push_back(base);
      out.back()[pos] = s;
    }
  for (double s : specials)
    for (bool first : {true, false}) {
      out.push_back(base);
      for (const Range& c : chunks(n, P, T))
        if (c.b < c.e) out.back()[first ? c.b : c.e - 1] = s;
    }
  for (double s : {kNaN, kInf, -kInf, -kHuge, 0.0}) out.emplace_back(n, s);
  return out;
}

/// What the reductions must give, by a serial loop.
struct Reference {
  std::size_t n = 0;
  bool huge = false;  // a +-max() value: the sum may overflow, mean and sdev are not compared
  double sum = 0, mean = kNaN, sdev = kNaN, min = kNaN, max = kNaN;
  bool any = false;  // a non-NaN value (ReduceMax/Min has())
};

Reference reference(const std::vector<double>& v) {
  Reference r;
  r.n = v.size();
  bool nan = false, pinf = false, ninf = false;
  long double s = 0;
  for (double x : v) {
    nan |= std::isnan(x);
    pinf |= x == kInf;
    ninf |= x == -kInf;
    r.huge |= std::abs(x) == kHuge;
    if (std::isfinite(x)) s += x;
    if (std::isnan(x)) continue;
    if (!r.any || x < r.min) r.min = x;
    if (!r.any || x > r.max) r.max = x;
    r.any = true;
  }
  if (nan || (pinf && ninf))
    r.sum = kNaN;
  else if (pinf || ninf)
    r.sum = pinf ? kInf : -kInf;
  else
    r.sum = static_cast<double>(s);
  if (v.empty()) return r;
  r.mean =
      std::isfinite(r.sum) ? static_cast<double>(s / static_cast<long double>(v.size())) : r.sum;
  if (!nan && !pinf && !ninf) {
    const long double m = s / static_cast<long double>(v.size());
    long double q = 0;
    for (double x : v) q += (x - m) * (x - m);
    r.sdev = static_cast<double>(std::sqrt(q / static_cast<long double>(v.size())));
  }
  return r;
}

bool close(double a, double b, double rel) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::abs(a - b) <= rel * std::max(1.0, std::max(std::abs(a), std::abs(b)));
}

bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

/// The results of one reduction: Stats' six fields and TestExtremes' six.
struct Got {
  double mean, sdev, sum, min, max;
  unsigned num;
  bool hasMax, hasMin;
  double xmax, xmin, xsum;
  unsigned xcount;
};

void check(const Got& g, const Reference& r) {
  CHECK(g.num == r.n);
  CHECK(same(g.min, r.min));
  CHECK(same(g.max, r.max));
  if (!r.huge) {
    CHECK(close(g.sum, r.sum, 1e-12));
    CHECK(close(g.mean, r.mean, 1e-12));
    CHECK(close(g.sdev, r.sdev, 1e-9));  // relative to a value ~5 with mean 1e3
  }
  CHECK(g.hasMax == r.any);
  CHECK(g.hasMin == r.any);
  if (r.any) {
    CHECK(g.xmax == r.max);
    CHECK(g.xmin == r.min);
  }
  CHECK(close(g.xsum, r.sum, 1e-12));
  CHECK(g.xcount == r.n);
}

template <class F>
F read(const Element* e, const char* field) {
  return static_cast<const TypedValueFinfo<F>*>(e->cinfo()->findFinfo(field))->read(e, 0, 0);
}

Got read_got(const Element* stats, const Element* ext) {
  return {read<double>(stats, "mean"), read<double>(stats, "sdev"), read<double>(stats, "sum"),
          read<double>(stats, "min"),  read<double>(stats, "max"),  read<unsigned>(stats, "num"),
          read<bool>(ext, "hasMax"),   read<bool>(ext, "hasMin"),   read<double>(ext, "max"),
          read<double>(ext, "min"),    read<double>(ext, "sum"),    read<unsigned>(ext, "count")};
}

// On every node, in lockstep: for each configuration, writes the values into the local entries of
// a TestRelax element (Vm: the strided member loop) and a TestReceiver's one-entry synapses
// (weight: the per-entry field-element loop), runs the eight reductions with T thread partials
// (ReduceQueue::runNow: the folds, the allgather and the digests of the clock's Barrier 3), and
// replies with what the global requesters digested.
void sweep_handler(Simulation& sim, Reader& r, Writer& w) {
  const auto T = r.get<unsigned>();
  const auto cells = sim.elements().get(r.get<Id>());
  auto* recv = static_cast<DataElement*>(sim.elements().get(r.get<Id>()));
  std::vector<ReduceBase*> jobs;
  for (int k = 0; k < 8; ++k)
    jobs.push_back(static_cast<const ReduceMsg*>(sim.msgs().get(r.get<std::uint32_t>()))->job());
  const Element* req[4];
  for (auto& e : req) e = sim.elements().get(r.get<Id>());
  const NodeLayout& l = sim.layout();
  const auto all = configs(cells->numData(), static_cast<std::size_t>(l.numNodes), T);
  for (const auto& v : all) {
    for (Index d = cells->localBegin(); d < cells->localEnd(); ++d) {
      object<test::Relax>(cells, d)->Vm_ = v[d];
      object<test::Receiver>(recv, d)->syn_[0].weight_ = v[d];
    }
    sim.reduces().runNow(jobs, T);
    for (int k = 0; k < 2; ++k) w.put(read_got(req[2 * k], req[2 * k + 1]));
  }
}
[[maybe_unused]] const bool reg =
    (Shell::registerCommand("test.reduceSweep", &sweep_handler), true);

}  // namespace

TEST_CASE("reduce classes: NaN, +-inf and extremes at every chunk boundary, every split") {
  Model m;
  const auto P = static_cast<std::size_t>(m.s.numNodes());
  const ObjId statsA = m.s.create("Stats", "/statsA", 1, true);  // global: digests on every node
  const ObjId extA = m.s.create("TestExtremes", "/extA", 1, true);
  const ObjId statsB = m.s.create("Stats", "/statsB", 1, true);
  const ObjId extB = m.s.create("TestExtremes", "/extB", 1, true);
  for (unsigned T : {1u, 2u, 3u})
    // (An element has at least one entry; zero targets are covered by the reduce-path tests.)
    for (std::size_t n : std::set<std::size_t>{1, P * T - 1, P * T, 2 * P * T + 1, 1100}) {
      if (n == 0) continue;
      CAPTURE(T);
      CAPTURE(n);
      const std::string tag = std::to_string(T) + "_" + std::to_string(n);
      const ObjId cells = m.s.create("TestRelax", "/c" + tag, static_cast<Index>(n));
      const ObjId recv = m.s.create("TestReceiver", "/r" + tag, static_cast<Index>(n));
      Field<unsigned>::setAll(m.s, recv.id, "numSyn", 1u);
      const ObjId syn(antler::test::element(recv)->child("syn")->id(),
                      0);  // (find refuses 0 entries)
      ByteBuffer args;
      Writer a(args);
      a.put(T).put(cells.id).put(recv.id);
      for (const auto& [target, getter] : {std::pair{cells, "getVm"}, {syn, "getWeight"}}) {
        const bool first = target == cells;
        a.put(m.s.addMsg("Reduce", first ? statsA : statsB, "reduce", target, getter));
        for (const char* f : {"reduceMax", "reduceMin", "reduceSum"})
          a.put(m.s.addMsg("Reduce", first ? extA : extB, f, target, getter));
      }
      a.put(statsA.id).put(extA.id).put(statsB.id).put(extB.id);
      const auto replies = m.s.dispatchExtension("test.reduceSweep", args);
      const auto all = configs(n, P, T);
      for (const ByteBuffer& b : replies) {  // every node digested the same results
        Reader rd(b);
        for (std::size_t c = 0; c < all.size(); ++c) {
          CAPTURE(c);
          const Reference ref = reference(all[c]);
          check(rd.get<Got>(), ref);  // the member loop (Vm of TestRelax)
          check(rd.get<Got>(), ref);  // the field-element loop (weight of each synapse)
        }
      }
      m.s.destroy(cells);
      m.s.destroy(recv);
    }
}

TEST_CASE("Stats and TestExtremes scheduled on the clock: chunk-boundary NaNs and infinities") {
  // The clock's own path: thread partials folded in parallel, and from the second step on the
  // predicted reductions whose partials ride in the Barrier 1 exchange.
  Model m;
  const auto P = static_cast<std::size_t>(m.s.numNodes());
  const ObjId stats = m.s.create("Stats", "/stats");
  const ObjId ext = m.s.create("TestExtremes", "/ext");
  m.s.setClock(0, 1.0);
  m.s.useClock(0, "/##[TYPE=Stats]");
  m.s.useClock(0, "/##[TYPE=TestExtremes]");
  for (unsigned T : {1u, 2u, 3u})
    for (std::size_t n : {P * T, 3 * P * T + 2}) {
      CAPTURE(T);
      CAPTURE(n);
      // TestAdder's x: a plain member that nothing changes (the targets need no schedule).
      const ObjId cells = m.s.create("TestAdder", "/cells", static_cast<Index>(n));
      m.s.addMsg("Reduce", stats, "reduce", cells, "getX");
      for (const char* f : {"reduceMax", "reduceMin", "reduceSum"})
        m.s.addMsg("Reduce", ext, f, cells, "getX");
      m.s.setNumThreads(T);
      const auto cs = chunks(n, P, T);
      for (double s : {kNaN, -kInf, kInf})
        for (bool first : {true, false}) {
          CAPTURE(s);
          CAPTURE(first);
          std::vector<double> v = population(n);
          for (const Range& c : cs)
            if (c.b < c.e) v[first ? c.b : c.e - 1] = s;
          Field<double>::setVec(m.s, cells.id, "x", v);
          m.s.reinit();
          m.s.start(2.0);
          const Got g{
              Field<double>::get(m.s, stats, "mean"), Field<double>::get(m.s, stats, "sdev"),
              Field<double>::get(m.s, stats, "sum"),  Field<double>::get(m.s, stats, "min"),
              Field<double>::get(m.s, stats, "max"),  Field<unsigned>::get(m.s, stats, "num"),
              Field<bool>::get(m.s, ext, "hasMax"),   Field<bool>::get(m.s, ext, "hasMin"),
              Field<double>::get(m.s, ext, "max"),    Field<double>::get(m.s, ext, "min"),
              Field<double>::get(m.s, ext, "sum"),    Field<unsigned>::get(m.s, ext, "count")};
          check(g, reference(v));
        }
      m.s.destroy("/cells");
    }
}

TEST_CASE("ReduceFieldDimension: the largest count at every chunk boundary, and all zero") {
  Model m;
  const auto P = static_cast<std::size_t>(m.s.numNodes());
  for (unsigned T : {1u, 2u, 3u})
    for (std::size_t n : {P * T - 1, P * T, 2 * P * T + 1}) {
      if (n == 0) continue;
      CAPTURE(T);
      CAPTURE(n);
      m.s.setNumThreads(T);
      const ObjId r = m.s.create("TestReceiver", "/r", static_cast<Index>(n));
      std::vector<std::vector<unsigned>> cfg{std::vector<unsigned>(n, 0)};  // the identity
      for (std::size_t pos : boundaries(n, P, T)) {
        std::vector<unsigned> c(n);
        for (std::size_t i = 0; i < n; ++i) c[i] = static_cast<unsigned>(i % 3);
        c[pos] = 7;
        cfg.push_back(c);
      }
      for (const auto& c : cfg) {
        Field<unsigned>::setVec(m.s, r.id, "numSyn", c);
        const unsigned want = *std::max_element(c.begin(), c.end());  // serial maximum
        CHECK(m.s.doSyncDataHandler("/r/syn") == want);
      }
      m.s.destroy("/r");
    }
}

TEST_CASE("all-NaN populations: Max and Min have no value, Sum and Stats are NaN") {
  // Unit level (no element): every split of 1..4 nodes x 1..3 threads, folded as the path does.
  for (std::size_t n : {1u, 5u, 13u})
    for (std::size_t P = 1; P <= 4; ++P)
      for (std::size_t T = 1; T <= 3; ++T) {
        CAPTURE(n);
        CAPTURE(P);
        CAPTURE(T);
        std::vector<ReduceStats> st;
        std::vector<ReduceMax<double>> mx;
        std::vector<ReduceMin<double>> mn;
        std::vector<ReduceSum<double>> sm;
        for (std::size_t p = 0; p < P; ++p) {
          ReduceStats s;
          ReduceMax<double> a;
          ReduceMin<double> b;
          ReduceSum<double> c;
          for (std::size_t t = 0; t < T; ++t) {
            const Range r = chunks(n, P, T)[p * T + t];
            ReduceStats s1;
            ReduceMax<double> a1;
            ReduceMin<double> b1;
            ReduceSum<double> c1;
            for (std::size_t i = r.b; i < r.e; ++i) {
              s1.primaryReduce(kNaN);
              a1.primaryReduce(kNaN);
              b1.primaryReduce(kNaN);
              c1.primaryReduce(kNaN);
            }
            s.secondaryReduce(s1);
            a.secondaryReduce(a1);
            b.secondaryReduce(b1);
            c.secondaryReduce(c1);
          }
          st.push_back(s), mx.push_back(a), mn.push_back(b), sm.push_back(c);
        }
        for (std::size_t p = 1; p < P; ++p) {
          st[0].tertiaryReduce(st[p]);
          mx[0].tertiaryReduce(mx[p]);
          mn[0].tertiaryReduce(mn[p]);
          sm[0].tertiaryReduce(sm[p]);
        }
        CHECK(st[0].count() == n);
        CHECK(std::isnan(st[0].sum()));
        CHECK(std::isnan(st[0].mean()));
        CHECK(std::isnan(st[0].sdev()));
        CHECK(std::isnan(st[0].min()));
        CHECK(std::isnan(st[0].max()));
        CHECK(!mx[0].has());
        CHECK(!mn[0].has());
        CHECK(std::isnan(sm[0].value()));
        CHECK(sm[0].count() == n);
      }
}
