// Reductions by id and over rank groups without the rest of antler (core/comm only; Converse's
// CmiReduce family): sums of doubles matched by id, started in a different order on each rank;
// an array's maximum, the array lent rather than copied; a struct reduction (a tally of who took
// part, Boost-serialized) over a group of the even ranks while the odd ranks do something else; and
// a deadline that names the rank that has not contributed yet. Each result is checked against a
// serial fold; the program prints OK or what failed.
//
//   mpirun -n 3 ./build/examples/group_reductions
#include <algorithm>
#include <boost/serialization/vector.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/comm/collectives.hpp"
#include "core/comm/mpi.hpp"
#include "core/comm/reductions.hpp"

using namespace antler;
using namespace std::chrono_literals;

namespace {

ByteBuffer bytes_of(double x) {
  ByteBuffer b;
  b.append(&x, sizeof x);
  return b;
}
double double_of(comm::Bytes b) {
  double x;
  std::memcpy(&x, b.data(), sizeof x);
  return x;
}

/// Who took part, in the order the tree merged them.
struct Tally {
  std::vector<int> ranks;
  template <class A>
  void serialize(A& ar, unsigned) {
    ar& ranks;
  }
};

}  // namespace

int main(int argc, char** argv) {
  comm::Environment env(&argc, &argv);
  comm::Comm c = comm::Comm::world();
  const int P = c.size(), me = c.rank();
  int bad = 0;

  comm::Reductions red(c);  // collective: its own communicator
  // The merge: mine, then each child's, in child order (never arrival order: the same bits).
  auto sum = [](ByteBuffer mine, std::span<const comm::Bytes> kids) {
    double a = double_of({mine.data(), mine.size()});
    for (comm::Bytes k : kids) a += double_of(k);
    std::memcpy(mine.data(), &a, sizeof a);
    return mine;
  };

  // Two sums matched by id, started in the opposite order on odd ranks; rank 0 gets the first in
  // its handler, every rank gets the second (toAll). The second's merge is the same sum applied
  // by Reductions itself, as MPI applies MPI_SUM (an ElementwiseOp: no function to call).
  const comm::ReductionId first = red.globalReductionId(), second = red.globalReductionId();
  double atRoot = 0;
  auto startFirst = [&] {
    return red.reduce(bytes_of(me + 1.0), sum, [&](comm::Bytes t) { atRoot = double_of(t); },
                      {.id = first});
  };
  auto startSecond = [&] {
    return red.reduce(bytes_of(0.5 * me), comm::elementwise<double>(comm::ops::sum{}), {},
                      {.id = second, .toAll = true});
  };
  comm::Reduction r1, r2;
  if (me % 2) {
    r2 = startSecond();
    r1 = startFirst();
  } else {
    r1 = startFirst();
    r2 = startSecond();
  }
  r1.wait();
  r2.wait();
  if (me == 0) bad += atRoot != P * (P + 1) / 2.0;
  bad += double_of(r2.result()) != 0.25 * P * (P - 1);

  // An array of this rank's, lent rather than copied into a buffer (Reductions reads it where it
  // lies, as MPI reads a send buffer; it stays unchanged until the reduction is done here):
  // each element's maximum over the ranks, on every rank.
  std::vector<double> levels(4096);
  for (std::size_t i = 0; i < levels.size(); ++i)
    levels[i] = static_cast<double>((static_cast<std::size_t>(me) * 7 + i) % 5);
  auto m = red.reduce(comm::lend(levels), comm::elementwise<double>(comm::ops::max{}), {},
                      {.id = {}, .toAll = true});
  m.wait();  // levels is the program's again
  for (std::size_t i = 0; i < levels.size(); ++i) {
    double want = 0;
    for (int q = 0; q < P; ++q)
      want = std::max(want, static_cast<double>((static_cast<std::size_t>(q) * 7 + i) % 5));
    double got;
    std::memcpy(&got, m.result().data() + i * sizeof got, sizeof got);
    bad += got != want;
  }

  // The even ranks tally themselves; the odd ranks run an all-reduce of their own meanwhile.
  std::vector<int> evens;
  for (int q = 0; q < P; q += 2) evens.push_back(q);
  const comm::Group g = red.establishGroup(evens);  // no communication; root: rank 0
  comm::Comm odds = c.split(me % 2, me);            // the odd ranks' own communicator
  if (!g.contains(me)) bad += comm::allreduce(odds, 1, comm::ops::sum{}) != P / 2;
  if (g.contains(me)) {
    auto t = red.groupReduceStruct<Tally>(g, Tally{{me}},
                                          [](Tally mine, std::vector<Tally>& kids) {
                                            for (auto& k : kids)
                                              mine.ranks.insert(mine.ranks.end(), k.ranks.begin(),
                                                                k.ranks.end());
                                            return mine;
                                          },
                                          {}, {.id = {}, .toAll = true});
    t.wait();
    bad += t.value().ranks != evens;  // the tree's order: nearest child first, i.e. rank order
  }

  // A deadline: the last rank contributes only after the others have timed out once.
  if (P > 1) {
    const comm::ReductionId late = red.globalReductionId();
    comm::Reduction h;
    if (me != P - 1) {
      h = red.reduce(bytes_of(1), sum, {}, {.id = late, .toAll = true});
      try {
        h.wait(20ms);
        ++bad;  // it cannot have finished
      } catch (const CommError& e) {
        if (me == 0 && std::string(e.what()).find(std::to_string(P - 1)) == std::string::npos)
          ++bad;  // the root names the subtree that holds the last rank
      }
    }
    comm::allreduce(c, 0, comm::ops::sum{});  // everyone has timed out once
    if (me == P - 1) h = red.reduce(bytes_of(1), sum, {}, {.id = late, .toAll = true});
    h.wait();  // the reduction stayed in flight: it finishes now
    bad += double_of(h.result()) != P;
  }

  const int anyBad = comm::allreduce(c, bad, comm::ops::sum{});
  if (me == 0)
    std::printf("reductions on %d rank(s): ids in any order, a group, a deadline: %s\n", P,
                anyBad ? "FAILED" : "OK");
  return anyBad ? 1 : 0;
}
