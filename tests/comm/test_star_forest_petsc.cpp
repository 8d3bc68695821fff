// StarForest against PETSc's PetscSF as an oracle: the seeded random graphs of sf_reference.hpp
// (shapes 0-3: contiguous leaves, sparse reversed ilocal, a hot root, leaves on their own rank)
// set on both, every antler backend, the same operations, the results compared. Its own program
// (antler_sf_petsc_tests, main at the bottom: PETSc initialised after comm::Environment), built
// only when CMake finds PETSc (tests/CMakeLists.txt).
//
// What is compared, and why so:
//   bcast (MPI_REPLACE, MPI_SUM), reduce (MPI_SUM, MPI_MAX, MPI_MIN on PetscInt), block sizes 1
//   and 2, computeDegree: equal values. On integers no order of application can show, so
//   PETSc's unspecified order does not matter; bcast of doubles is bit-equal.
//   gather/scatter: PETSc lays out the multi-root slots as antler does (a root's slots
//   contiguous, roots in order, as many as the degree), and with its default rank order
//   (-sf_rank_order) the slots of one root ascend by leaf rank, as antler's do. Within one leaf
//   rank PETSc's order is not antler's (leaf index) nor anything PETSc documents: 3.18's
//   PetscSFGetMultiSF numbers a root's leaves by a fetch-and-add (in the runs here: the root's
//   own rank's leaves first, then the other ranks', each rank's by leaf index, whatever the
//   ilocal order), then sorts the root's slots by leaf rank with PetscSortIntWithArray, which is
//   not stable (a swap sort below 8 entries, quicksort above). So a rank's leaves come out
//   permuted: e.g. a root with leaves 1:1 1:2 1:15 on its own rank 1 and 0:29 gets slots
//   0:29 1:2 1:15 1:1; 12 leaves all on one rank come out in reverse. (P = 2, scale 40: 4-19%
//   of the roots of degree >= 2 differ from antler's order, by shape; at P = 1 only the hot
//   root's.) So slots are compared per root as the sequence of leaf ranks (equal) and as
//   sorted multisets (equal); scatter by its round trip (scatter(gather(x)) = x on both), and
//   each leaf's slot checked to lie in its root's range (PETSc) or to be its place in the
//   documented order (antler).
//   fetchAndOp (MPIU_SUM, PetscInt): the roots equal; the fetched values of one root compared
//   as a multiset (equal increments per root, so any order gives the same set); and with
//   distinct increments each side's fetched values shown to be some serial order of the root's
//   leaves (antler's: the documented one). PETSc does not promise an order here.
//   compose (PetscSFCompose) and embedRoots (PetscSFCreateEmbeddedRootSF): the resulting graphs,
//   each leaf's root, leaves sorted by leaf index.
//
// ANTLER_SF_PETSC_VERBOSE=1 prints, per shape, how many roots' slots PETSc ordered as antler does.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <petscsf.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/comm/collectives.hpp"
#include "core/comm/mpi.hpp"
#include "core/comm/star_forest.hpp"
#include "tests/comm/sf_reference.hpp"
#include "tests/support/watchdog.hpp"

using namespace antler;
using namespace antler::comm;
using antler::test::make_graph;
using antler::test::root_value;
using antler::test::SfGraph;

