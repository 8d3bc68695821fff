// StarForest, continued: forests built from forests (compose, embedded roots) against the
// serial reference; the note's algorithms (ghost update, assembly, ownership discovery and
// transfer, graph distribution) checked against a serial computation of the same; the
// non-blocking consensus with its exact message counts at P = 1024; and misuse, on every rank.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "core/comm/collectives.hpp"
#include "core/comm/consensus.hpp"
#include "core/comm/local.hpp"
#include "core/comm/mpi.hpp"
#include "core/comm/star_forest.hpp"
#include "core/error.hpp"
#include "tests/comm/sf_reference.hpp"

using namespace antler;
using namespace antler::comm;
using antler::test::make_graph;
using antler::test::Rng;
using antler::test::SfGraph;

namespace {

bool single_process() {
  return Comm::world().size() == 1;
}

/// A forest's edges on this rank as (leaf index, root), by leaf index.
std::vector<std::pair<std::int64_t, SfNode>> edges_of(const StarForest& sf) {
  std::vector<std::pair<std::int64_t, SfNode>> e;
  for (std::size_t i = 0; i < sf.iremote().size(); ++i)
    e.push_back({sf.leafIndex(static_cast<std::int64_t>(i)), sf.iremote()[i]});
  std::sort(e.begin(), e.end(), [](auto& a, auto& b) { return a.first < b.first; });
  return e;
}

StarForest make_forest(Comm& c, const SfGraph& G) {
  const int me = c.rank();
  StarForest sf(c);
  sf.setGraph(G.nroots[me], G.nleaves[me], G.ilocal[me], G.iremote[me]);
  sf.setUp();
  return sf;
}

/// compose and embedRoots on this rank; failures as text (checked by the caller's thread).
void check_algebra(Comm& c, int shape, std::vector<std::string>& fail) {
  const int P = c.size(), me = c.rank();
  const SfGraph AB = make_graph(P, 21, shape, 12);
  // bc's roots are ab's leaf space, plus one more on odd ranks (a root that no ab leaf is).
  std::vector<std::int64_t> bcRoots(static_cast<std::size_t>(P));
  for (int q = 0; q < P; ++q) bcRoots[q] = AB.extent(q) + (q % 2);
  const SfGraph BC = make_graph(P, 22, shape == 2 ? 0 : shape, 12, bcRoots);
  StarForest ab = make_forest(c, AB), bc = make_forest(c, BC);
  StarForest ac = StarForest::compose(ab, bc);
  // Reference: leaf l of bc on rank me names root (q, b) of bc = leaf b of ab on rank q.
  std::vector<std::pair<std::int64_t, SfNode>> want;
  for (std::size_t i = 0; i < BC.iremote[me].size(); ++i) {
    const SfNode b = BC.iremote[me][i];
    const int q = static_cast<int>(b.rank);
    for (std::size_t k = 0; k < AB.iremote[q].size(); ++k)
      if (AB.leafIndex(q, k) == b.index) want.push_back({BC.leafIndex(me, i), AB.iremote[q][k]});
  }
  std::sort(want.begin(), want.end(), [](auto& a, auto& b) { return a.first < b.first; });
  if (edges_of(ac) != want) fail.push_back("compose on rank " + std::to_string(me));
  if (ac.numRoots() != AB.nroots[me]) fail.push_back("compose: roots");

  // Embedded: the roots whose index is a multiple of 3.
  std::vector<std::int64_t> keep;
  for (std::int64_t r = 0; r < AB.nroots[me]; r += 3) keep.push_back(r);
  StarForest em = ab.embedRoots(keep);
  std::vector<std::pair<std::int64_t, SfNode>> wantEm;
  for (std::size_t i = 0; i < AB.iremote[me].size(); ++i)
    if (AB.iremote[me][i].index % 3 == 0)
      wantEm.push_back({AB.leafIndex(me, i), AB.iremote[me][i]});
  std::sort(wantEm.begin(), wantEm.end(), [](auto& a, auto& b) { return a.first < b.first; });
  if (edges_of(em) != wantEm) fail.push_back("embedRoots on rank " + std::to_string(me));
  // And the embedded forest works: a bcast reaches only the kept leaves.
  std::vector<double> roots(static_cast<std::size_t>(AB.nroots[me]));
  for (std::size_t r = 0; r < roots.size(); ++r) roots[r] = me * 1000.0 + static_cast<double>(r);
  std::vector<double> leaves(static_cast<std::size_t>(AB.extent(me)), -1.0);
  em.bcast(std::span<const double>(roots), std::span<double>(leaves));
  for (std::size_t i = 0; i < AB.iremote[me].size(); ++i) {
    const SfNode n = AB.iremote[me][i];
    const double w = n.index % 3 == 0 ? n.rank * 1000.0 + static_cast<double>(n.index) : -1.0;
    if (leaves[static_cast<std::size_t>(AB.leafIndex(me, i))] != w)
      fail.push_back("embedded bcast on rank " + std::to_string(me));
  }
}

}  // namespace

