// core/comm on the MPI backend, at 1, 2, 3 and 4 ranks: every algorithm against the vendor MPI
// call as oracle (integers equal; floating point equal to the canonical-order reference computed
// here), roots other than 0, payloads of 0, 1, an odd number of bytes and 16 MiB, Boost types,
// every op, split and dup, and bad input that fails on every rank.
#include <doctest/doctest.h>

#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "core/comm/collectives.hpp"
#include "core/comm/mpi.hpp"
#include "core/error.hpp"
#include "tests/comm/canonical.hpp"

using namespace antler;
using namespace antler::comm;
using antler::test::canonical_sum;
using antler::test::contribution;

namespace {

struct Record {
  std::string name;
  std::vector<double> values;
  template <class A>
  void serialize(A& ar, unsigned) {
    ar& name& values;
  }
  bool operator==(const Record&) const = default;
};

// True on every rank iff `ok` on every rank (so a check fails everywhere or nowhere).
bool everywhere(Comm& c, bool ok) {
  int in = ok, out = 0;
  c.backend();  // valid
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LAND, mpi_handle(c));
  return out != 0;
}

}  // namespace

TEST_CASE("MPI: broadcast by every algorithm equals MPI_Bcast, from every root, every size") {
  Comm c = Comm::world();
  const int P = c.size();
  for (int root = 0; root < P; ++root) {
    for (std::size_t n :
         {std::size_t{0}, std::size_t{1}, std::size_t{1001}, std::size_t{16} << 20}) {
      std::vector<char> oracle(n);
      if (c.rank() == root)
        for (std::size_t i = 0; i < n; ++i) oracle[i] = static_cast<char>((i * 131 + root) % 251);
      MPI_Bcast(oracle.data(), static_cast<int>(n), MPI_BYTE, root, mpi_handle(c));
      for (Algorithm a : algorithms_for(Collective::broadcast)) {
        if (n == (std::size_t{16} << 20) && root != P - 1) continue;  // 16 MiB once per P
        CAPTURE(to_string(a));
        CAPTURE(n);
        CAPTURE(root);
        std::vector<char> data(n, 0);
        if (c.rank() == root) data = oracle;
        algo::broadcast(c, data, root, Options{a, 7});
        CHECK(everywhere(c, data == oracle));
      }
    }
  }
}

TEST_CASE("MPI: all-reduce and reduce: integers equal MPI's, doubles the canonical bits") {
  Comm c = Comm::world();
  const int P = c.size(), r = c.rank();
  const double want = canonical_sum(P);
  for (Algorithm a : algorithms_for(Collective::allreduce)) {
    CAPTURE(to_string(a));
    // Integers: every op equals the vendor call.
    std::vector<long> v(1001);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<long>((i * 7 + r * 13) % 29) - 14;
    auto vendor = [&](MPI_Op op) {
      std::vector<long> out(v.size());
      MPI_Allreduce(v.data(), out.data(), static_cast<int>(v.size()), MPI_LONG, op, mpi_handle(c));
      return out;
    };
    CHECK(everywhere(c, allreduce(c, v, ops::sum{}, {a}) == vendor(MPI_SUM)));
    CHECK(everywhere(c, allreduce(c, v, ops::min{}, {a}) == vendor(MPI_MIN)));
    CHECK(everywhere(c, allreduce(c, v, ops::max{}, {a}) == vendor(MPI_MAX)));
    CHECK(everywhere(c, allreduce(c, v, ops::band{}, {a}) == vendor(MPI_BAND)));
    CHECK(everywhere(c, allreduce(c, v, ops::bor{}, {a}) == vendor(MPI_BOR)));
    CHECK(everywhere(c, allreduce(c, v, ops::lor{}, {a}) == vendor(MPI_LOR)));
    CHECK(everywhere(c, allreduce(c, v, ops::land{}, {a}) == vendor(MPI_LAND)));
    // Doubles whose sum depends on the association: the canonical order, bit for bit.
    if (a != Algorithm::vendor || P <= 2) {
      CHECK(everywhere(c, allreduce(c, contribution(r), ops::sum{}, {a}) == want));
      std::vector<double> dv(777, contribution(r));
      const auto got = allreduce(c, dv, ops::sum{}, {a});
      CHECK(everywhere(c, got == std::vector<double>(777, want)));
    }
  }
  for (int root = 0; root < P; ++root) {
    const double got = reduce(c, contribution(r), ops::sum{}, root, {Algorithm::binomial});
    if (r == root) CHECK(got == want);
    std::vector<long> v{r, 2L * r, -r};
    std::vector<long> oracle(3);
    MPI_Reduce(v.data(), oracle.data(), 3, MPI_LONG, MPI_SUM, root, mpi_handle(c));
    const auto mine = reduce(c, v, ops::sum{}, root, {Algorithm::binomial});
    const auto theirs = reduce(c, v, ops::sum{}, root, {Algorithm::vendor});
    if (r == root) {
      CHECK(mine == oracle);
      CHECK(theirs == oracle);
    }
  }
  // minloc / maxloc against MPI_MINLOC / MPI_MAXLOC.
  struct {
    double v;
    int r;
  } in{static_cast<double>((r * 5) % 3), r}, lo{}, hi{};
  MPI_Allreduce(&in, &lo, 1, MPI_DOUBLE_INT, MPI_MINLOC, mpi_handle(c));
  MPI_Allreduce(&in, &hi, 1, MPI_DOUBLE_INT, MPI_MAXLOC, mpi_handle(c));
  const auto mlo = allreduce(c, ValueLoc<double>{in.v, r}, ops::minloc{});
  const auto mhi = allreduce(c, ValueLoc<double>{in.v, r}, ops::maxloc{});
  CHECK(everywhere(c,
                   mlo.value == lo.v && mlo.rank == lo.r && mhi.value == hi.v && mhi.rank == hi.r));
}