namespace {

static_assert(sizeof(PetscInt) == 4 || sizeof(PetscInt) == 8);

void petsc_check(PetscErrorCode e, const char* call) {
  if (e) throw std::runtime_error(std::string(call) + ": PETSc error " + std::to_string(e));
}
#define PETSC_CHECK(call) petsc_check((call), #call)

/// A PetscSF (destroyed with the object).
class PetscForest {
 public:
  /// The forest of G on this rank.
  PetscForest(const SfGraph& G, int me) {
    std::vector<PetscInt> ilocal(G.ilocal[me].begin(), G.ilocal[me].end());
    std::vector<PetscSFNode> remote(G.iremote[me].size());
    for (std::size_t i = 0; i < remote.size(); ++i) {
      remote[i].rank = static_cast<PetscInt>(G.iremote[me][i].rank);
      remote[i].index = static_cast<PetscInt>(G.iremote[me][i].index);
    }
    PETSC_CHECK(PetscSFCreate(PETSC_COMM_WORLD, &sf_));
    PETSC_CHECK(PetscSFSetGraph(sf_, static_cast<PetscInt>(G.nroots[me]),
                                static_cast<PetscInt>(G.nleaves[me]),
                                ilocal.empty() ? nullptr : ilocal.data(), PETSC_COPY_VALUES,
                                remote.data(), PETSC_COPY_VALUES));
    PETSC_CHECK(PetscSFSetUp(sf_));
  }
  /// Takes sf over.
  explicit PetscForest(PetscSF sf) : sf_(sf) { PETSC_CHECK(PetscSFSetUp(sf_)); }
  ~PetscForest() { PetscSFDestroy(&sf_); }
  PetscForest(const PetscForest&) = delete;
  PetscForest& operator=(const PetscForest&) = delete;
  PetscSF get() const { return sf_; }

 private:
  PetscSF sf_ = nullptr;
};

/// An MPI datatype of n contiguous units (freed with the object).
class Contiguous {
 public:
  Contiguous(int n, MPI_Datatype unit) {
    ANTLER_MPI(MPI_Type_contiguous(n, unit, &t_));
    ANTLER_MPI(MPI_Type_commit(&t_));
  }
  ~Contiguous() { MPI_Type_free(&t_); }
  Contiguous(const Contiguous&) = delete;
  Contiguous& operator=(const Contiguous&) = delete;
  MPI_Datatype get() const { return t_; }

 private:
  MPI_Datatype t_ = MPI_DATATYPE_NULL;
};

StarForest antler_forest(Comm& c, const SfGraph& G, SfBackend b) {
  const int me = c.rank();
  StarForest sf(c);
  sf.setBackend(b);
  sf.setGraph(G.nroots[me], G.nleaves[me], G.ilocal[me], G.iremote[me]);
  sf.setUp();
  return sf;
}

/// A forest's graph on this rank: (leaf index, root rank, root index) per leaf with a root,
/// sorted; and its number of roots.
using Edges = std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>;
std::pair<std::int64_t, Edges> graph_of(const StarForest& sf) {
  Edges e;
  for (std::size_t i = 0; i < sf.iremote().size(); ++i)
    e.emplace_back(sf.leafIndex(static_cast<std::int64_t>(i)), sf.iremote()[i].rank,
                   sf.iremote()[i].index);
  std::sort(e.begin(), e.end());
  return {sf.numRoots(), e};
}
std::pair<std::int64_t, Edges> graph_of(PetscSF sf) {
  PetscInt nroots = 0, nleaves = 0;
  const PetscInt* ilocal = nullptr;
  const PetscSFNode* iremote = nullptr;
  PETSC_CHECK(PetscSFGetGraph(sf, &nroots, &nleaves, &ilocal, &iremote));
  Edges e;
  for (PetscInt i = 0; i < nleaves; ++i)
    e.emplace_back(ilocal ? ilocal[i] : i, iremote[i].rank, iremote[i].index);
  std::sort(e.begin(), e.end());
  return {nroots, e};
}

std::string where(const char* op, int me, std::size_t i) {
  return std::string(op) + " on rank " + std::to_string(me) + " at " + std::to_string(i);
}

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

/// Failures of one rank, reported as one CHECK each (the first 20).
struct Failures {
  std::vector<std::string> list;
  void expect(bool ok, const std::string& what) {
    if (!ok && list.size() < 20) list.push_back(what);
  }
  void report() const {
    for (const auto& s : list) FAIL_CHECK(s);
  }
};

/// Each leaf's root on this rank, by leaf index (rank -1: none).
std::vector<SfNode> root_of_leaf(const SfGraph& G, int me) {
  std::vector<SfNode> r(static_cast<std::size_t>(G.extent(me)));
  for (std::size_t i = 0; i < G.iremote[me].size(); ++i)
    r[static_cast<std::size_t>(G.leafIndex(me, i))] = G.iremote[me][i];
  return r;
}

/// A leaf's id in gathered data: its rank and leaf index.
PetscInt leaf_id(int q, std::int64_t l) {
  return static_cast<PetscInt>(q * 65536 + l);
}

/// Each root's first multi-root slot (the prefix sums of the degrees).
std::vector<std::int64_t> slot_offsets(const std::vector<std::int64_t>& degree) {
  std::vector<std::int64_t> off(degree.size() + 1, 0);
  for (std::size_t r = 0; r < degree.size(); ++r) off[r + 1] = off[r] + degree[r];
  return off;
}

const SfBackend kBackends[] = {SfBackend::p2p, SfBackend::neighbour, SfBackend::allgatherv};
/// (seed, scale): up to `scale` roots and leaves per rank (make_graph).
const std::pair<std::uint64_t, std::int64_t> kGraphs[] = {{1, 40}, {2, 40},  {3, 40},  {4, 3},
                                                          {5, 1},  {6, 300}, {7, 3000}};

bool verbose() {
  const char* v = std::getenv("ANTLER_SF_PETSC_VERBOSE");
  return v && *v && std::strcmp(v, "0") != 0;
}

}  // namespace