TEST_CASE("StarForest: compose and embedRoots equal the serial reference (MPI and Local)") {
  Comm world = Comm::world();
  for (int shape = 0; shape < 4; ++shape) {
    std::vector<std::string> fail;
    check_algebra(world, shape, fail);
    for (auto& s : fail) FAIL_CHECK(s);
  }
  if (!single_process()) return;
  for (int P : {1, 2, 3, 7, 16, 64}) {
    std::vector<std::vector<std::string>> fail(static_cast<std::size_t>(P));
    for (int shape = 0; shape < 4; ++shape)
      run_local(
          P, [&](Comm& c) { check_algebra(c, shape, fail[static_cast<std::size_t>(c.rank())]); });
    for (auto& f : fail)
      for (auto& s : f) FAIL_CHECK(s);
  }
}

// ---- the note's algorithms ----

namespace {

/// Ghost update and assembly on a 1-D mesh of N points split in blocks: each rank owns its block
/// (roots) and sees its points plus one ghost on each side (leaves; its own points are leaves of
/// its own roots). bcast fills the ghosts; reduce SUM assembles element contributions.
void ghost_and_assembly(Comm& c, std::int64_t N, std::vector<std::string>& fail) {
  const int P = c.size(), me = c.rank();
  auto first = [&](int q) { return N * q / P; };
  const std::int64_t lo = first(me), hi = first(me + 1);
  auto owner = [&](std::int64_t g) {
    int q = static_cast<int>(g * P / N);
    while (first(q) > g) --q;
    while (first(q + 1) <= g) ++q;
    return q;
  };
  // Local points: [lo - 1, hi] clipped to the mesh (ghosts at both ends).
  const std::int64_t a = std::max<std::int64_t>(0, lo - 1), b = std::min(N, hi + 1);
  std::vector<SfNode> remote;
  for (std::int64_t g = a; g < b; ++g) remote.push_back({owner(g), g - first(owner(g))});
  StarForest sf(c);
  sf.setGraph(hi - lo, b - a, {}, remote);
  sf.setUp();
  // Ghost update: every local point gets its owner's value u(g) = g * g.
  std::vector<double> owned(static_cast<std::size_t>(hi - lo)), local(remote.size(), -1);
  for (std::int64_t g = lo; g < hi; ++g) owned[static_cast<std::size_t>(g - lo)] = double(g * g);
  sf.bcast(std::span<const double>(owned), std::span<double>(local));
  for (std::int64_t g = a; g < b; ++g)
    if (local[static_cast<std::size_t>(g - a)] != double(g * g))
      fail.push_back("ghost update: point " + std::to_string(g) + " on rank " + std::to_string(me));
  // Assembly: linear elements (g, g+1) for g in [lo, hi) with g + 1 < N, each adding 1 to both
  // ends (the mass-lumping pattern): the assembled value is the degree of each point.
  std::vector<double> contrib(remote.size(), 0.0), assembled(owned.size(), 0.0);
  for (std::int64_t g = lo; g < hi && g + 1 < N; ++g) {
    contrib[static_cast<std::size_t>(g - a)] += 1;
    contrib[static_cast<std::size_t>(g + 1 - a)] += 1;
  }
  sf.reduce(std::span<const double>(contrib), std::span<double>(assembled), ops::sum{});
  for (std::int64_t g = lo; g < hi; ++g) {
    const double degree = (g > 0) + (g + 1 < N);
    if (assembled[static_cast<std::size_t>(g - lo)] != degree)
      fail.push_back("assembly: point " + std::to_string(g) + " on rank " + std::to_string(me));
  }
}

/// Ownership discovery and transfer (the note's four steps): each rank holds items that belong
/// to other ranks, knows where each goes, and nobody knows what will arrive.
/// Returns this rank's received items (in the documented order: source rank, then source order).
std::vector<std::int64_t> transfer(Comm& c, const std::vector<std::int64_t>& items,
                                   const std::vector<int>& dest) {
  const int P = c.size();
  // 1. One root per rank; one leaf per rank we send to.
  std::vector<int> to(dest);
  std::sort(to.begin(), to.end());
  to.erase(std::unique(to.begin(), to.end()), to.end());
  std::vector<SfNode> remote;
  for (int q : to) remote.push_back({q, 0});
  StarForest perRank(c);
  perRank.setGraph(1, static_cast<std::int64_t>(to.size()), {}, remote);
  perRank.setUp();
  // 2. FetchAndOp SUM of the counts: the root learns how many arrive, each leaf its offset there.
  std::vector<std::int64_t> count(to.size(), 0), offset(to.size(), -1), incoming(1, 0);
  for (int d : dest)
    ++count[static_cast<std::size_t>(std::lower_bound(to.begin(), to.end(), d) - to.begin())];
  perRank.fetchAndOp(std::span<std::int64_t>(incoming), std::span<const std::int64_t>(count),
                     std::span<std::int64_t>(offset), ops::sum{});
  // 3. One root per incoming item, one leaf per outgoing item at (its rank, offset + k).
  std::vector<SfNode> where(items.size());
  std::vector<std::int64_t> next(offset);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto k =
        static_cast<std::size_t>(std::lower_bound(to.begin(), to.end(), dest[i]) - to.begin());
    where[i] = {dest[i], next[k]++};
  }
  StarForest move(c);
  move.setGraph(incoming[0], static_cast<std::int64_t>(items.size()), {}, where);
  move.setUp();
  // 4. Reduce with REPLACE: each root has exactly one leaf.
  std::vector<std::int64_t> got(static_cast<std::size_t>(incoming[0]), -1);
  move.reduce(std::span<const std::int64_t>(items), std::span<std::int64_t>(got), ops::replace{});
  (void)P;
  return got;
}

