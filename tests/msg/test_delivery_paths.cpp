// Every message kind through every delivery path, against a serial reference computed here.
//
// A send reaches its targets by one of these paths (msg/post_office.cpp, msg/msg.cpp):
//   fast      a dense batch (consecutive sends from data entries, as a process loop makes them)
//             through the only message on its port, OneToOne or Diagonal between data elements:
//             one callDense per run of targets;
//   record    Msg::deliver per record: any other kind (Single, OneToAll, Sparse), a destination
//             that is a field element, an indexed batch (sends that skip objects: TestGate's
//             `active`), or sends from field entries (TestGate's taps, which carry a field index);
//   multi     a port with several messages: record by record, message by message;
//   deferred  sends made outside the process phase (from dest functions during delivery, from
//             Shell calls): sorted by (source element, data index, field index), delivered first
//             at the next delivery, record by record. (Sends from reinit use the process queue,
//             so they take the paths above; TestGate's reinit send is among them.)
// Each destination folds what it receives in an order-dependent way (TestAdder: sum = 0.5 sum + v;
// synapses sum weight * v in arrival order), so a lost, duplicated, misdirected or reordered
// delivery changes the result. The reference runs the same rounds serially with its own index
// mappings; it is checked for 1, 2 and 3 threads and, through ctest, 1 to 4 nodes, bit for bit.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/element.hpp"
#include "msg/msg.hpp"
#include "tests/support/model.hpp"

using namespace antler;
using antler::test::Model;

namespace {

enum class Cls { adder, gate, tap, syn };
enum class Kind { single, oneToOne, oneToAll, diagonal, sparse };

/// One element as the reference sees it: its inputs and its state.
struct Pop {
  std::string path;
  Cls cls;
  Index n;
  std::uint32_t id = 0;  // Element id: deferred sends are sorted by it
  int tap = -1;          // gate: the pop of its tap field element
  std::vector<double> x;
  std::vector<bool> active;
  std::vector<Index> entries;  // gate: taps per object; syn: synapses per parent
  std::vector<double> sum;
  std::vector<unsigned> count;
  std::vector<std::vector<double>> w, acc;
  std::vector<std::vector<unsigned>> hits;
};

/// One message as the reference sees it.
struct Link {
  int src, dest;
  Kind kind;
  bool relay;  // call "relay" (re-send) instead of "add" / "hit"
  Target from{}, to{};
  long stride = 0;
  std::vector<std::vector<Index>> rows;  // Sparse: destinations per source, sorted
};

struct Send {
  int pop;
  Index d, f;
  double v;
};

class Net {
 public:
  explicit Net(Model& m) : m_(m) {}

  int adder(const std::string& path, Index n) {
    const int p = add_pop(path, Cls::adder, n, m_.s.create("TestAdder", path, n));
    for (Index i = 0; i < n; ++i) pops_[p].x.push_back(1 + 10.0 * p + 0.37 * i);
    Field<double>::setVec(m_.s, Id(pops_[p].id), "x", pops_[p].x);
    return p;
  }
  /// A TestGate whose object i sends on out when active[i % active.size()] and has
  /// taps[i % taps.size()] tap entries. Returns the gate's pop; its taps are pop + 1.
  int gate(const std::string& path, Index n, const std::vector<bool>& active,
           const std::vector<Index>& taps) {
    const ObjId o = m_.s.create("TestGate", path, n);
    const int p = add_pop(path, Cls::gate, n, o);
    const int t = add_pop(path + "/tap", Cls::tap, n, m_.s.find(path + "/tap"));
    Pop& g = pops_[p];
    g.tap = t;
    std::vector<unsigned> nt;
    for (Index i = 0; i < n; ++i) {
      g.x.push_back(-3 + 10.0 * p + 0.61 * i);
      g.active.push_back(active[i % active.size()]);
      g.entries.push_back(taps[i % taps.size()]);
      nt.push_back(g.entries.back());
      if (!g.active.back()) Field<bool>::set(m_.s, ObjId(o.id, i), "active", false);
    }
    pops_[t].entries = g.entries;
    Field<double>::setVec(m_.s, o.id, "x", g.x);
    Field<unsigned>::setVec(m_.s, o.id, "numTap", nt);
    return p;
  }
  /// A TestReceiver with nsyn synapses per object; returns the pop of its synapses.
  int syn(const std::string& path, Index n, Index nsyn) {
    const ObjId r = m_.s.create("TestReceiver", path, n);
    const int p = add_pop(path + "/syn", Cls::syn, n, m_.s.find(path + "/syn"));
    receivers_.push_back(path);
    Field<unsigned>::setAll(m_.s, r.id, "numSyn", nsyn);
    Pop& pop = pops_[p];
    pop.entries.assign(n, nsyn);
    for (Index d = 0; d < n; ++d) {
      pop.w.emplace_back();
      for (Index f = 0; f < nsyn; ++f) pop.w[d].push_back(1 + 0.1 * d + 0.01 * f);
      Field<double>::setFieldVec(m_.s, ObjId(Id(pops_[p].id), d), "weight", pop.w[d]);
    }
    return p;
  }