TEST_CASE("StarForest vs PetscSF: bcast, reduce and degrees on random graphs") {
  Comm c = Comm::world();
  const int me = c.rank();
  for (auto [seed, scale] : kGraphs)
    for (int shape = 0; shape < 4; ++shape) {
      CAPTURE(seed);
      CAPTURE(scale);
      CAPTURE(shape);
      const SfGraph G = make_graph(c.size(), seed, shape, scale);
      const auto nroots = static_cast<std::size_t>(G.nroots[me]);
      const auto extent = static_cast<std::size_t>(G.extent(me));
      PetscForest pf(G, me);
      const PetscSF psf = pf.get();

      // PETSc's answers, once per graph.
      const PetscInt* pdeg = nullptr;
      PETSC_CHECK(PetscSFComputeDegreeBegin(psf, &pdeg));
      PETSC_CHECK(PetscSFComputeDegreeEnd(psf, &pdeg));
      Contiguous two_doubles(2, MPI_DOUBLE), two_ints(2, MPIU_INT);
      struct Answers {
        std::vector<double> bcast1, bcast2;
        std::vector<PetscInt> bcastSum, sum1, sum2, max, min;
      };
      auto ask = [&](auto&& bcast, auto&& reduce) {
        Answers a;
        for (std::size_t bs : {std::size_t{1}, std::size_t{2}}) {
          std::vector<double> root(nroots * bs), leaf(extent * bs, -7.0);
          for (std::size_t r = 0; r < nroots; ++r)
            for (std::size_t j = 0; j < bs; ++j) root[r * bs + j] = root_value(me, r, j);
          bcast(root, leaf, bs);
          (bs == 1 ? a.bcast1 : a.bcast2) = leaf;
        }
        std::vector<PetscInt> iroot(nroots), ileaf(extent, 5);
        for (std::size_t r = 0; r < nroots; ++r) iroot[r] = static_cast<PetscInt>(r % 13) - 4;
        a.bcastSum = ileaf;
        bcast(iroot, a.bcastSum, 1);
        std::vector<PetscInt> lv(extent * 2);
        for (std::size_t l = 0; l < lv.size(); ++l)
          lv[l] = static_cast<PetscInt>((me * 37 + l * 11) % 23) - 9;
        for (int k = 0; k < 4; ++k) {
          const std::size_t bs = k == 1 ? 2 : 1;
          std::vector<PetscInt> root(nroots * bs);
          for (std::size_t r = 0; r < root.size(); ++r)
            root[r] = static_cast<PetscInt>((me + r * 5) % 7);
          reduce(lv, root, bs, k);
          (k == 0 ? a.sum1 : k == 1 ? a.sum2 : k == 2 ? a.max : a.min) = root;
        }
        return a;
      };

      auto pcall_bcast = [&](auto& root, auto& leaf, std::size_t bs) {
        using T = typename std::decay_t<decltype(root)>::value_type;
        MPI_Datatype unit =
            std::is_same_v<T, double> ? (bs == 1 ? MPI_DOUBLE : two_doubles.get()) : MPIU_INT;
        const MPI_Op op = std::is_same_v<T, double> ? MPI_REPLACE : MPI_SUM;
        PETSC_CHECK(PetscSFBcastBegin(psf, unit, root.data(), leaf.data(), op));
        PETSC_CHECK(PetscSFBcastEnd(psf, unit, root.data(), leaf.data(), op));
      };
      auto pcall_reduce = [&](std::vector<PetscInt>& leaf, std::vector<PetscInt>& root,
                              std::size_t bs, int k) {
        const MPI_Datatype unit = bs == 1 ? MPIU_INT : two_ints.get();
        const MPI_Op op = k < 2 ? MPI_SUM : k == 2 ? MPI_MAX : MPI_MIN;
        PETSC_CHECK(PetscSFReduceBegin(psf, unit, leaf.data(), root.data(), op));
        PETSC_CHECK(PetscSFReduceEnd(psf, unit, leaf.data(), root.data(), op));
      };
      const Answers want = ask(pcall_bcast, pcall_reduce);

      for (SfBackend b : kBackends) {
        CAPTURE(to_string(b));
        StarForest sf = antler_forest(c, G, b);
        Failures f;
        auto deg = sf.computeDegree();
        for (std::size_t r = 0; r < nroots; ++r)
          f.expect(deg[r] == pdeg[r], where("computeDegree", me, r));
        auto acall_bcast = [&](auto& root, auto& leaf, std::size_t bs) {
          using T = typename std::decay_t<decltype(root)>::value_type;
          if constexpr (std::is_same_v<T, double>)
            sf.bcast(std::span<const T>(root), std::span<T>(leaf), ops::replace{}, bs);
          else
            sf.bcast(std::span<const T>(root), std::span<T>(leaf), ops::sum{}, bs);
        };
        auto acall_reduce = [&](std::vector<PetscInt>& leaf, std::vector<PetscInt>& root,
                                std::size_t bs, int k) {
          const std::span<const PetscInt> l(leaf);
          const std::span<PetscInt> r(root);
          if (k < 2) sf.reduce(l, r, ops::sum{}, bs);
          if (k == 2) sf.reduce(l, r, ops::max{}, bs);
          if (k == 3) sf.reduce(l, r, ops::min{}, bs);
        };
        const Answers got = ask(acall_bcast, acall_reduce);
        for (std::size_t i = 0; i < want.bcast1.size(); ++i)
          f.expect(same_bits(got.bcast1[i], want.bcast1[i]), where("bcast replace", me, i));
        for (std::size_t i = 0; i < want.bcast2.size(); ++i)
          f.expect(same_bits(got.bcast2[i], want.bcast2[i]), where("bcast replace bs 2", me, i));
        f.expect(got.bcastSum == want.bcastSum, "bcast sum on rank " + std::to_string(me));
        f.expect(got.sum1 == want.sum1, "reduce sum on rank " + std::to_string(me));
        f.expect(got.sum2 == want.sum2, "reduce sum bs 2 on rank " + std::to_string(me));
        f.expect(got.max == want.max, "reduce max on rank " + std::to_string(me));
        f.expect(got.min == want.min, "reduce min on rank " + std::to_string(me));
        f.report();
        CHECK(f.list.empty());
      }
    }
}

