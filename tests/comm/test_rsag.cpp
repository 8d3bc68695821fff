// Reduce-scatter + allgather at any P (ghost ranks played by the lower half): the canonical
// order's bits at P = 3, 5, 6, 7, 12, 100 on the Local backend, for vector lengths below, at and
// above P and not a multiple of it, with floating-point sums whose association matters; the
// textbook counts at powers of two; and MPI's own all-reduce as oracle for exact ops.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/comm/collectives.hpp"
#include "core/comm/local.hpp"
#include "core/comm/mpi.hpp"
#include "tests/comm/canonical.hpp"

using namespace antler;
using namespace antler::comm;
using antler::test::canonical_sum_of;
using antler::test::contribution;

namespace {

// Element i of rank r: the canonical test values, shifted per element so that every element's
// sum depends on the association differently.
double element(int r, std::size_t i) {
  return contribution(static_cast<int>((r + 7 * i) % 1009)) *
         (1.0 + 0.25 * static_cast<double>(i % 3));
}

int ceil_log2(int P) {
  int k = 0;
  while ((1 << k) < P) ++k;
  return k;
}

}  // namespace

TEST_CASE("Local: reduce_scatter_allgather at any P gives the canonical-order bits") {
  if (Comm::world().size() != 1) return;
  for (int P : {3, 5, 6, 7, 12, 100}) {
    for (std::size_t n :
         {std::size_t{0}, std::size_t{1}, std::size_t{5}, static_cast<std::size_t>(P),
          static_cast<std::size_t>(3 * P + 1), std::size_t{1000}}) {
      CAPTURE(P);
      CAPTURE(n);
      std::vector<double> want(n);
      for (std::size_t i = 0; i < n; ++i)
        want[i] = canonical_sum_of(P, [&](int r) { return element(r, i); });
      // The order matters for these values: a sum of the even ranks, then the odd ones, differs.
      if (n == 1000) {
        bool differs = false;
        for (std::size_t i = 0; i < n; ++i) {
          double other = 0;
          for (int r = 0; r < P; r += 2) other += element(r, i);
          for (int r = 1; r < P; r += 2) other += element(r, i);
          differs = differs || other != want[i];
        }
        CHECK(differs);
      }
      std::vector<std::vector<double>> got(static_cast<std::size_t>(P));
      run_local(P, [&](Comm& c) {
        std::vector<double> v(n);
        for (std::size_t i = 0; i < n; ++i) v[i] = element(c.rank(), i);
        got[static_cast<std::size_t>(c.rank())] =
            allreduce(c, v, ops::sum{}, {Algorithm::reduce_scatter_allgather});
      });
      int same = 0;
      for (auto& g : got) same += g == want;  // bit for bit, on every rank
      CHECK(same == P);
    }
  }
}

TEST_CASE("Local: reduce_scatter_allgather takes 2 log2 P rounds at powers of two") {
  if (Comm::world().size() != 1) return;
  for (int P : {2, 4, 8, 64}) {
    CAPTURE(P);
    auto stats = run_local(P, [](Comm& c) {
      (void)allreduce(c, std::vector<double>(256, 1.0), ops::sum{},
                      {Algorithm::reduce_scatter_allgather});
    });
    for (auto& s : stats) {
      CHECK(s.rounds == static_cast<std::uint64_t>(2 * ceil_log2(P)));
      CHECK(s.messagesSent == static_cast<std::uint64_t>(2 * ceil_log2(P)));
      // n (P - 1) / P bytes each way: the textbook's bandwidth term.
      CHECK(s.bytesSent - 16 * s.messagesSent == 2u * 256 * 8 * (P - 1) / P);
    }
  }
}

TEST_CASE("MPI: reduce_scatter_allgather at every P equals MPI_Allreduce for integers") {
  Comm c = Comm::world();
  const int P = c.size(), r = c.rank();
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{100003}}) {
    CAPTURE(n);
    std::vector<long> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<long>((i * 31 + r * 17) % 97) - 48;
    for (int op = 0; op < 3; ++op) {
      const MPI_Op mpiOp = op == 0 ? MPI_SUM : op == 1 ? MPI_MAX : MPI_BOR;
      std::vector<long> oracle(n);
      MPI_Allreduce(v.data(), oracle.data(), static_cast<int>(n), MPI_LONG, mpiOp, mpi_handle(c));
      const Options o{Algorithm::reduce_scatter_allgather};
      const auto got = op == 0   ? allreduce(c, v, ops::sum{}, o)
                       : op == 1 ? allreduce(c, v, ops::max{}, o)
                                 : allreduce(c, v, ops::bor{}, o);
      int ok = got == oracle, all = 0;
      MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, mpi_handle(c));
      CHECK(all == 1);
    }
    // Doubles: the canonical order, bit for bit.
    std::vector<double> d(n);
    for (std::size_t i = 0; i < n; ++i) d[i] = element(r, i);
    const auto got = allreduce(c, d, ops::sum{}, {Algorithm::reduce_scatter_allgather});
    int ok = 1, all = 0;
    for (std::size_t i = 0; i < n && ok; ++i)
      ok = got[i] == canonical_sum_of(P, [&](int q) { return element(q, i); });
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, mpi_handle(c));
    CHECK(all == 1);
  }
}