  /// Connects src's out to dest; returns the message id. `from`/`to` are used by Single, the
  /// pairs by Sparse, the stride by Diagonal.
  std::uint32_t link(Kind k, int src, int dest, bool relay = false, Target from = {},
                     Target to = {}, long stride = 0, const std::vector<Index>& ps = {},
                     const std::vector<Index>& pd = {}) {
    static const char* names[] = {"Single", "OneToOne", "OneToAll", "Diagonal", "Sparse"};
    const Pop& s = pops_[src];
    const Pop& d = pops_[dest];
    const char* func = d.cls == Cls::syn ? "hit" : (relay || d.cls == Cls::tap) ? "relay" : "add";
    const ObjId so =
        k == Kind::single ? ObjId(Id(s.id), from.data, from.field) : ObjId(Id(s.id), 0);
    const ObjId dO = k == Kind::single ? ObjId(Id(d.id), to.data, to.field) : ObjId(Id(d.id), 0);
    const auto id = m_.s.addMsg(names[static_cast<int>(k)], so, "out", dO, func);
    Link l{src, dest, k, relay || d.cls == Cls::tap, from, to, stride, {}};
    if (k == Kind::diagonal) m_.s.setStride(id, stride);
    if (k == Kind::sparse) {
      m_.s.pairFill(id, ps, pd);
      l.rows.resize(s.n);
      for (std::size_t i = 0; i < ps.size(); ++i) l.rows[ps[i]].push_back(pd[i]);
      for (auto& r : l.rows) std::stable_sort(r.begin(), r.end());
    }
    links_.push_back(l);
    return id;
  }

  /// Schedules every element on tick 0 in creation order (receivers too: their reinit clears).
  void schedule(double dt) {
    m_.s.setClock(0, dt);
    for (const Pop& p : pops_)
      if (p.cls == Cls::adder || p.cls == Cls::gate) m_.s.useClock(0, p.path);
    for (const std::string& r : receivers_) m_.s.useClock(0, r);
  }

  /// The serial reference: reinit, the Shell's `relay` calls (deferred sends), then `steps`
  /// rounds of dt.
  void reference(const std::vector<Send>& shell, int steps, double dt) {
    for (Pop& p : pops_) {
      p.sum.assign(p.n, 0.0);
      p.count.assign(p.n, 0);
      p.acc.assign(p.n, {});
      p.hits.assign(p.n, {});
      if (p.cls == Cls::syn)
        for (Index d = 0; d < p.n; ++d)
          p.acc[d].assign(p.entries[d], 0.0), p.hits[d].assign(p.entries[d], 0);
    }
    std::vector<Send> deferred;
    round(-1, 0.0, deferred);  // what reinit's delivery relays stays queued, as do Shell sends
    deferred.insert(deferred.end(), shell.begin(), shell.end());
    for (int s = 1; s <= steps; ++s) round(s, s * dt, deferred);
  }

  void check() const {
    for (const Pop& p : pops_) {
      CAPTURE(p.path);
      if (p.cls == Cls::adder) {
        CHECK(Field<double>::getVec(m_.s, Id(p.id), "sum") == p.sum);
        CHECK(Field<unsigned>::getVec(m_.s, Id(p.id), "count") == p.count);
      } else if (p.cls == Cls::syn) {
        std::vector<double> acc;
        std::vector<unsigned> hits;
        for (Index d = 0; d < p.n; ++d) {
          acc.insert(acc.end(), p.acc[d].begin(), p.acc[d].end());
          hits.insert(hits.end(), p.hits[d].begin(), p.hits[d].end());
        }
        CHECK(Field<double>::getVec(m_.s, Id(p.id), "acc") == acc);
        CHECK(Field<unsigned>::getVec(m_.s, Id(p.id), "hits") == hits);
      }
    }
  }