TEST_CASE("StarForest vs PetscSF: gather and scatter through the multi-root forest") {
  Comm c = Comm::world();
  const int me = c.rank(), P = c.size();
  // Per shape: roots of degree >= 2 whose slots PETSc ordered as antler does / otherwise.
  long long sameOrder[4][2] = {};
  for (auto [seed, scale] : kGraphs)
    for (int shape = 0; shape < 4; ++shape) {
      CAPTURE(seed);
      CAPTURE(scale);
      CAPTURE(shape);
      const SfGraph G = make_graph(P, seed, shape, scale);
      const auto nroots = static_cast<std::size_t>(G.nroots[me]);
      const auto extent = static_cast<std::size_t>(G.extent(me));
      const auto in = G.incoming();
      const std::vector<SfNode> rootOf = root_of_leaf(G, me);
      PetscForest pf(G, me);
      const PetscSF psf = pf.get();
      const PetscInt* pdeg = nullptr;
      PETSC_CHECK(PetscSFComputeDegreeBegin(psf, &pdeg));
      PETSC_CHECK(PetscSFComputeDegreeEnd(psf, &pdeg));
      std::vector<std::int64_t> degree(pdeg, pdeg + nroots);
      const std::vector<std::int64_t> off = slot_offsets(degree);
      const auto nmulti = static_cast<std::size_t>(off.back());

      std::vector<PetscInt> ids(extent, -1);
      for (std::size_t i = 0; i < G.iremote[me].size(); ++i) {
        const auto l = static_cast<std::size_t>(G.leafIndex(me, i));
        ids[l] = leaf_id(me, static_cast<std::int64_t>(l));
      }
      // PETSc: gather the ids; scatter them back; scatter each slot's own id.
      std::vector<PetscInt> pgather(nmulti, -2), pback(extent, -1), pslots(nmulti),
          pslot(extent, -1);
      for (std::size_t s = 0; s < nmulti; ++s) pslots[s] = static_cast<PetscInt>(s);
      PETSC_CHECK(PetscSFGatherBegin(psf, MPIU_INT, ids.data(), pgather.data()));
      PETSC_CHECK(PetscSFGatherEnd(psf, MPIU_INT, ids.data(), pgather.data()));
      PETSC_CHECK(PetscSFScatterBegin(psf, MPIU_INT, pgather.data(), pback.data()));
      PETSC_CHECK(PetscSFScatterEnd(psf, MPIU_INT, pgather.data(), pback.data()));
      PETSC_CHECK(PetscSFScatterBegin(psf, MPIU_INT, pslots.data(), pslot.data()));
      PETSC_CHECK(PetscSFScatterEnd(psf, MPIU_INT, pslots.data(), pslot.data()));

      for (SfBackend b : kBackends) {
        CAPTURE(to_string(b));
        StarForest sf = antler_forest(c, G, b);
        Failures f;
        std::vector<PetscInt> agather(nmulti, -2), aback(extent, -1), aslot(extent, -1);
        sf.gather(std::span<const PetscInt>(ids), std::span<PetscInt>(agather));
        sf.scatter(std::span<const PetscInt>(agather), std::span<PetscInt>(aback));
        sf.scatter(std::span<const PetscInt>(pslots), std::span<PetscInt>(aslot));
        f.expect(sf.multiForest().numRoots() == static_cast<std::int64_t>(nmulti),
                 "multi-root count on rank " + std::to_string(me));
        for (std::size_t r = 0; r < nroots; ++r) {
          const auto s0 = static_cast<std::size_t>(off[r]),
                     s1 = static_cast<std::size_t>(off[r + 1]);
          std::vector<PetscInt> a(agather.begin() + s0, agather.begin() + s1),
              p(pgather.begin() + s0, pgather.begin() + s1);
          // antler: the documented order, exactly.
          std::vector<PetscInt> documented;
          for (auto& [q, l] : in[me][r]) documented.push_back(leaf_id(q, l));
          f.expect(a == documented, where("gather: antler's documented order", me, r));
          // PETSc: the same leaf ranks slot by slot (its rank order), the same leaves.
          std::vector<PetscInt> aRanks, pRanks;
          for (PetscInt x : a) aRanks.push_back(x / 65536);
          for (PetscInt x : p) pRanks.push_back(x / 65536);
          f.expect(aRanks == pRanks, where("gather: the leaf ranks of a root's slots", me, r));
          std::sort(a.begin(), a.end());
          std::sort(p.begin(), p.end());
          f.expect(a == p, where("gather: a root's leaves (sorted)", me, r));
          if (s1 - s0 >= 2) {
            const bool same =
                std::equal(agather.begin() + s0, agather.begin() + s1, pgather.begin() + s0);
            sameOrder[shape][same ? 0 : 1] += 1;
          }
        }
        // scatter: each leaf gets its own id back through either forest; where the two orders
        // agree (the slot a leaf's root gave it), a scatter of the slots' own ids agrees too.
        for (std::size_t l = 0; l < extent; ++l) {
          f.expect(aback[l] == ids[l], where("scatter(gather) on antler", me, l));
          f.expect(pback[l] == ids[l], where("scatter(gather) on PETSc", me, l));
          if (rootOf[l].rank < 0)
            f.expect(aslot[l] == -1 && pslot[l] == -1,
                     where("scatter: a leaf without root", me, l));
        }
        // The slot each leaf got from its root, antler's and PETSc's, within the root's range.
        const auto degrees = allgather(c, degree);
        for (std::size_t l = 0; l < extent; ++l) {
          if (rootOf[l].rank < 0) continue;
          const auto& dq = degrees[static_cast<std::size_t>(rootOf[l].rank)];
          std::int64_t lo = 0;
          for (std::int64_t r = 0; r < rootOf[l].index; ++r) lo += dq[static_cast<std::size_t>(r)];
          const std::int64_t hi = lo + dq[static_cast<std::size_t>(rootOf[l].index)];
          f.expect(pslot[l] >= lo && pslot[l] < hi, where("scatter: PETSc's slot in range", me, l));
          // antler's slot: the leaf's position in the documented order.
          const auto& leaves = in[static_cast<std::size_t>(rootOf[l].rank)]
                                 [static_cast<std::size_t>(rootOf[l].index)];
          const auto pos =
              std::find(leaves.begin(), leaves.end(),
                        std::pair<int, std::int64_t>{me, static_cast<std::int64_t>(l)}) -
              leaves.begin();
          f.expect(aslot[l] == lo + pos, where("scatter: antler's slot", me, l));
        }
        f.report();
        CHECK(f.list.empty());
      }
    }
  if (verbose()) {
    for (int shape = 0; shape < 4; ++shape) {
      const long long same = allreduce(c, sameOrder[shape][0], ops::sum{}),
                      other = allreduce(c, sameOrder[shape][1], ops::sum{});
      if (me == 0)
        MESSAGE("P = " << P << ", shape " << shape
                       << ": PETSc's multi-root slots in antler's order "
                       << "at " << same << " of " << (same + other)
                       << " (root, backend) pairs with degree >= 2");
    }
  }
}

