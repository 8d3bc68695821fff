// Question: how fast are StarForest's bcast and reduce (sum of doubles) next to PETSc's PetscSF
// on the same graph, and next to a hand-written MPI_Alltoallv exchange? Goal: <= 1.0x PetscSF.
//
//   mpirun -n 2 ./build/bench/star_forest [leaves [roots [repetitions [backends]]]]
//                                          # defaults 1e6 5e5 20 p2p,neighbour
//
// The graph: every rank has `roots` roots and `leaves` leaves (contiguous, ilocal empty/NULL);
// leaf i's root is a uniformly random rank and a uniformly random root on it (splitmix64 seeded
// by the rank: the same graph for every implementation and every run at one P). Timed, each as
// the slowest rank's time of one Begin+End after a barrier, the median of the repetitions:
//
//   antler      comm::StarForest, each backend of the list (allgatherv can be named too; it is
//               not chosen automatically at this size: every rank receives every rank's data)
//   PetscSF     PetscSFBcastBegin/End (MPI_REPLACE) and PetscSFReduceBegin/End (MPI_SUM) of
//               MPIU_SCALAR (double), type from -sf_type (default basic); only when the build
//               found PETSc (ANTLER_HAVE_PETSC)
//   alltoallv   by hand: pack by destination rank, MPI_Alltoallv, unpack; the two-sided graph
//               and the buffers built once, edges within the rank copied directly
//
// The implementations alternate within each repetition (the order rotating) so that they share
// the machine's noise. Checks (exit 1 if one fails): every bcast result bit-equal to every
// other; antler's reduce bit-identical across its backends and to the hand-written exchange
// (which applies the leaves in antler's documented order: leaf rank, then leaf index); PETSc's
// reduce equal within rounding (its order of application may differ), with the number of roots
// whose bits differ printed.
#include "core/comm/star_forest.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/machine.hpp"
#include "core/comm/mpi.hpp"

#ifdef ANTLER_HAVE_PETSC
#include <petscsf.h>
#endif

using namespace antler;

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// splitmix64 (the same numbers on every platform).
struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::int64_t below(std::int64_t n) { return static_cast<std::int64_t>(next() % n); }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#ifdef ANTLER_HAVE_PETSC
void petsc_check(PetscErrorCode e, const char* call) {
  if (e) throw std::runtime_error(std::string(call) + ": PETSc error " + std::to_string(e));
}
#define PETSC_CHECK(call) petsc_check((call), #call)
static_assert(std::is_same_v<PetscScalar, double>,
              "this bench needs PETSc with real double scalars");

/// PetscInitialize after comm::Environment (MPI already up: PETSc neither initialises nor
/// finalises it), PetscFinalize before the Environment's MPI_Finalize.
struct Petsc {
  Petsc(int* argc, char*** argv) { PETSC_CHECK(PetscInitialize(argc, argv, nullptr, nullptr)); }
  ~Petsc() { PetscFinalize(); }
};
#endif

/// Seconds of one operation (the slowest rank's) and of its two halves (each the slowest
/// rank's): Begin (pack, post) and End (wait, unpack).
struct Times {
  std::vector<double> total, begin, end;
};

/// One implementation under test: its own buffers, each operation as Begin and End.
struct Impl {
  std::string name;
  bool antler = false;
  std::vector<double> leaf, root;
  std::function<void()> bcastBegin, bcastEnd, reduceBegin, reduceEnd;
  Times tBcast, tReduce;
  void bcast() {
    bcastBegin();
    bcastEnd();
  }
};