  const Pop& pop(int p) const { return pops_[p]; }

 private:
  int add_pop(const std::string& path, Cls c, Index n, ObjId o) {
    Pop p;
    p.path = path;
    p.cls = c;
    p.n = n;
    p.id = o.id.value;
    pops_.push_back(p);
    return static_cast<int>(pops_.size()) - 1;
  }

  /// Targets (data, field) of a send from (d, f) through l, by the kinds' documented rules.
  std::vector<Target> targets(const Link& l, Index d, Index f) const {
    const Pop& s = pops_[l.src];
    const Pop& t = pops_[l.dest];
    const bool srcField = s.cls == Cls::tap, destField = t.cls == Cls::syn || t.cls == Cls::tap;
    std::vector<Target> out;
    switch (l.kind) {
      case Kind::single:
        if (d == l.from.data && (!srcField || f == l.from.field)) out.push_back(l.to);
        break;
      case Kind::oneToOne:
        out.push_back({d, srcField && destField ? f : 0});
        break;
      case Kind::diagonal: {
        const long j = static_cast<long>(d) + l.stride;
        if (j >= 0 && j < static_cast<long>(t.n)) out.push_back({static_cast<Index>(j), 0});
        break;
      }
      case Kind::oneToAll:
        for (Index i = 0; i < t.n; ++i)
          for (Index k = 0; k < (destField ? t.entries[i] : 1); ++k) out.push_back({i, k});
        break;
      case Kind::sparse:
        for (Index j : l.rows[d]) out.push_back({j, 0});
        break;
    }
    return out;
  }

  /// One round: process (or reinit when step < 0) of every scheduled element in order, then
  /// delivery of the deferred sends (sorted) and of the process sends (in order).
  void round(int step, double t, std::vector<Send>& deferred) {
    std::vector<Send> sends;
    for (Pop& p : pops_) {
      if (step < 0) {
        p.sum.assign(p.n, 0.0);
        p.count.assign(p.n, 0);
        for (auto& a : p.acc) std::fill(a.begin(), a.end(), 0.0);
        for (auto& h : p.hits) std::fill(h.begin(), h.end(), 0u);
      }
      const int me = static_cast<int>(&p - pops_.data());
      for (Index d = 0; d < p.n; ++d) {
        if (p.cls == Cls::adder && step >= 0) sends.push_back({me, d, 0, p.x[d] + 0.1 * p.sum[d]});
        if (p.cls != Cls::gate) continue;
        if (step < 0) {
          if (p.active[d]) sends.push_back({me, d, 0, -p.x[d]});
          continue;
        }
        if (p.active[d]) sends.push_back({me, d, 0, p.x[d] + t});
        for (Index k = 0; k < p.entries[d]; ++k) sends.push_back({p.tap, d, k, p.x[d] + t + k});
      }
    }
    std::stable_sort(deferred.begin(), deferred.end(), [&](const Send& a, const Send& b) {
      if (pops_[a.pop].id != pops_[b.pop].id) return pops_[a.pop].id < pops_[b.pop].id;
      if (a.d != b.d) return a.d < b.d;
      return a.f < b.f;
    });
    std::vector<Send> next;
    for (const auto* list : {&deferred, &sends})
      for (const Send& s : *list)
        for (const Link& l : links_) {
          if (l.src != s.pop) continue;
          Pop& t = pops_[l.dest];
          for (const Target& x : targets(l, s.d, s.f)) {
            if (l.relay)
              next.push_back({l.dest, x.data, x.field, s.v});
            else if (t.cls == Cls::syn)
              t.acc[x.data][x.field] += t.w[x.data][x.field] * s.v, ++t.hits[x.data][x.field];
            else
              t.sum[x.data] = 0.5 * t.sum[x.data] + s.v, ++t.count[x.data];
          }
        }
    deferred = std::move(next);
  }