TEST_CASE("MPI: allgather and gather equal MPI's, sizes that differ, Boost types") {
  Comm c = Comm::world();
  const int P = c.size(), r = c.rank();
  const Record mine{"rank " + std::to_string(r),
                    std::vector<double>(static_cast<std::size_t>(r * 3 + 1), r + 0.5)};
  std::vector<Record> want;
  for (int q = 0; q < P; ++q)
    want.push_back({"rank " + std::to_string(q),
                    std::vector<double>(static_cast<std::size_t>(q * 3 + 1), q + 0.5)});
  for (Algorithm a : algorithms_for(Collective::allgather)) {
    CAPTURE(to_string(a));
    CHECK(everywhere(c, allgather(c, mine, {a}) == want));
    std::vector<int> oracle(static_cast<std::size_t>(P));
    MPI_Allgather(&r, 1, MPI_INT, oracle.data(), 1, MPI_INT, mpi_handle(c));
    CHECK(everywhere(c, allgather(c, r, {a}) == oracle));
  }
  for (int root = 0; root < P; ++root)
    for (Algorithm a : algorithms_for(Collective::gather)) {
      const auto g = gather(c, mine, root, {a});
      CHECK(everywhere(c, r == root ? g == want : g.empty()));
    }
  const auto [before, total] = exscan(c, static_cast<long>(r + 1), ops::sum{});
  CHECK(everywhere(c, before == static_cast<long>(r * (r + 1) / 2) &&
                          total == static_cast<long>(P * (P + 1) / 2)));
}

TEST_CASE("MPI: split, dup and a sub-communicator of half the ranks") {
  Comm c = Comm::world();
  const int P = c.size(), r = c.rank();
  Comm half = c.split(r % 2, -r);  // reversed order inside each half
  REQUIRE(half.valid());
  CHECK(half.size() == (P + 1 - r % 2) / 2);
  const long sum = allreduce(half, static_cast<long>(r), ops::sum{});
  long want = 0;
  for (int q = r % 2; q < P; q += 2) want += q;
  CHECK(everywhere(c, sum == want));
  Comm none = c.split(r == 0 ? -1 : 0, r);
  CHECK(everywhere(c, none.valid() == (r != 0)));
  Comm d = c.dup();
  CHECK(everywhere(c, d.size() == P && d.rank() == r));
}

TEST_CASE("MPI: bad input is an error on every rank") {
  Comm c = Comm::world();
  const int P = c.size();
  int x = 0;
  CHECK_THROWS_AS(broadcast(c, x, P), IndexError);
  CHECK_THROWS_AS(broadcast(c, x, -1), IndexError);
  CHECK_THROWS_AS(broadcast(c, x, 0, {Algorithm::recursive_doubling}), ValueError);
  CHECK_THROWS_AS(c.send(P, 0, {}), IndexError);
  // Not an elementwise fold: reduce-scatter cannot cut it into slices.
  CHECK_THROWS_AS((void)allreduce(c, ValueLoc<double>{1.0, c.rank()}, ops::minloc{},
                                  {Algorithm::reduce_scatter_allgather}),
                  ValueError);
  // The same communicator still works afterwards.
  CHECK(everywhere(c, allreduce(c, 1, ops::sum{}) == P));
}