/// The hand-written exchange: the two-sided graph built once with MPI_Alltoall(v), then each
/// operation packs by destination rank, calls MPI_Alltoallv and unpacks. Edges whose root is on
/// this rank are copied directly; a reduce applies ranks below, this rank, ranks above (each
/// rank's leaves by leaf index), antler's documented order.
class Alltoallv {
 public:
  Alltoallv(MPI_Comm c, std::int64_t nroots, const std::vector<comm::SfNode>& remote) : c_(c) {
    int P = 1;
    MPI_Comm_size(c, &P);
    MPI_Comm_rank(c, &me_);
    // Leaf side: leaves grouped by root rank, by leaf index within a rank (a counting sort).
    std::vector<int> cnt(P, 0);
    for (const auto& n : remote) ++cnt[n.rank];
    cnt[me_] = 0;
    std::vector<int> at(P + 1, 0);
    for (int q = 0; q < P; ++q) at[q + 1] = at[q] + cnt[q];
    leafOrder_.resize(at[P]);
    std::vector<std::int64_t> rootIdx(at[P]);
    std::vector<int> fill(at.begin(), at.end() - 1);
    for (std::size_t i = 0; i < remote.size(); ++i) {
      if (remote[i].rank == me_) {
        selfLeaf_.push_back(static_cast<std::int64_t>(i));
        selfRoot_.push_back(remote[i].index);
        continue;
      }
      const int k = fill[remote[i].rank]++;
      leafOrder_[k] = static_cast<std::int64_t>(i);
      rootIdx[k] = remote[i].index;
    }
    leafCount_ = cnt;
    leafDispl_.assign(at.begin(), at.end() - 1);
    // Root side: who sends how many, and which root each of their edges names.
    rootCount_.assign(P, 0);
    MPI_Alltoall(leafCount_.data(), 1, MPI_INT, rootCount_.data(), 1, MPI_INT, c);
    rootDispl_.assign(P, 0);
    int total = 0;
    for (int q = 0; q < P; ++q) {
      rootDispl_[q] = total;
      total += rootCount_[q];
    }
    rootIdx_.resize(total);
    MPI_Alltoallv(rootIdx.data(), leafCount_.data(), leafDispl_.data(), MPI_INT64_T,
                  rootIdx_.data(), rootCount_.data(), rootDispl_.data(), MPI_INT64_T, c);
    for (auto r : rootIdx_)
      if (r < 0 || r >= nroots) throw std::runtime_error("alltoallv: a root out of range");
    leafBuf_.resize(leafOrder_.size());
    rootBuf_.resize(rootIdx_.size());
  }

  // Begin: pack; End: exchange, unpack (MPI_Alltoallv is blocking).
  void bcastPack(const double* root) {
    for (std::size_t k = 0; k < rootIdx_.size(); ++k) rootBuf_[k] = root[rootIdx_[k]];
  }
  void bcastExchange(const double* root, double* leaf) {
    MPI_Alltoallv(rootBuf_.data(), rootCount_.data(), rootDispl_.data(), MPI_DOUBLE,
                  leafBuf_.data(), leafCount_.data(), leafDispl_.data(), MPI_DOUBLE, c_);
    for (std::size_t k = 0; k < selfLeaf_.size(); ++k) leaf[selfLeaf_[k]] = root[selfRoot_[k]];
    for (std::size_t k = 0; k < leafOrder_.size(); ++k) leaf[leafOrder_[k]] = leafBuf_[k];
  }

  void reducePack(const double* leaf) {
    for (std::size_t k = 0; k < leafOrder_.size(); ++k) leafBuf_[k] = leaf[leafOrder_[k]];
  }
  void reduceExchange(const double* leaf, double* root) {
    MPI_Alltoallv(leafBuf_.data(), leafCount_.data(), leafDispl_.data(), MPI_DOUBLE,
                  rootBuf_.data(), rootCount_.data(), rootDispl_.data(), MPI_DOUBLE, c_);
    const std::size_t below = static_cast<std::size_t>(rootDispl_[me_]);
    for (std::size_t k = 0; k < below; ++k) root[rootIdx_[k]] += rootBuf_[k];
    for (std::size_t k = 0; k < selfLeaf_.size(); ++k) root[selfRoot_[k]] += leaf[selfLeaf_[k]];
    for (std::size_t k = below; k < rootIdx_.size(); ++k) root[rootIdx_[k]] += rootBuf_[k];
  }

  std::size_t remoteEdges() const { return leafOrder_.size(); }
  std::size_t selfEdges() const { return selfLeaf_.size(); }

 private:
  MPI_Comm c_;
  int me_ = 0;
  std::vector<int> leafCount_, leafDispl_, rootCount_, rootDispl_;
  std::vector<std::int64_t> leafOrder_, rootIdx_, selfLeaf_, selfRoot_;
  std::vector<double> leafBuf_, rootBuf_;
};

std::vector<comm::SfBackend> parse_backends(const std::string& list) {
  std::vector<comm::SfBackend> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(comm::parse_sf_backend(item));
  return out;
}