  Model& m_;
  std::vector<Pop> pops_;
  std::vector<Link> links_;
  std::vector<std::string> receivers_;
};

/// Pseudo-random pairs: source s connects to a few destinations (some rows empty, some targets
/// repeated, rows unsorted).
void pairs(Index nsrc, Index ndest, std::vector<Index>& ps, std::vector<Index>& pd) {
  for (Index s = 0; s < nsrc; ++s) {
    if (s % 4 == 3) continue;
    for (Index k = 0; k < 1 + s % 3; ++k) {
      ps.push_back(s);
      pd.push_back((s * 7 + 5 * k + 3) % ndest);
    }
    if (s % 5 == 0) ps.push_back(s), pd.push_back((s * 7 + 3) % ndest);  // a repeated target
  }
}

void run_and_check(Model& m, Net& net, const std::vector<Send>& shell, int steps, double dt) {
  Shell& s = m.s;
  net.reference(shell, steps, dt);
  for (unsigned threads : {1u, 2u, 3u}) {
    CAPTURE(threads);
    m.s.setNumThreads(threads);
    m.s.reinit();
    for (const Send& c : shell)
      SetGet::call(s, ObjId(Id(net.pop(c.pop).id), c.d, c.f), "relay", c.v);
    m.s.start(steps * dt);
    net.check();
  }
}

}  // namespace

