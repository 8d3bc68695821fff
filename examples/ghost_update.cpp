// Star forests without the rest of antler (core/comm only): a 1-D mesh of N points split in
// blocks over the ranks. Each rank owns its block (the forest's roots) and sees its points plus a
// ghost on each side (its leaves, each naming the owner's root). Then:
//   ghost update   bcast: every local copy gets its owner's value;
//   assembly       reduce SUM: each rank's element contributions summed at the owners;
//   ownership      fetchAndOp SUM: each rank learns where its items land at their new owners.
// Every result is checked against its formula; the program prints OK or what failed.
//
//   mpirun -n 3 ./build/examples/ghost_update
#include <cstdio>
#include <vector>

#include "core/comm/mpi.hpp"
#include "core/comm/star_forest.hpp"

using namespace antler;

int main(int argc, char** argv) {
  comm::Environment env(&argc, &argv);
  comm::Comm c = comm::Comm::world();
  const int P = c.size(), me = c.rank();
  const std::int64_t N = 100;
  auto first = [&](int q) { return N * q / P; };
  auto owner = [&](std::int64_t g) {
    int q = 0;
    while (first(q + 1) <= g) ++q;
    return q;
  };
  const std::int64_t lo = first(me), hi = first(me + 1);
  const std::int64_t a = lo > 0 ? lo - 1 : 0, b = hi < N ? hi + 1 : N;  // with the ghosts

  // The forest: leaf i (local point a + i) names its owner's root.
  std::vector<comm::SfNode> remote;
  for (std::int64_t g = a; g < b; ++g) remote.push_back({owner(g), g - first(owner(g))});
  comm::StarForest sf(c);
  const auto nleaves = static_cast<std::int64_t>(remote.size());
  sf.setGraph(hi - lo, nleaves, {}, std::move(remote));
  sf.setUp();

  int bad = 0;
  // Ghost update: u(g) = g^2 at the owners, to every copy.
  std::vector<double> owned(static_cast<std::size_t>(hi - lo)),
      local(static_cast<std::size_t>(b - a));
  for (std::int64_t g = lo; g < hi; ++g) owned[static_cast<std::size_t>(g - lo)] = double(g * g);
  sf.bcastBegin(std::span<const double>(owned), std::span<double>(local));
  // ... work that needs neither buffer could go here ...
  sf.bcastEnd(std::span<const double>(owned), std::span<double>(local));
  for (std::int64_t g = a; g < b; ++g)
    bad += local[static_cast<std::size_t>(g - a)] != double(g * g);

  // Assembly: the elements (g, g + 1) of this rank's block add 1 to both ends.
  std::vector<double> contrib(local.size(), 0.0), assembled(owned.size(), 0.0);
  for (std::int64_t g = lo; g < hi && g + 1 < N; ++g) {
    contrib[static_cast<std::size_t>(g - a)] += 1;
    contrib[static_cast<std::size_t>(g + 1 - a)] += 1;
  }
  sf.reduce(std::span<const double>(contrib), std::span<double>(assembled), comm::ops::sum{});
  for (std::int64_t g = lo; g < hi; ++g)
    bad += assembled[static_cast<std::size_t>(g - lo)] != double((g > 0) + (g + 1 < N));

  // Ownership: every rank sends 2 items to each rank (leaf q of `counts` names rank q's root):
  // fetch-and-add tells each sender its offset at the receiver, in rank order.
  std::vector<comm::SfNode> ranks;
  for (int q = 0; q < P; ++q) ranks.push_back({q, 0});
  comm::StarForest perRank(c);
  perRank.setGraph(1, P, {}, std::move(ranks));
  perRank.setUp();
  std::vector<std::int64_t> incoming(1, 0), send(static_cast<std::size_t>(P), 2),
      offset(static_cast<std::size_t>(P), -1);
  perRank.fetchAndOp(std::span<std::int64_t>(incoming), std::span<const std::int64_t>(send),
                     std::span<std::int64_t>(offset), comm::ops::sum{});
  bad += incoming[0] != 2 * P;
  for (int q = 0; q < P; ++q) bad += offset[static_cast<std::size_t>(q)] != 2 * me;

  const int anyBad = comm::allreduce(c, bad, comm::ops::sum{});
  if (me == 0)
    std::printf("star forest on %d rank(s): ghost update, assembly, ownership: %s\n", P,
                anyBad ? "FAILED" : "OK");
  return anyBad ? 1 : 0;
}