void ownership(Comm& c, std::vector<std::string>& fail) {
  const int P = c.size(), me = c.rank();
  auto items_of = [&](int q, std::vector<std::int64_t>& items, std::vector<int>& dest) {
    Rng g{static_cast<std::uint64_t>(q) * 77 + 5};
    const std::int64_t n = g.below(20);
    for (std::int64_t i = 0; i < n; ++i) {
      items.push_back(q * 1000 + i);
      dest.push_back(static_cast<int>(g.below(P)));
    }
  };
  std::vector<std::int64_t> items;
  std::vector<int> dest;
  items_of(me, items, dest);
  const auto got = transfer(c, items, dest);
  std::vector<std::int64_t> want;  // every rank's items for me, by source rank then order
  for (int q = 0; q < P; ++q) {
    std::vector<std::int64_t> it;
    std::vector<int> d;
    items_of(q, it, d);
    for (std::size_t i = 0; i < it.size(); ++i)
      if (d[i] == me) want.push_back(it[i]);
  }
  if (got != want) fail.push_back("ownership transfer on rank " + std::to_string(me));
}

/// Graph distribution (the note's section 3): a graph of N vertices, block-distributed, each
/// owned vertex with its neighbour list in global numbers, is migrated to a partition that
/// gives vertex v to rank part(v), renumbered there.
void distribute(Comm& c, std::int64_t N, std::vector<std::string>& fail) {
  const int P = c.size(), me = c.rank();
  auto first = [&](int q) { return N * q / P; };
  auto neighbours = [&](std::int64_t v) {  // an undirected graph: a ring plus chords
    std::vector<std::int64_t> n{(v + 1) % N, (v + N - 1) % N};
    if (v % 3 == 0) n.push_back((v * 7 + 3) % N);
    for (std::int64_t u = 0; u < N; ++u)
      if (u % 3 == 0 && (u * 7 + 3) % N == v) n.push_back(u);
    std::sort(n.begin(), n.end());
    n.erase(std::unique(n.begin(), n.end()), n.end());
    n.erase(std::remove(n.begin(), n.end(), v), n.end());
    return n;
  };
  auto part = [&](std::int64_t v) { return static_cast<int>((v * 5 + 1) % P); };
  auto owner = [&](std::int64_t g) {
    int q = 0;
    while (first(q + 1) <= g) ++q;
    return q;
  };
  const std::int64_t lo = first(me), hi = first(me + 1);

  // sfVertex: this rank's owned vertices and the neighbours it references (leaves) -> owners.
  std::vector<std::int64_t> local;  // global numbers of local vertices: owned, then the others
  for (std::int64_t v = lo; v < hi; ++v) local.push_back(v);
  for (std::int64_t v = lo; v < hi; ++v)
    for (std::int64_t u : neighbours(v))
      if ((u < lo || u >= hi) && std::find(local.begin(), local.end(), u) == local.end())
        local.push_back(u);
  std::vector<SfNode> remote;
  for (std::int64_t g : local) remote.push_back({owner(g), g - first(owner(g))});
  StarForest sfVertex(c);
  sfVertex.setGraph(hi - lo, static_cast<std::int64_t>(local.size()), {}, remote);
  sfVertex.setUp();

  // 1. Discover the new vertices: each owned vertex goes to part(v) (ownership discovery).
  std::vector<std::int64_t> mine;
  std::vector<int> dest;
  for (std::int64_t v = lo; v < hi; ++v) {
    mine.push_back(v);
    dest.push_back(part(v));
  }
  const std::vector<std::int64_t> arrived = transfer(c, mine, dest);  // old numbers, new order
  // The new global number of a vertex: its rank's offset plus its position there.
  const auto counts =
      allgather(c, std::vector<std::int64_t>{static_cast<std::int64_t>(arrived.size())});
  std::int64_t newFirst = 0;
  for (int q = 0; q < me; ++q) newFirst += counts[static_cast<std::size_t>(q)][0];
  // sfNew: old vertices (leaves, on the old owner) -> new vertices (roots, on the new owner).
  std::vector<std::int64_t> newNumberOfArrived(arrived.size());
  for (std::size_t k = 0; k < arrived.size(); ++k)
    newNumberOfArrived[k] = newFirst + static_cast<std::int64_t>(k);
  // The old owner learns each vertex's new number: reduce REPLACE over the per-vertex forest
  // (roots: old numbering, leaves: arrived) — i.e. send the number back.
  std::vector<SfNode> back;
  for (std::int64_t v : arrived) back.push_back({owner(v), v - first(owner(v))});
  StarForest toOld(c);
  toOld.setGraph(hi - lo, static_cast<std::int64_t>(arrived.size()), {}, back);
  toOld.setUp();
  std::vector<std::int64_t> newNumber(static_cast<std::size_t>(hi - lo), -1);
  toOld.reduce(std::span<const std::int64_t>(newNumberOfArrived),
               std::span<std::int64_t>(newNumber), ops::replace{});
  // 2. Broadcast the new numbers over sfVertex: every local vertex (ghosts too) learns its own.
  std::vector<std::int64_t> newOfLocal(local.size(), -1);
  sfVertex.bcast(std::span<const std::int64_t>(newNumber), std::span<std::int64_t>(newOfLocal));
  // 3 and 4. The neighbour lists, now in new numbers, go from the old owners (leaves of sfNew)
  // to the new owners (roots): a reduce of variable payloads (one leaf per root: REPLACE).
  std::map<std::int64_t, std::int64_t> newOf;
  for (std::size_t k = 0; k < local.size(); ++k) newOf[local[k]] = newOfLocal[k];
  Payloads lists;
  std::vector<SfNode> toNew;
  for (std::int64_t v = lo; v < hi; ++v) {
    std::vector<std::int64_t> n;
    for (std::int64_t u : neighbours(v)) n.push_back(newOf.at(u));
    lists.push_back(std::span<const char>(reinterpret_cast<const char*>(n.data()), n.size() * 8));
    const std::int64_t nv = newNumber[static_cast<std::size_t>(v - lo)];
    toNew.push_back({part(v), nv - 0});  // root index on the new owner: its position there
  }
  // Positions on the new owner: new number minus that rank's first new number.
  std::vector<std::int64_t> newFirsts(static_cast<std::size_t>(P) + 1, 0);
  for (int q = 0; q < P; ++q)
    newFirsts[q + 1] = newFirsts[q] + counts[static_cast<std::size_t>(q)][0];
  for (auto& n : toNew) n.index -= newFirsts[static_cast<std::size_t>(n.rank)];
  StarForest sfNew(c);
  sfNew.setGraph(static_cast<std::int64_t>(arrived.size()), hi - lo, {}, toNew);
  sfNew.setUp();
  Payloads adjacency;
  sfNew.reducev(lists, adjacency);
  // Check: vertex arrived[k] is now number newFirst + k here, and its list is its neighbours'
  // new numbers.
  std::vector<std::int64_t> numberOf(static_cast<std::size_t>(N), -1);  // reference renumbering
  {
    std::int64_t next = 0;
    for (int q = 0; q < P; ++q)
      for (int src = 0; src < P; ++src)
        for (std::int64_t v = first(src); v < first(src + 1); ++v)
          if (part(v) == q) numberOf[static_cast<std::size_t>(v)] = next++;
  }
  for (std::size_t k = 0; k < arrived.size(); ++k) {
    const std::int64_t v = arrived[k];
    if (part(v) != me)
      fail.push_back("distribution: vertex " + std::to_string(v) + " on rank " +
                     std::to_string(me));
    if (numberOf[static_cast<std::size_t>(v)] != newFirst + static_cast<std::int64_t>(k))
      fail.push_back("distribution: numbering of " + std::to_string(v));
    std::vector<std::int64_t> want;
    for (std::int64_t u : neighbours(v)) want.push_back(numberOf[static_cast<std::size_t>(u)]);
    auto bytes = adjacency[k];
    std::vector<std::int64_t> got(bytes.size() / 8);
    if (!got.empty()) std::memcpy(got.data(), bytes.data(), bytes.size());
    if (got != want) fail.push_back("distribution: neighbours of " + std::to_string(v));
  }
}