TEST_CASE("StarForest vs PetscSF: fetchAndOp (sum of PetscInt)") {
  Comm c = Comm::world();
  const int me = c.rank(), P = c.size();
  for (auto [seed, scale] : kGraphs)
    for (int shape = 0; shape < 4; ++shape) {
      CAPTURE(seed);
      CAPTURE(scale);
      CAPTURE(shape);
      const SfGraph G = make_graph(P, seed, shape, scale);
      const auto nroots = static_cast<std::size_t>(G.nroots[me]);
      const auto extent = static_cast<std::size_t>(G.extent(me));
      const auto in = G.incoming();
      const std::vector<SfNode> rootOf = root_of_leaf(G, me);
      PetscForest pf(G, me);
      auto root0 = [](int q, std::size_t r) { return static_cast<PetscInt>(100 * q + 3 * r); };
      // Increments: the same for every leaf of a root (any order fetches the same set), or
      // distinct and positive (the fetched values reveal the order).
      auto even = [&](std::size_t l) {
        return static_cast<PetscInt>(1 + (rootOf[l].rank * 3 + rootOf[l].index) % 5);
      };
      auto distinct = [&](std::size_t l) {
        return static_cast<PetscInt>(1 + me + P * static_cast<std::int64_t>(l));
      };
      for (bool evenIncrements : {true, false}) {
        CAPTURE(evenIncrements);
        std::vector<PetscInt> lv(extent, 0);
        for (std::size_t l = 0; l < extent; ++l)
          if (rootOf[l].rank >= 0) lv[l] = evenIncrements ? even(l) : distinct(l);
        std::vector<PetscInt> proot(nroots), pupd(extent, -1);
        for (std::size_t r = 0; r < nroots; ++r) proot[r] = root0(me, r);
        PETSC_CHECK(PetscSFFetchAndOpBegin(pf.get(), MPIU_INT, proot.data(), lv.data(), pupd.data(),
                                           MPI_SUM));
        PETSC_CHECK(PetscSFFetchAndOpEnd(pf.get(), MPIU_INT, proot.data(), lv.data(), pupd.data(),
                                         MPI_SUM));
        const auto pAll = allgather(c, pupd);
        const auto lvAll = allgather(c, lv);
        for (SfBackend b : kBackends) {
          CAPTURE(to_string(b));
          StarForest sf = antler_forest(c, G, b);
          Failures f;
          std::vector<PetscInt> aroot(nroots), aupd(extent, -1);
          for (std::size_t r = 0; r < nroots; ++r) aroot[r] = root0(me, r);
          sf.fetchAndOp(std::span<PetscInt>(aroot), std::span<const PetscInt>(lv),
                        std::span<PetscInt>(aupd), ops::sum{});
          const auto aAll = allgather(c, aupd);
          for (std::size_t r = 0; r < nroots; ++r)
            f.expect(aroot[r] == proot[r], where("fetchAndOp: root", me, r));
          for (std::size_t l = 0; l < extent; ++l)
            if (rootOf[l].rank < 0)
              f.expect(aupd[l] == -1 && pupd[l] == -1, where("fetchAndOp: no root", me, l));
          for (std::size_t r = 0; r < nroots; ++r) {
            std::vector<std::pair<PetscInt, PetscInt>> a, p;  // (fetched, increment) per leaf
            for (auto& [q, l] : in[me][r]) {
              const auto qi = static_cast<std::size_t>(q), li = static_cast<std::size_t>(l);
              a.push_back({aAll[qi][li], lvAll[qi][li]});
              p.push_back({pAll[qi][li], lvAll[qi][li]});
            }
            // antler: the documented order, fetched values the running sum.
            PetscInt acc = root0(me, r);
            bool documented = true;
            for (auto& [v, inc] : a) {
              documented = documented && v == acc;
              acc += inc;
            }
            f.expect(documented, where("fetchAndOp: antler's documented order", me, r));
            if (evenIncrements) {
              std::vector<PetscInt> av, pv;
              for (auto& x : a) av.push_back(x.first);
              for (auto& x : p) pv.push_back(x.first);
              std::sort(av.begin(), av.end());
              std::sort(pv.begin(), pv.end());
              f.expect(av == pv, where("fetchAndOp: a root's fetched values (sorted)", me, r));
            } else {
              // PETSc: some serial order of the root's leaves.
              std::sort(p.begin(), p.end());
              PetscInt run = root0(me, r);
              bool serial = true;
              for (auto& [v, inc] : p) {
                serial = serial && v == run;
                run += inc;
              }
              f.expect(serial && run == proot[r],
                       where("fetchAndOp: PETSc's fetched values as a serial order", me, r));
            }
          }
          f.report();
          CHECK(f.list.empty());
        }
      }
    }
}