TEST_CASE("every message kind through the fast, per-record, multi-message and deferred paths") {
  Model m;
  Net net(m);
  const Index n = 11;
  const std::vector<bool> some{true, false, true, true, false, false,
                               true, false, true, true, true};
  std::vector<Index> ps, pd;

  // Dense batches, one message per port: fast for OneToOne and Diagonal between data elements,
  // per record for the other kinds and for field-element destinations.
  net.link(Kind::oneToOne, net.adder("/a1", n), net.adder("/d1", n));
  net.link(Kind::diagonal, net.adder("/a2", n), net.adder("/d2", n + 1), false, {}, {}, 2);
  net.link(Kind::diagonal, net.adder("/a3", n), net.adder("/d3", n - 2), false, {}, {}, -3);
  net.link(Kind::oneToAll, net.adder("/a4", n), net.adder("/d4", 5));
  net.link(Kind::single, net.adder("/a5", n), net.adder("/d5", 6), false, {4, 0}, {2, 0});
  pairs(n, 8, ps, pd);
  net.link(Kind::sparse, net.adder("/a6", n), net.adder("/d6", 8), false, {}, {}, 0, ps, pd);
  net.link(Kind::oneToOne, net.adder("/a7", n), net.syn("/s7", n, 2));
  net.link(Kind::diagonal, net.adder("/a8", n), net.syn("/s8", n - 1, 1), false, {}, {}, -1);
  net.link(Kind::oneToAll, net.adder("/a9", n), net.syn("/s9", 4, 3));

  // Sends that skip objects (indexed batches), one message per port: per record for every kind.
  net.link(Kind::oneToOne, net.gate("/g1", n, some, {0}), net.adder("/e1", n));
  net.link(Kind::diagonal, net.gate("/g2", n, some, {0}), net.adder("/e2", n + 1), false, {}, {},
           2);
  net.link(Kind::diagonal, net.gate("/g3", n, some, {0}), net.adder("/e3", n - 2), false, {}, {},
           -3);
  net.link(Kind::oneToAll, net.gate("/g4", n, some, {0}), net.adder("/e4", 5));
  net.link(Kind::single, net.gate("/g5", n, some, {0}), net.adder("/e5", 6), false, {6, 0}, {5, 0});
  net.link(Kind::sparse, net.gate("/g6", n, some, {0}), net.adder("/e6", 8), false, {}, {}, 0, ps,
           pd);

  // One port, every kind: record by record, message by message (two messages into one target
  // element, so their interleaving shows in its fold).
  const int mu = net.adder("/m", n);
  const int m1 = net.adder("/m1", n), m2 = net.adder("/m2", n);
  net.link(Kind::oneToOne, mu, m1);
  net.link(Kind::diagonal, mu, m2, false, {}, {}, -1);
  net.link(Kind::diagonal, mu, m2, false, {}, {}, 3);
  net.link(Kind::oneToAll, mu, net.adder("/m3", 4));
  net.link(Kind::single, mu, m1, false, {7, 0}, {0, 0});
  net.link(Kind::sparse, mu, m2, false, {}, {}, 0, ps, pd);
  net.link(Kind::oneToOne, mu, net.syn("/ms", n, 1));

  // Sends from field entries (TestGate's taps carry a field index): every kind, several messages
  // on the tap port; and a tap port with a single message.
  const int t = net.gate("/t", n, some, {0, 1, 2});
  const int tap = net.pop(t).tap;
  net.link(Kind::single, tap, net.adder("/f1", 5), false, {4, 1}, {3, 0});
  net.link(Kind::oneToOne, tap, net.syn("/fs", n, 2));  // field to field: the entry index carries
  net.link(Kind::oneToAll, tap, net.adder("/f2", 5));
  net.link(Kind::sparse, tap, net.adder("/f3", 8), false, {}, {}, 0, ps, pd);
  net.link(Kind::diagonal, tap, net.adder("/f4", n + 1), false, {}, {}, 1);
  net.link(Kind::oneToOne, t, net.adder("/f5", n));  // the gate's own port
  const int t2 = net.gate("/t2", n, {false}, {2, 0, 1});
  net.link(Kind::diagonal, net.pop(t2).tap, net.adder("/f6", n - 2), false, {}, {}, -2);

  // Deferred sends: relays (dest functions that send) on a port with several messages and on one
  // with a single message, relays from tap entries, and Shell calls.
  const int src = net.adder("/src", 9);
  const int r = net.adder("/r", 9);
  net.link(Kind::oneToOne, src, r, true);  // the fast path into a dest that sends
  net.link(Kind::diagonal, r, net.adder("/h1", 9), false, {}, {}, -2);
  std::vector<Index> ps9, pd5;
  pairs(9, 5, ps9, pd5);
  net.link(Kind::sparse, r, net.adder("/h2", 5), false, {}, {}, 0, ps9, pd5);
  net.link(Kind::oneToAll, r, net.adder("/h3", 3));
  net.link(Kind::single, r, net.adder("/h4", 2), false, {8, 0}, {1, 0});
  const int r2 = net.adder("/r2", 9), src2 = net.adder("/src2", 3);
  net.link(Kind::oneToAll, src2, r2, true);  // each r2 relays 3 values a step
  net.link(Kind::diagonal, r2, net.adder("/h5", 10), false, {}, {}, 1);
  // r3's relays are made record by record (every r3 for src2's first value, then every r3 for the
  // second, ...), so only the sort by source index gives h7 the serial order.
  const int r3 = net.adder("/r3", 9);
  net.link(Kind::oneToAll, src2, r3, true);
  net.link(Kind::oneToAll, r3, net.adder("/h7", 3));
  const int t3 = net.gate("/t3", 7, {false}, {1, 2, 0});
  net.link(Kind::oneToAll, net.adder("/src3", 2), net.pop(t3).tap);  // every tap relays
  net.link(Kind::single, net.pop(t3).tap, net.adder("/h6", 2), false, {5, 1}, {1, 0});
  net.link(Kind::oneToOne, net.pop(t3).tap, net.syn("/hs", 7, 2));

  net.schedule(0.5);
  // Out of index order, also within one node at every node count (r[8] before r[7], r[1] before
  // r[0]), and twice on r[5] (those two keep their order).
  const std::vector<Send> shell{
      {r, 5, 0, 100.0}, {r2, 8, 0, -7.0}, {r, 1, 0, 50.0}, {net.pop(t3).tap, 4, 1, 3.0},
      {r2, 0, 0, 2.5},  {r, 5, 0, 9.0},   {r, 8, 0, 4.0},  {r, 7, 0, 6.0},
      {r, 0, 0, -1.0}};
  run_and_check(m, net, shell, 3, 0.5);
}

TEST_CASE("Diagonal: every stride, negative and past either end, on the fast and record paths") {
  Model m;
  Net net(m);
  const Index n = 11;
  const int multi = net.adder("/multi", n);
  const int all = net.adder("/all", n);
  for (long s : {-12L, -11L, -10L, -5L, -1L, 0L, 1L, 4L, 10L, 11L}) {
    const std::string tag = std::to_string(s + 20);
    net.link(Kind::diagonal, net.adder("/a" + tag, n), net.adder("/d" + tag, n), false, {}, {}, s);
    net.link(Kind::diagonal, net.gate("/g" + tag, n, {true, true, false}, {0}),
             net.adder("/e" + tag, n - 3), false, {}, {}, s);
    net.link(Kind::diagonal, multi, all, false, {}, {}, s);  // ten messages on one port
  }
  net.schedule(1.0);
  run_and_check(m, net, {}, 2, 1.0);
}