void note_algorithms(Comm& c, std::vector<std::string>& fail) {
  ghost_and_assembly(c, 50, fail);
  ghost_and_assembly(c, 3, fail);  // fewer points than ranks on large P: empty blocks
  ownership(c, fail);
  distribute(c, 40, fail);
}

}  // namespace

TEST_CASE("StarForest: the note's algorithms (ghost update, assembly, ownership, distribution)") {
  Comm world = Comm::world();
  std::vector<std::string> fail;
  note_algorithms(world, fail);
  for (auto& s : fail) FAIL_CHECK(s);
  if (!single_process()) return;
  for (int P : {1, 2, 3, 5, 8, 13, 32}) {
    CAPTURE(P);
    std::vector<std::vector<std::string>> f(static_cast<std::size_t>(P));
    run_local(P, [&](Comm& c) { note_algorithms(c, f[static_cast<std::size_t>(c.rank())]); });
    for (auto& fr : f)
      for (auto& s : fr) FAIL_CHECK(s);
  }
}

// ---- consensus ----

TEST_CASE("exchange_sparse: every parcel arrives, by source; each rank pays for its own parcels") {
  if (!single_process()) return;
  for (int P : {1, 2, 5, 64, 1024}) {
    CAPTURE(P);
    auto targets = [&](int q) {  // 3 parcels to pseudo-random ranks (repeats and self allowed)
      Rng g{static_cast<std::uint64_t>(q) + 1};
      return std::vector<int>{static_cast<int>(g.below(P)), static_cast<int>(g.below(P)),
                              static_cast<int>(g.below(P))};
    };
    std::vector<int> ok(static_cast<std::size_t>(P), 0);
    auto stats = run_local(P, [&](Comm& c) {
      std::vector<Parcel> out;
      for (int t : targets(c.rank())) {
        Parcel p{t, {}};
        const int v = c.rank() * 10 + static_cast<int>(out.size());
        p.bytes.append(&v, sizeof v);
        out.push_back(std::move(p));
      }
      auto in = exchange_sparse(c, std::move(out));
      std::vector<std::pair<int, int>> want, got;
      for (int q = 0; q < P; ++q) {
        auto t = targets(q);
        for (std::size_t k = 0; k < t.size(); ++k)
          if (t[k] == c.rank()) want.push_back({q, q * 10 + static_cast<int>(k)});
      }
      for (auto& p : in) {
        int v = 0;
        std::memcpy(&v, p.bytes.data(), sizeof v);
        got.push_back({p.rank, v});
      }
      ok[static_cast<std::size_t>(c.rank())] = got == want;
    });
    CHECK(std::accumulate(ok.begin(), ok.end(), 0) == P);
    int log2P = 0;
    while ((1 << log2P) < P) ++log2P;
    for (int q = 0; q < P; ++q) {
      // Its parcels to other ranks, and one barrier message per round: nothing grows with P
      // except the barrier's log2 P.
      auto t = targets(q);
      const auto remote = static_cast<std::uint64_t>(
          std::count_if(t.begin(), t.end(), [&](int x) { return x != q; }));
      CHECK(stats[static_cast<std::size_t>(q)].messagesSent ==
            remote + static_cast<std::uint64_t>(log2P));
    }
  }
}