int run(int argc, char** argv) {
  comm::Comm world = comm::Comm::world();
  MPI_Comm mw = comm::mpi_handle(world);
  const int P = world.size(), me = world.rank();
  const auto nleaves = static_cast<std::int64_t>(argc > 1 ? std::atof(argv[1]) : 1e6);
  const auto nroots = static_cast<std::int64_t>(argc > 2 ? std::atof(argv[2]) : 5e5);
  const int reps = argc > 3 ? std::atoi(argv[3]) : 20;
  const auto backends = parse_backends(argc > 4 ? argv[4] : "p2p,neighbour");
  const int warm = 2;
  if (nleaves < 0 || nroots < 1 || reps < 1) {
    if (me == 0) std::fprintf(stderr, "usage: star_forest [leaves [roots [reps [backends]]]]\n");
    return 2;
  }

  // The graph, and the values.
  Rng g{0x5f0e57ull * 1000003u + static_cast<std::uint64_t>(me) * 7919u};
  std::vector<comm::SfNode> remote(static_cast<std::size_t>(nleaves));
  for (auto& n : remote) {
    n.rank = g.below(P);
    n.index = g.below(nroots);
  }
  std::vector<double> root0(static_cast<std::size_t>(nroots)),
      leaf0(static_cast<std::size_t>(nleaves));
  for (auto& v : root0) v = 0.5 + g.unit();
  for (auto& v : leaf0) v = 2 * g.unit() - 1;

  if (me == 0) {
    std::printf(
        "Question: StarForest bcast and reduce (sum of doubles) vs PetscSF and a hand-written "
        "MPI_Alltoallv, same graph, same run. Goal: <= 1.0x PetscSF.\n");
    std::printf(
        "P = %d, %lld leaves and %lld roots per rank (each leaf's root: a random rank and "
        "root), %d repetitions (+%d warm-up), median of the slowest rank's time\n",
        P, static_cast<long long>(nleaves), static_cast<long long>(nroots), reps, warm);
#ifdef ANTLER_HAVE_PETSC
    std::printf("PetscSF: PETSc %d.%d.%d, %zu-byte PetscInt\n", PETSC_VERSION_MAJOR,
                PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR, sizeof(PetscInt));
#else
    std::printf("PetscSF: not built (PETSc not found by CMake)\n");
#endif
  }

  std::vector<std::unique_ptr<Impl>> impls;
  std::vector<std::unique_ptr<comm::StarForest>> forests;
  std::vector<double> setupSeconds;

  // antler, each backend.
  for (comm::SfBackend b : backends) {
    auto sf = std::make_unique<comm::StarForest>(world);
    sf->setGraph(nroots, nleaves, {}, remote);
    sf->setBackend(b);
    MPI_Barrier(mw);
    const double t0 = now();
    sf->setUp();
    setupSeconds.push_back(now() - t0);
    auto im = std::make_unique<Impl>();
    im->name = std::string("antler ") + comm::to_string(sf->backend());
    im->antler = true;
    im->leaf.assign(static_cast<std::size_t>(nleaves), 0.0);
    im->root = root0;
    comm::StarForest* s = sf.get();
    Impl* x = im.get();
    im->bcastBegin = [s, x] {
      s->bcastBegin(std::span<const double>(x->root), std::span<double>(x->leaf));
    };
    im->bcastEnd = [s, x] {
      s->bcastEnd(std::span<const double>(x->root), std::span<double>(x->leaf));
    };
    im->reduceBegin = [s, x] {
      s->reduceBegin(std::span<const double>(x->leaf), std::span<double>(x->root),
                     comm::ops::sum{});
    };
    im->reduceEnd = [s, x] {
      s->reduceEnd(std::span<const double>(x->leaf), std::span<double>(x->root), comm::ops::sum{});
    };
    forests.push_back(std::move(sf));
    impls.push_back(std::move(im));
  }

#ifdef ANTLER_HAVE_PETSC
  PetscSF psf = nullptr;
  {
    std::vector<PetscSFNode> premote(remote.size());
    for (std::size_t i = 0; i < remote.size(); ++i) {
      premote[i].rank = static_cast<PetscInt>(remote[i].rank);
      premote[i].index = static_cast<PetscInt>(remote[i].index);
    }
    PETSC_CHECK(PetscSFCreate(PETSC_COMM_WORLD, &psf));
    PETSC_CHECK(PetscSFSetFromOptions(psf));
    PETSC_CHECK(PetscSFSetGraph(psf, static_cast<PetscInt>(nroots), static_cast<PetscInt>(nleaves),
                                nullptr, PETSC_COPY_VALUES, premote.data(), PETSC_COPY_VALUES));
    MPI_Barrier(mw);
    const double t0 = now();
    PETSC_CHECK(PetscSFSetUp(psf));
    setupSeconds.push_back(now() - t0);
    PetscSFType type = nullptr;
    PETSC_CHECK(PetscSFGetType(psf, &type));
    auto im = std::make_unique<Impl>();
    im->name = std::string("PetscSF ") + (type ? type : "?");
    im->leaf.assign(static_cast<std::size_t>(nleaves), 0.0);
    im->root = root0;
    Impl* x = im.get();
    im->bcastBegin = [psf, x] {
      PETSC_CHECK(PetscSFBcastBegin(psf, MPIU_SCALAR, x->root.data(), x->leaf.data(), MPI_REPLACE));
    };
    im->bcastEnd = [psf, x] {
      PETSC_CHECK(PetscSFBcastEnd(psf, MPIU_SCALAR, x->root.data(), x->leaf.data(), MPI_REPLACE));
    };
    im->reduceBegin = [psf, x] {
      PETSC_CHECK(PetscSFReduceBegin(psf, MPIU_SCALAR, x->leaf.data(), x->root.data(), MPI_SUM));
    };
    im->reduceEnd = [psf, x] {
      PETSC_CHECK(PetscSFReduceEnd(psf, MPIU_SCALAR, x->leaf.data(), x->root.data(), MPI_SUM));
    };
    impls.push_back(std::move(im));
  }
  const std::size_t petscAt = impls.size() - 1;
#endif

  // The hand-written exchange, on its own duplicate of the communicator.
  comm::Comm dup = world.dup();
  MPI_Barrier(mw);
  double t0 = now();
  Alltoallv a2a(comm::mpi_handle(dup), nroots, remote);
  setupSeconds.push_back(now() - t0);
  {
    auto im = std::make_unique<Impl>();
    im->name = "alltoallv (hand)";
    im->leaf.assign(static_cast<std::size_t>(nleaves), 0.0);
    im->root = root0;
    Impl* x = im.get();
    Alltoallv* a = &a2a;
    im->bcastBegin = [a, x] { a->bcastPack(x->root.data()); };
    im->bcastEnd = [a, x] { a->bcastExchange(x->root.data(), x->leaf.data()); };
    im->reduceBegin = [a, x] { a->reducePack(x->leaf.data()); };
    im->reduceEnd = [a, x] { a->reduceExchange(x->leaf.data(), x->root.data()); };
    impls.push_back(std::move(im));
  }
  const std::size_t a2aAt = impls.size() - 1;
  if (me == 0)
    std::printf("edges on rank 0: %zu to other ranks, %zu within the rank\n", a2a.remoteEdges(),
                a2a.selfEdges());

  // Timing: bcast then reduce in every repetition, every implementation in turn (rotating).
  const std::size_t n = impls.size();
  auto timed = [&](const std::function<void()>& begin, const std::function<void()>& end, Times& out,
                   bool keep) {
    MPI_Barrier(mw);
    const double t0 = now();
    begin();
    const double t1 = now();
    end();
    const double t2 = now();
    double t[3] = {t2 - t0, t1 - t0, t2 - t1}, slowest[3];
    MPI_Allreduce(t, slowest, 3, MPI_DOUBLE, MPI_MAX, mw);
    if (!keep) return;
    out.total.push_back(slowest[0]);
    out.begin.push_back(slowest[1]);
    out.end.push_back(slowest[2]);
  };
  for (int r = 0; r < warm + reps; ++r) {
    for (std::size_t k = 0; k < n; ++k) {
      Impl& im = *impls[(k + static_cast<std::size_t>(r)) % n];
      timed(im.bcastBegin, im.bcastEnd, im.tBcast, r >= warm);
    }
    for (std::size_t k = 0; k < n; ++k) {
      Impl& im = *impls[(k + static_cast<std::size_t>(r)) % n];
      im.root = root0;  // a reduce adds into the roots: each starts from the same values
      std::copy(leaf0.begin(), leaf0.end(), im.leaf.begin());
      timed(im.reduceBegin, im.reduceEnd, im.tReduce, r >= warm);
    }
  }

  // Checks, on the last repetition's results (leaf: leaf0; root: root0 + the leaves' sums).
  // The bcast's results were overwritten by the reduce's inputs: one more bcast each.
  std::vector<std::vector<double>> reduced;
  for (auto& im : impls) reduced.push_back(im->root);
  for (auto& im : impls) {
    im->root = root0;
    im->bcast();
  }
  long long bad = 0, petscBitsDiffer = 0;
  double petscWorst = 0;
  const Impl& ref = *impls[a2aAt];
  for (std::size_t k = 0; k < n; ++k) {
    const Impl& im = *impls[k];
    for (std::size_t i = 0; i < im.leaf.size(); ++i)
      if (!same_bits(im.leaf[i], ref.leaf[i])) ++bad;
    const bool ordered = im.antler || k == a2aAt;
    for (std::size_t i = 0; i < reduced[k].size(); ++i) {
      const double a = reduced[k][i], b = reduced[a2aAt][i];
      if (ordered) {
        if (!same_bits(a, b)) ++bad;
      } else {
        if (!same_bits(a, b)) ++petscBitsDiffer;
        const double err = std::abs(a - b) / std::max(1.0, std::abs(b));
        petscWorst = std::max(petscWorst, err);
        if (!(err <= 1e-13)) ++bad;
      }
    }
  }
  long long badAll = 0, differAll = 0;
  double worstAll = 0;
  MPI_Allreduce(&bad, &badAll, 1, MPI_LONG_LONG, MPI_SUM, mw);
  MPI_Allreduce(&petscBitsDiffer, &differAll, 1, MPI_LONG_LONG, MPI_SUM, mw);
  MPI_Allreduce(&petscWorst, &worstAll, 1, MPI_DOUBLE, MPI_MAX, mw);

  if (me == 0) {
    std::printf("setup, one call (rank 0's time):");
    for (std::size_t k = 0; k < n; ++k)
      std::printf(" %s %.1f ms%s", impls[k]->name.c_str(), setupSeconds[k] * 1e3,
                  k + 1 < n ? ";" : "\n");
    std::printf("\n%-22s %28s %28s\n", "implementation", "bcast ms (median [min-max])",
                "reduce sum ms (median [...])");
    for (const auto& im : impls) {
      auto [bl, bh] = std::minmax_element(im->tBcast.total.begin(), im->tBcast.total.end());
      auto [rl, rh] = std::minmax_element(im->tReduce.total.begin(), im->tReduce.total.end());
      std::printf("%-22s %9.3f [%6.3f-%7.3f] %9.3f [%6.3f-%7.3f]\n", im->name.c_str(),
                  median(im->tBcast.total) * 1e3, *bl * 1e3, *bh * 1e3,
                  median(im->tReduce.total) * 1e3, *rl * 1e3, *rh * 1e3);
    }
    std::printf(
        "\nhalves, median ms of the slowest rank's: Begin (pack, post; the hand exchange: "
        "pack) and End (wait, unpack; the hand exchange: MPI_Alltoallv, unpack)\n");
    std::printf("%-22s %10s %10s %10s %10s\n", "implementation", "bcast B", "bcast E", "reduce B",
                "reduce E");
    for (const auto& im : impls)
      std::printf("%-22s %10.3f %10.3f %10.3f %10.3f\n", im->name.c_str(),
                  median(im->tBcast.begin) * 1e3, median(im->tBcast.end) * 1e3,
                  median(im->tReduce.begin) * 1e3, median(im->tReduce.end) * 1e3);
    auto ratios = [](const Impl& x, const Impl& y, const char* goal) {
      std::printf("%-22s / %-16s bcast %5.2f  reduce %5.2f%s\n", x.name.c_str(), y.name.c_str(),
                  median(x.tBcast.total) / median(y.tBcast.total),
                  median(x.tReduce.total) / median(y.tReduce.total), goal);
    };
    std::printf("\nratios of medians:\n");
    for (const auto& im : impls) {
      if (!im->antler) continue;
#ifdef ANTLER_HAVE_PETSC
      ratios(*im, *impls[petscAt], "  (goal <= 1.0)");
#endif
      ratios(*im, ref, "");
    }
#ifdef ANTLER_HAVE_PETSC
    ratios(*impls[petscAt], ref, "");
#endif
    std::printf(
        "\ncheck: bcast bit-equal everywhere, antler's reduce bit-identical across backends and "
        "to the hand-written exchange in its order%s: %s\n",
#ifdef ANTLER_HAVE_PETSC
        ", PetscSF's reduce within 1e-13 relative",
#else
        "",
#endif
        badAll == 0 ? "ok" : "FAILED");
#ifdef ANTLER_HAVE_PETSC
    std::printf(
        "PetscSF's reduce: %lld of %lld roots differ in their bits from antler's order "
        "(largest relative difference %.2g)\n",
        differAll, static_cast<long long>(nroots) * P, worstAll);
#endif
    if (badAll) std::printf("mismatches: %lld\n", badAll);
  }
#ifdef ANTLER_HAVE_PETSC
  PETSC_CHECK(PetscSFDestroy(&psf));
#endif
  return badAll == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  bench::print_machine();
  comm::Environment env(&argc, &argv);
#ifdef ANTLER_HAVE_PETSC
  Petsc petsc(&argc, &argv);
#endif
  return run(argc, argv);
}
