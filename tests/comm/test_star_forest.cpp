// StarForest on both backends: seeded random graphs (contiguous and sparse reversed ilocal,
// repeated roots, roots of degree 0 and of degree >> P, leaves on the root's own rank) against
// the serial reference of sf_reference.hpp, for every operation, several units and block sizes,
// several operations in flight, every backend forced; MPI at the ranks this binary runs on,
// comm::Local at P up to 256. Then graph algebra, the note's algorithms and misuse.
#include <doctest/doctest.h>

#include <boost/serialization/string.hpp>
#include <cstring>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "core/comm/consensus.hpp"
#include "core/comm/local.hpp"
#include "core/comm/mpi.hpp"
#include "core/comm/star_forest.hpp"
#include "core/error.hpp"
#include "tests/comm/sf_reference.hpp"

using namespace antler;
using namespace antler::comm;
using antler::test::leaf_value;
using antler::test::make_graph;
using antler::test::root_value;
using antler::test::SfGraph;

namespace {

bool single_process() {
  return Comm::world().size() == 1;
}

/// An order-sensitive reduce class that is trivially copyable (travels as bytes).
struct Chain {
  std::uint64_t h = 1;
  void tertiaryReduce(const Chain& o) { h = h * 1000003u ^ o.h; }
  bool operator==(const Chain&) const = default;
};
/// An order-sensitive reduce class that is not (travels Boost-serialized).
struct Concat {
  std::string s;
  void tertiaryReduce(const Concat& o) { s += o.s + ";"; }
  template <class A>
  void serialize(A& ar, unsigned) {
    ar& s;
  }
  bool operator==(const Concat&) const = default;
};

struct Failures {
  std::vector<std::string> list;
  void expect(bool ok, const std::string& what) {
    if (!ok && list.size() < 20) list.push_back(what);
  }
};

std::string where(const char* op, int me, std::int64_t i) {
  return std::string(op) + " on rank " + std::to_string(me) + " at " + std::to_string(i);
}

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

/// Every operation on forest `sf` (set up from G on this rank) against the serial reference.
void exercise(Comm& c, const SfGraph& G, StarForest& sf, Failures& f) {
  const int me = c.rank();
  const auto in = G.incoming();
  const auto nroots = static_cast<std::size_t>(G.nroots[me]);
  const auto extent = static_cast<std::size_t>(G.extent(me));
  std::vector<std::int64_t> rootOfLeafRank(extent, -1), rootOfLeafIndex(extent, -1);
  for (std::size_t i = 0; i < G.iremote[me].size(); ++i) {
    const auto l = static_cast<std::size_t>(G.leafIndex(me, i));
    rootOfLeafRank[l] = G.iremote[me][i].rank;
    rootOfLeafIndex[l] = G.iremote[me][i].index;
  }

  // Degrees, ranks.
  {
    auto d = sf.computeDegree();
    for (std::size_t r = 0; r < nroots; ++r)
      f.expect(d[r] == static_cast<std::int64_t>(in[me][r].size()), where("degree", me, r));
    std::vector<int> rr, lr;
    for (auto& n : G.iremote[me]) rr.push_back(static_cast<int>(n.rank));
    for (auto& root : in[me])
      for (auto& [q, l] : root) lr.push_back(q);
    for (auto* v : {&rr, &lr}) {
      std::sort(v->begin(), v->end());
      v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    f.expect(std::vector<int>(sf.rootRanks().begin(), sf.rootRanks().end()) == rr, "rootRanks");
    f.expect(std::vector<int>(sf.leafRanks().begin(), sf.leafRanks().end()) == lr, "leafRanks");
  }

  for (std::size_t bs : {std::size_t{1}, std::size_t{3}}) {
    // bcast, replace: every leaf gets its root's units; leaves without a root keep theirs.
    std::vector<double> root(nroots * bs), leaf(extent * bs, -7.0);
    for (std::size_t r = 0; r < nroots; ++r)
      for (std::size_t j = 0; j < bs; ++j) root[r * bs + j] = root_value(me, r, j);
    sf.bcast(std::span<const double>(root), std::span<double>(leaf), ops::replace{}, bs);
    for (std::size_t l = 0; l < extent; ++l)
      for (std::size_t j = 0; j < bs; ++j) {
        const double want = rootOfLeafRank[l] < 0 ? -7.0
                                                  : root_value(static_cast<int>(rootOfLeafRank[l]),
                                                               rootOfLeafIndex[l], j);
        f.expect(same_bits(leaf[l * bs + j], want), where("bcast replace", me, l));
      }
    // bcast with sum into the leaf.
    sf.bcast(std::span<const double>(root), std::span<double>(leaf), ops::sum{}, bs);
    for (std::size_t l = 0; l < extent; ++l)
      for (std::size_t j = 0; j < bs; ++j) {
        if (rootOfLeafRank[l] < 0) continue;
        const double v = root_value(static_cast<int>(rootOfLeafRank[l]), rootOfLeafIndex[l], j);
        f.expect(same_bits(leaf[l * bs + j], v + v), where("bcast sum", me, l));
      }

    // reduce sum of doubles: the documented order, bit for bit.
    std::vector<double> lv(extent * bs);
    for (std::size_t l = 0; l < extent; ++l)
      for (std::size_t j = 0; j < bs; ++j) lv[l * bs + j] = leaf_value(me, l, j);
    sf.reduce(std::span<const double>(lv), std::span<double>(root), ops::sum{}, bs);
    for (std::size_t r = 0; r < nroots; ++r)
      for (std::size_t j = 0; j < bs; ++j) {
        double want = root_value(me, r, j);
        for (auto& [q, l] : in[me][r]) want += leaf_value(q, l, j);
        f.expect(same_bits(root[r * bs + j], want), where("reduce sum", me, r));
      }
    // reduce prod.
    for (std::size_t r = 0; r < nroots; ++r)
      for (std::size_t j = 0; j < bs; ++j) root[r * bs + j] = root_value(me, r, j);
    std::vector<double> pv(extent * bs);
    for (std::size_t l = 0; l < extent; ++l)
      for (std::size_t j = 0; j < bs; ++j)
        pv[l * bs + j] = 1.0 + 1e-3 * static_cast<double>((me * 13 + l * 7 + j) % 17);
    sf.reduce(std::span<const double>(pv), std::span<double>(root), ops::prod{}, bs);
    for (std::size_t r = 0; r < nroots; ++r)
      for (std::size_t j = 0; j < bs; ++j) {
        double want = root_value(me, r, j);
        for (auto& [q, l] : in[me][r])
          want *= 1.0 + 1e-3 * static_cast<double>((q * 13 + l * 7 + j) % 17);
        f.expect(same_bits(root[r * bs + j], want), where("reduce prod", me, r));
      }
  }

  // Integer ops, and replace (the last leaf in the documented order wins).
  auto ival = [](int q, std::int64_t l) {
    return static_cast<std::int64_t>((q * 37 + l * 11) % 23) - 9;
  };
  auto iroot = [](int q, std::int64_t r) { return static_cast<std::int64_t>((q + r * 5) % 7); };
  std::vector<std::int64_t> il(extent);
  for (std::size_t l = 0; l < extent; ++l) il[l] = ival(me, l);
  auto run_int = [&](auto op, const char* name, auto ref) {
    std::vector<std::int64_t> root(nroots);
    for (std::size_t r = 0; r < nroots; ++r) root[r] = iroot(me, r);
    sf.reduce(std::span<const std::int64_t>(il), std::span<std::int64_t>(root), op);
    for (std::size_t r = 0; r < nroots; ++r) {
      std::int64_t want = iroot(me, r);
      for (auto& [q, l] : in[me][r]) want = ref(want, ival(q, l));
      f.expect(root[r] == want, where(name, me, r));
    }
  };
  run_int(ops::max{}, "max", [](auto a, auto b) { return std::max(a, b); });
  run_int(ops::min{}, "min", [](auto a, auto b) { return std::min(a, b); });
  run_int(ops::land{}, "land", [](auto a, auto b) { return std::int64_t(a && b); });
  run_int(ops::lor{}, "lor", [](auto a, auto b) { return std::int64_t(a || b); });
  run_int(ops::band{}, "band", [](auto a, auto b) { return a & b; });
  run_int(ops::bor{}, "bor", [](auto a, auto b) { return a | b; });
  run_int(ops::replace{}, "replace", [](auto, auto b) { return b; });

  // maxloc and minloc: (value, location) pairs; ties go to the lower location.
  {
    std::vector<ValueLoc<double>> lvl(extent), root(nroots);
    auto v = [](int q, std::int64_t l) { return static_cast<double>((q * 3 + l) % 5); };
    for (std::size_t l = 0; l < extent; ++l) lvl[l] = {v(me, l), static_cast<int>(me * 1000 + l)};
    for (auto [opMax, name] : {std::pair{true, "maxloc"}, std::pair{false, "minloc"}}) {
      for (std::size_t r = 0; r < nroots; ++r) root[r] = {2.0, 1 << 30};
      if (opMax)
        sf.reduce(std::span<const ValueLoc<double>>(lvl), std::span<ValueLoc<double>>(root),
                  ops::maxloc{});
      else
        sf.reduce(std::span<const ValueLoc<double>>(lvl), std::span<ValueLoc<double>>(root),
                  ops::minloc{});
      for (std::size_t r = 0; r < nroots; ++r) {
        ValueLoc<double> want{2.0, 1 << 30};
        for (auto& [q, l] : in[me][r]) {
          ValueLoc<double> x{v(q, l), static_cast<int>(q * 1000 + l)};
          want = opMax ? ops::maxloc{}(want, x) : ops::minloc{}(want, x);
        }
        f.expect(root[r] == want, where(name, me, r));
      }
    }
  }

  // Reduce classes: order-sensitive, trivially copyable and serialized.
  {
    std::vector<Chain> lc(extent), rc(nroots);
    for (std::size_t l = 0; l < extent; ++l) lc[l].h = static_cast<std::uint64_t>(me * 100003 + l);
    sf.reduce(std::span<const Chain>(lc), std::span<Chain>(rc), ops::reduce_class{});
    std::vector<Concat> ls(extent), rs(nroots);
    for (std::size_t l = 0; l < extent; ++l) ls[l].s = std::to_string(me) + ":" + std::to_string(l);
    for (std::size_t r = 0; r < nroots; ++r) rs[r].s = "root" + std::to_string(r);
    sf.reduce(std::span<const Concat>(ls), std::span<Concat>(rs), ops::reduce_class{});
    for (std::size_t r = 0; r < nroots; ++r) {
      Chain want;
      Concat wants{"root" + std::to_string(r)};
      for (auto& [q, l] : in[me][r]) {
        want.tertiaryReduce(Chain{static_cast<std::uint64_t>(q * 100003 + l)});
        wants.tertiaryReduce(Concat{std::to_string(q) + ":" + std::to_string(l)});
      }
      f.expect(rc[r] == want, where("reduce_class Chain", me, r));
      f.expect(rs[r] == wants, where("reduce_class Concat", me, r));
    }
    // A serialized bcast too.
    std::vector<Concat> got(extent, Concat{"none"});
    sf.bcast(std::span<const Concat>(rs), std::span<Concat>(got));
    for (std::size_t l = 0; l < extent; ++l) {
      if (rootOfLeafRank[l] < 0) {
        f.expect(got[l].s == "none", where("bcast Concat (no root)", me, l));
        continue;
      }
      Concat want{"root" + std::to_string(rootOfLeafIndex[l])};
      for (auto& [q, ll] : in[static_cast<std::size_t>(rootOfLeafRank[l])]
                             [static_cast<std::size_t>(rootOfLeafIndex[l])])
        want.tertiaryReduce(Concat{std::to_string(q) + ":" + std::to_string(ll)});
      f.expect(got[l] == want, where("bcast Concat", me, l));
    }
  }

  // fetchAndOp: each leaf sees its root before its own update, in the documented order.
  {
    std::vector<double> root(nroots), upd(extent, -1.0), lv(extent);
    for (std::size_t r = 0; r < nroots; ++r) root[r] = root_value(me, r, 0);
    for (std::size_t l = 0; l < extent; ++l) lv[l] = leaf_value(me, l, 0);
    sf.fetchAndOp(std::span<double>(root), std::span<const double>(lv), std::span<double>(upd),
                  ops::sum{});
    for (std::size_t r = 0; r < nroots; ++r) {
      double acc = root_value(me, r, 0);
      for (auto& [q, l] : in[me][r]) acc += leaf_value(q, l, 0);
      f.expect(same_bits(root[r], acc), where("fetchAndOp root", me, r));
    }
    for (std::size_t l = 0; l < extent; ++l) {
      if (rootOfLeafRank[l] < 0) {
        f.expect(upd[l] == -1.0, where("fetchAndOp untouched", me, l));
        continue;
      }
      const auto q0 = static_cast<int>(rootOfLeafRank[l]);
      const auto r0 = rootOfLeafIndex[l];
      double acc = root_value(q0, r0, 0);
      for (auto& [q, ll] : in[q0][static_cast<std::size_t>(r0)]) {
        if (q == me && ll == static_cast<std::int64_t>(l)) break;
        acc += leaf_value(q, ll, 0);
      }
      f.expect(same_bits(upd[l], acc), where("fetchAndOp fetched", me, l));
    }
  }

  // gather and scatter through the multi-root forest.
  {
    std::vector<std::int64_t> offset(nroots + 1, 0);
    for (std::size_t r = 0; r < nroots; ++r)
      offset[r + 1] = offset[r] + static_cast<std::int64_t>(in[me][r].size());
    const std::size_t bs = 2;
    std::vector<int> lv(extent * bs), multi(static_cast<std::size_t>(offset[nroots]) * bs, -1);
    for (std::size_t l = 0; l < extent; ++l)
      for (std::size_t j = 0; j < bs; ++j)
        lv[l * bs + j] = static_cast<int>(me * 10000 + l * 2 + j);
    sf.gather(std::span<const int>(lv), std::span<int>(multi), bs);
    for (std::size_t r = 0; r < nroots; ++r)
      for (std::size_t k = 0; k < in[me][r].size(); ++k)
        for (std::size_t j = 0; j < bs; ++j) {
          auto [q, l] = in[me][r][k];
          f.expect(multi[(static_cast<std::size_t>(offset[r]) + k) * bs + j] ==
                       static_cast<int>(q * 10000 + l * 2 + j),
                   where("gather", me, r));
        }
    for (auto& x : multi) x = x * 3 + 1;
    std::vector<int> back(extent * bs, -5);
    sf.scatter(std::span<const int>(multi), std::span<int>(back), bs);
    for (std::size_t l = 0; l < extent; ++l)
      for (std::size_t j = 0; j < bs; ++j)
        f.expect(back[l * bs + j] == (rootOfLeafRank[l] < 0 ? -5 : lv[l * bs + j] * 3 + 1),
                 where("scatter", me, l));
  }

  // Variable payloads.
  {
    Payloads roots, leaves;
    for (std::size_t r = 0; r < nroots; ++r)
      roots.push_back(std::string(r % 4, 'x') + "R" + std::to_string(me) + "." + std::to_string(r));
    Payloads got;
    sf.bcastv(roots, got);
    f.expect(got.size() == extent, "bcastv size");
    for (std::size_t l = 0; l < extent && got.size() == extent; ++l) {
      std::string want;
      if (rootOfLeafRank[l] >= 0)
        want = std::string(static_cast<std::size_t>(rootOfLeafIndex[l]) % 4, 'x') + "R" +
               std::to_string(rootOfLeafRank[l]) + "." + std::to_string(rootOfLeafIndex[l]);
      f.expect(std::string(got[l].begin(), got[l].end()) == want, where("bcastv", me, l));
    }
    for (std::size_t l = 0; l < extent; ++l)
      leaves.push_back("<" + std::to_string(me) + "," + std::to_string(l) + ">");
    Payloads merged = roots;
    sf.reducev(leaves, merged);
    for (std::size_t r = 0; r < nroots; ++r) {
      std::string want(roots[r].begin(), roots[r].end());
      for (auto& [q, l] : in[me][r])
        want += "<" + std::to_string(q) + "," + std::to_string(l) + ">";
      f.expect(std::string(merged[r].begin(), merged[r].end()) == want, where("reducev", me, r));
    }
  }

  // Several operations in flight, ended in another order than begun.
  {
    std::vector<double> rootA(nroots), rootB(nroots, 0.0), leafA(extent, 0.0), leafC(extent, 0.0),
        lv(extent);
    for (std::size_t r = 0; r < nroots; ++r) rootA[r] = root_value(me, r, 1);
    for (std::size_t l = 0; l < extent; ++l) lv[l] = leaf_value(me, l, 2);
    std::vector<int> rootI(nroots, 0), leafI(extent, 1);
    sf.bcastBegin(std::span<const double>(rootA), std::span<double>(leafA));
    sf.reduceBegin(std::span<const double>(lv), std::span<double>(rootB), ops::sum{});
    sf.bcastBegin(std::span<const double>(rootA), std::span<double>(leafC), ops::sum{});
    sf.reduceBegin(std::span<const int>(leafI), std::span<int>(rootI), ops::sum{});
    f.expect(sf.inFlight() == 4, "four in flight");
    sf.reduceEnd(std::span<const int>(leafI), std::span<int>(rootI), ops::sum{});
    sf.bcastEnd(std::span<const double>(rootA), std::span<double>(leafC), ops::sum{});
    sf.reduceEnd(std::span<const double>(lv), std::span<double>(rootB), ops::sum{});
    sf.bcastEnd(std::span<const double>(rootA), std::span<double>(leafA));
    f.expect(sf.inFlight() == 0, "none in flight");
    for (std::size_t r = 0; r < nroots; ++r) {
      double want = 0.0;
      for (auto& [q, l] : in[me][r]) want += leaf_value(q, l, 2);
      f.expect(same_bits(rootB[r], want), where("in flight: reduce", me, r));
      f.expect(rootI[r] == static_cast<int>(in[me][r].size()), where("in flight: count", me, r));
    }
    for (std::size_t l = 0; l < extent; ++l) {
      const double want = rootOfLeafRank[l] < 0 ? 0.0
                                                : root_value(static_cast<int>(rootOfLeafRank[l]),
                                                             rootOfLeafIndex[l], 1);
      f.expect(same_bits(leafA[l], want), where("in flight: bcast", me, l));
      f.expect(same_bits(leafC[l], want), where("in flight: bcast sum", me, l));
    }
  }
}

/// Builds the forest of G on this rank with backend b and exercises it.
void run_graph(Comm& c, const SfGraph& G, SfBackend b, Failures& f) {
  const int me = c.rank();
  StarForest sf(c);
  sf.setBackend(b);
  sf.setGraph(G.nroots[me], G.nleaves[me], G.ilocal[me], G.iremote[me]);
  sf.setUp();
  f.expect(b == SfBackend::automatic || sf.backend() == b, "the forced backend");
  exercise(c, G, sf, f);
}

const SfBackend kBackends[] = {SfBackend::automatic, SfBackend::p2p, SfBackend::neighbour,
                               SfBackend::allgatherv};

}  // namespace

TEST_CASE("StarForest on MPI: every operation against the serial reference, every backend") {
  Comm c = Comm::world();
  for (int shape = 0; shape < 4; ++shape)
    for (SfBackend b : kBackends) {
      CAPTURE(shape);
      CAPTURE(to_string(b));
      const SfGraph G = make_graph(c.size(), 11, shape, 40);
      Failures f;
      run_graph(c, G, b, f);
      for (auto& s : f.list) FAIL_CHECK(s);
      CHECK(f.list.empty());
    }
}

TEST_CASE("StarForest on Local: P up to 256, every backend, against the serial reference") {
  if (!single_process()) return;
  for (int P : {1, 2, 3, 5, 8, 17, 64, 256}) {
    for (int shape = 0; shape < 4; ++shape)
      for (SfBackend b : kBackends) {
        if (P > 17 && b != SfBackend::p2p && b != SfBackend::automatic && shape != 2) continue;
        CAPTURE(P);
        CAPTURE(shape);
        CAPTURE(to_string(b));
        const SfGraph G = make_graph(P, 5, shape, P > 17 ? 6 : 25);
        std::vector<Failures> f(static_cast<std::size_t>(P));
        run_local(P, [&](Comm& c) { run_graph(c, G, b, f[static_cast<std::size_t>(c.rank())]); });
        for (auto& fr : f)
          for (auto& s : fr.list) FAIL_CHECK(s);
      }
  }
}