// ---- misuse ----

namespace {

/// Calls f and returns the error text of its exception of type E ("" if none or another).
template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception: ") + e.what();
  }
  return "";
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

void misuse(Comm& c, std::vector<std::string>& fail) {
  const int P = c.size(), me = c.rank();
  auto expect = [&](bool ok, const std::string& what) {
    if (!ok) fail.push_back(what + " (rank " + std::to_string(me) + ")");
  };
  // Operations before setUp.
  {
    StarForest sf(c);
    std::vector<double> r(1), l(1);
    auto e = error_of<StateError>(
        [&] { sf.bcastBegin(std::span<const double>(r), std::span<double>(l)); });
    expect(has(e, "not set up") && has(e, "setGraph, then setUp"), "bcast before setUp: " + e);
    sf.setGraph(1, 1, {}, {{(me + 1) % P, 0}});
    e = error_of<StateError>(
        [&] { sf.reduceBegin(std::span<const double>(l), std::span<double>(r), ops::sum{}); });
    expect(has(e, "call setUp first"), "reduce before setUp: " + e);
  }
  // A ring forest: leaf 0 of each rank names root 0 of the next.
  StarForest sf(c);
  sf.setGraph(1, 1, {}, {{(me + 1) % P, 0}});
  sf.setUp();
  std::vector<double> root{double(me)}, leaf{-1.0}, leaf2{-1.0};
  {  // End without Begin.
    auto e = error_of<StateError>(
        [&] { sf.bcastEnd(std::span<const double>(root), std::span<double>(leaf)); });
    expect(has(e, "no bcastBegin in flight"), "end without begin: " + e);
  }
  {  // One output buffer in two operations at once; End with another block size or op.
    sf.bcastBegin(std::span<const double>(root), std::span<double>(leaf));
    auto e = error_of<ValueError>([&] {
      sf.reduceBegin(std::span<const double>(leaf2), std::span<double>(leaf), ops::sum{});
    });
    expect(has(e, "already in flight"), "buffer twice: " + e);
    e = error_of<ValueError>(
        [&] { sf.bcastEnd(std::span<const double>(root), std::span<double>(leaf), ops::sum{}); });
    expect(has(e, "op") && has(e, "replace"), "end with another op: " + e);
    e = error_of<ValueError>([&] {
      sf.bcastEnd(std::span<const double>(root), std::span<double>(leaf), ops::replace{}, 2);
    });
    expect(has(e, "units of double x 2, but Begin was given double x 1"),
           "end with another block size: " + e);
    sf.bcastEnd(std::span<const double>(root), std::span<double>(leaf));
    expect(leaf[0] == double((me + 1) % P), "the operation still completes after the errors");
    expect(sf.inFlight() == 0, "nothing left in flight");
  }
  {  // Buffers shorter than the graph.
    std::vector<double> none;
    auto e = error_of<IndexError>(
        [&] { sf.bcastBegin(std::span<const double>(root), std::span<double>(none)); });
    expect(has(e, "leafdata has 0 units; the forest needs 1"), "short leafdata: " + e);
  }
  // Bad graphs: one rank's mistake is an error on every rank, naming it.
  auto bad = [&](int who, std::vector<std::int64_t> ilocal, std::vector<SfNode> remote,
                 std::int64_t nroots, const std::string& part, bool index) {
    StarForest g(c);
    std::vector<SfNode> ok{{me, 0}};
    if (me == who)
      g.setGraph(nroots, static_cast<std::int64_t>(remote.size()), ilocal, remote);
    else
      g.setGraph(1, 1, {}, ok);
    std::string e =
        index ? error_of<IndexError>([&] { g.setUp(); }) : error_of<ValueError>([&] { g.setUp(); });
    expect(has(e, part) && has(e, "on rank " + std::to_string(who)),
           "bad graph (" + part + "): " + e);
  };
  const int who = P - 1;
  bad(who, {}, {{P + 2, 0}}, 1,
      "leaf 0 names rank " + std::to_string(P + 2) + " (ranks 0.." + std::to_string(P - 1) + ")",
      true);
  bad(who, {}, {{0, -3}}, 1, "leaf 0 names root -3", true);
  bad(who, {5, 5}, {{0, 0}, {0, 0}}, 1, "leaf 5 is listed twice in ilocal", false);
  bad(who, {-2}, {{0, 0}}, 1, "ilocal[0] is leaf -2", true);
  bad(who, {}, {{who, 4}}, 2, "names root 4 of its own rank", true);
  // A root out of range on another rank: only that rank can tell; every rank hears it.
  if (P > 1) {
    StarForest g(c);
    const int target = 0;
    if (me == who)
      g.setGraph(1, 2, {3, 1}, {{me, 0}, {target, 9}});
    else
      g.setGraph(1, 1, {}, {{me, 0}});
    auto e = error_of<IndexError>([&] { g.setUp(); });
    expect(has(e, "leaf 1 of rank " + std::to_string(who) +
                      " names root 9 of rank 0, which has 1 roots (0..0)"),
           "remote root out of range: " + e);
  }
  // The forest still works after all that.
  sf.bcast(std::span<const double>(root), std::span<double>(leaf));
  expect(leaf[0] == double((me + 1) % P), "the forest after the errors");
}

}  // namespace

TEST_CASE("StarForest misuse: clear errors on the rank that misused it, bad graphs on every rank") {
  Comm world = Comm::world();
  std::vector<std::string> fail;
  misuse(world, fail);
  for (auto& s : fail) FAIL_CHECK(s);
  if (!single_process()) return;
  for (int P : {1, 2, 3, 4}) {
    std::vector<std::vector<std::string>> f(static_cast<std::size_t>(P));
    run_local(P, [&](Comm& c) { misuse(c, f[static_cast<std::size_t>(c.rank())]); });
    for (auto& fr : f)
      for (auto& s : fr) FAIL_CHECK(s);
  }
}