TEST_CASE("StarForest vs PetscSF: compose and embedRoots give the same graphs") {
  Comm c = Comm::world();
  const int me = c.rank(), P = c.size();
  for (auto [seed, scale] : kGraphs)
    for (int shapeA = 0; shapeA < 4; ++shapeA) {
      const int shapeB = (shapeA + 1) % 4;
      CAPTURE(seed);
      CAPTURE(scale);
      CAPTURE(shapeA);
      CAPTURE(shapeB);
      const SfGraph A = make_graph(P, seed, shapeA, scale);
      // B's roots are A's leaf space; or (seed 2) all but its last 3 leaves, A's leaves past B's
      // roots dropped by both; or (seed 3, A's leaves sparse) 2 roots more than A has leaves.
      // (PetscSFCompose reads contiguous leaves of A as B's roots: it needs at least as many.)
      std::vector<std::int64_t> rootsB(static_cast<std::size_t>(P));
      for (int q = 0; q < P; ++q)
        rootsB[q] = std::max<std::int64_t>(
            0, A.extent(q) - (seed == 2 ? 3 : 0) + (seed == 3 && shapeA == 1 ? 2 : 0));
      const SfGraph B = make_graph(P, seed + 100, shapeB, scale, rootsB);
      PetscForest pa(A, me), pb(B, me);
      Failures f;
      {
        PetscSF pba = nullptr;
        PETSC_CHECK(PetscSFCompose(pa.get(), pb.get(), &pba));
        PetscForest composed(pba);
        StarForest sa = antler_forest(c, A, SfBackend::p2p),
                   sb = antler_forest(c, B, SfBackend::p2p);
        StarForest ab = StarForest::compose(sa, sb);
        const auto [an, ae] = graph_of(ab);
        const auto [pn, pe] = graph_of(composed.get());
        f.expect(an == pn, "compose: roots on rank " + std::to_string(me));
        f.expect(ae == pe, "compose: each leaf's root on rank " + std::to_string(me) + " (" +
                               std::to_string(ae.size()) + " and " + std::to_string(pe.size()) +
                               " leaves)");
      }
      for (int pick = 0; pick < 3; ++pick) {
        CAPTURE(pick);
        // Roots kept: every other, none, or all but every third (sorted, distinct).
        std::vector<std::int64_t> keep;
        for (std::int64_t r = 0; r < A.nroots[me]; ++r)
          if ((pick == 0 && (r + me) % 2 == 0) || (pick == 2 && (r * 7 + me) % 3 != 0))
            keep.push_back(r);
        std::vector<PetscInt> pkeep(keep.begin(), keep.end());
        PetscSF pe = nullptr;
        PETSC_CHECK(PetscSFCreateEmbeddedRootSF(pa.get(), static_cast<PetscInt>(pkeep.size()),
                                                pkeep.empty() ? nullptr : pkeep.data(), &pe));
        PetscForest embedded(pe);
        StarForest sa = antler_forest(c, A, SfBackend::p2p);
        StarForest e = sa.embedRoots(keep);
        const auto [an, ae] = graph_of(e);
        const auto [pn, pgraph] = graph_of(embedded.get());
        f.expect(an == pn, "embedRoots: roots on rank " + std::to_string(me));
        f.expect(ae == pgraph, "embedRoots: each leaf's root on rank " + std::to_string(me));
      }
      f.report();
      CHECK(f.list.empty());
    }
}

#ifndef ANTLER_TEST_CASE_TIMEOUT_DEFAULT  // seconds; tests/CMakeLists.txt sets it
#define ANTLER_TEST_CASE_TIMEOUT_DEFAULT 120
#endif

DOCTEST_REGISTER_LISTENER("watchdog", 1, antler::test::WatchdogListener);

// As tests/comm/main.cpp (every rank runs every case; every rank exits with the worst result),
// with PETSc initialised on the MPI that comm::Environment started (so PETSc neither
// initialises nor finalises it) and finalised before it.
int main(int argc, char** argv) {
  comm::Environment env(&argc, &argv);
  PETSC_CHECK(PetscInitialize(&argc, &argv, nullptr, nullptr));
  const char* limit = std::getenv("ANTLER_TEST_CASE_TIMEOUT");  // seconds; 0 turns it off
  const double seconds = limit ? std::atof(limit) : ANTLER_TEST_CASE_TIMEOUT_DEFAULT;
  auto& watchdog = antler::test::Watchdog::instance();
  if (seconds > 0) watchdog.start(seconds);
  doctest::Context ctx(argc, argv);
  int result = ctx.run();
  watchdog.stop();
  int worst = 0;
  MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX, mpi_handle(Comm::world()));
  PetscFinalize();
  return worst;
}
