// core/comm on the Local backend: every algorithm at P up to 256 (odd, prime, Fibonacci and
// power-of-two counts), against references computed here, with the round and message counts
// each algorithm's textbook figure predicts, and bad input that must fail on every rank.
#include <doctest/doctest.h>

#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "core/comm/collectives.hpp"
#include "core/comm/local.hpp"
#include "core/comm/mpi.hpp"
#include "core/error.hpp"
#include "tests/comm/canonical.hpp"

using namespace antler;
using namespace antler::comm;
using antler::test::canonical_sum;
using antler::test::contribution;

namespace {

bool single_process() {
  // Local tests run in the 1-rank run of this binary only.
  return Comm::world().size() == 1;
}

int ceil_log2(int P) {
  int k = 0;
  while ((1 << k) < P) ++k;
  return k;
}

struct Record {  // a Boost-serialized payload
  std::string name;
  std::vector<int> values;
  template <class A>
  void serialize(A& ar, unsigned) {
    ar& name& values;
  }
  bool operator==(const Record&) const = default;
};

struct Concat {  // a reduce class whose fold is not commutative: the order is visible
  std::string s;
  void tertiaryReduce(const Concat& o) { s += o.s; }
  template <class A>
  void serialize(A& ar, unsigned) {
    ar& s;
  }
};

std::string rank_order(int P, int a, int m) {
  if (m == 1) return std::to_string(a) + ",";
  const int h = m / 2;
  if (a + h >= P) return rank_order(P, a, h);
  return rank_order(P, a, h) + rank_order(P, a + h, h);
}

const std::vector<int> kSizes = {1, 2, 3, 4, 5, 7, 8, 12, 13, 16, 31, 64, 100, 256};

}  // namespace

TEST_CASE("Local: broadcast by every algorithm from any root, with the textbook round counts") {
  if (!single_process()) return;
  for (int P : kSizes) {
    for (int root : {0, P - 1, P / 2}) {
      for (Algorithm a : {Algorithm::binomial, Algorithm::linear_pipeline, Algorithm::fibonacci,
                          Algorithm::scatter_allgather, Algorithm::vendor, Algorithm::automatic}) {
        for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{1001}}) {
          const int k = 4;
          CAPTURE(P);
          CAPTURE(root);
          CAPTURE(to_string(a));
          CAPTURE(n);
          std::vector<int> ok(static_cast<std::size_t>(P), 0);
          auto stats = run_local(P, [&](Comm& c) {
            std::vector<char> data(n, 0);
            if (c.rank() == root)
              for (std::size_t i = 0; i < n; ++i) data[i] = static_cast<char>(i * 7 + 3);
            algo::broadcast(c, data, root, Options{a, k});
            bool good = true;
            for (std::size_t i = 0; i < n; ++i)
              good = good && data[i] == static_cast<char>(i * 7 + 3);
            ok[static_cast<std::size_t>(c.rank())] = good;
          });
          CHECK(std::accumulate(ok.begin(), ok.end(), 0) == P);
          std::uint64_t rounds = 0, messages = 0;
          for (auto& s : stats) {
            rounds = std::max(rounds, s.rounds);
            messages += s.messagesSent;
          }
          if (P == 1) {
            CHECK(messages == 0);
            continue;
          }
          if (a == Algorithm::binomial) {
            CHECK(rounds == static_cast<std::uint64_t>(ceil_log2(P)));
            CHECK(messages == static_cast<std::uint64_t>(P - 1));
          }
          if (a == Algorithm::linear_pipeline && n >= static_cast<std::size_t>(k)) {
            CHECK(rounds == static_cast<std::uint64_t>(P - 1 + k - 1));
            CHECK(messages == static_cast<std::uint64_t>((P - 1) * k));
          }
          if (a == Algorithm::fibonacci && n >= static_cast<std::size_t>(k)) {
            // A Fibonacci tree of N(h) = F(h+3) - 1 ranks (N(h) = 1 + N(h-1) + N(h-2): the
            // left subtree is reached in round 1, the right in round 2) delivers one segment in
            // h rounds and each further one 2 rounds later (every node sends each segment twice).
            int h = 0;
            long n0 = 1, n1 = 2;  // N(h), N(h+1)
            while (n0 < P) {
              const long n2 = 1 + n1 + n0;
              n0 = n1;
              n1 = n2;
              ++h;
            }
            if (n0 == P && h >= 2) {
              CHECK(rounds == static_cast<std::uint64_t>(h + 2 * (k - 1)));
            } else {
              CHECK(rounds <= static_cast<std::uint64_t>(h + 2 * (k - 1)));
            }
            CHECK(messages == static_cast<std::uint64_t>((P - 1) * k));
          }
          if (a == Algorithm::scatter_allgather && n > 0) {
            CHECK(rounds <= static_cast<std::uint64_t>(ceil_log2(P) + P - 1));
          }
        }
      }
    }
  }
}

TEST_CASE("Local: every reduce and all-reduce algorithm gives the canonical-order bits") {
  if (!single_process()) return;
  for (int P : kSizes) {
    const double want = canonical_sum(P);
    // The naive left-to-right sum differs for these values (association matters).
    for (Algorithm a : {Algorithm::binomial, Algorithm::recursive_doubling,
                        Algorithm::reduce_scatter_allgather, Algorithm::automatic}) {
      CAPTURE(P);
      CAPTURE(to_string(a));
      std::vector<double> got(static_cast<std::size_t>(P)), vec0(static_cast<std::size_t>(P));
      auto stats = run_local(P, [&](Comm& c) {
        got[static_cast<std::size_t>(c.rank())] =
            allreduce(c, contribution(c.rank()), ops::sum{}, {a});
        std::vector<double> v(37);
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = contribution(c.rank()) * (i + 1);
        vec0[static_cast<std::size_t>(c.rank())] = allreduce(c, v, ops::sum{}, {a})[0];
      });
      for (int r = 0; r < P; ++r) {
        CHECK(got[static_cast<std::size_t>(r)] == want);  // bit for bit
        CHECK(vec0[static_cast<std::size_t>(r)] == want);
      }
      if (a == Algorithm::recursive_doubling && P > 1) {
        // Two all-reduces of ceil(log2 P) exchanges each; at other P a rank that stands in for
        // a missing partner sends twice in a step.
        std::uint64_t rounds = 0;
        for (auto& s : stats) rounds = std::max(rounds, s.rounds);
        if ((P & (P - 1)) == 0)
          CHECK(rounds == static_cast<std::uint64_t>(2 * ceil_log2(P)));
        else
          CHECK(rounds <= static_cast<std::uint64_t>(4 * ceil_log2(P)));
      }
    }
    for (int root : {0, P - 1}) {
      std::vector<double> got(static_cast<std::size_t>(P));
      run_local(P, [&](Comm& c) {
        got[static_cast<std::size_t>(c.rank())] =
            reduce(c, contribution(c.rank()), ops::sum{}, root, {Algorithm::binomial});
      });
      CHECK(got[static_cast<std::size_t>(root)] == want);
    }
    // A fold that is not commutative shows the order itself.
    std::vector<std::string> order(static_cast<std::size_t>(P));
    for (Algorithm a : {Algorithm::binomial, Algorithm::recursive_doubling}) {
      run_local(P, [&](Comm& c) {
        order[static_cast<std::size_t>(c.rank())] =
            allreduce(c, Concat{std::to_string(c.rank()) + ","}, ops::reduce_class{}, {a}).s;
      });
      int m = 1;
      while (m < P) m *= 2;
      for (auto& s : order) CHECK(s == rank_order(P, 0, m));
    }
  }
}

TEST_CASE("Local: every op, integers equal to a serial loop, minloc and maxloc") {
  if (!single_process()) return;
  // (doctest's assertions are not thread-safe: ranks record, the test checks afterwards.)
  for (int P : {1, 3, 6, 17}) {
    long s = 0, p = 1, mn = 1000, mx = -1000, band = ~0L, bor = 0;
    bool land = true, lor = false;
    int firstMin = -1, firstMax = -1;
    for (int q = 0; q < P; ++q) {
      const long x = (q * 37) % 11 - 5;
      s += x;
      p *= x == 0 ? 1 : x;
      mn = std::min(mn, x);
      mx = std::max(mx, x);
      band &= x;
      bor |= x;
      land = land && x != 0;
      lor = lor || x != 0;
    }
    for (int q = 0; q < P; ++q) {
      const long x = (q * 37) % 11 - 5;
      if (x == mn && firstMin < 0) firstMin = q;
      if (x == mx && firstMax < 0) firstMax = q;
    }
    for (Algorithm a : {Algorithm::binomial, Algorithm::recursive_doubling, Algorithm::vendor}) {
      CAPTURE(P);
      CAPTURE(to_string(a));
      std::vector<std::vector<long>> got(static_cast<std::size_t>(P));
      run_local(P, [&](Comm& c) {
        const long v = (c.rank() * 37) % 11 - 5;
        auto& g = got[static_cast<std::size_t>(c.rank())];
        g.push_back(allreduce(c, v, ops::sum{}, {a}));
        g.push_back(allreduce(c, v == 0 ? 1L : v, ops::prod{}, {a}));
        g.push_back(allreduce(c, v, ops::min{}, {a}));
        g.push_back(allreduce(c, v, ops::max{}, {a}));
        g.push_back(allreduce(c, v, ops::band{}, {a}));
        g.push_back(allreduce(c, v, ops::bor{}, {a}));
        g.push_back(allreduce(c, static_cast<int>(v != 0), ops::land{}, {a}));
        g.push_back(allreduce(c, static_cast<int>(v != 0), ops::lor{}, {a}));
        if (a != Algorithm::vendor) {
          const auto lo = allreduce(c, ValueLoc<double>{double(v), c.rank()}, ops::minloc{}, {a});
          const auto hi = allreduce(c, ValueLoc<double>{double(v), c.rank()}, ops::maxloc{}, {a});
          g.insert(g.end(), {long(lo.value), lo.rank, long(hi.value), hi.rank});
        }
      });
      std::vector<long> want{s, p, mn, mx, band, bor, land, lor};
      if (a != Algorithm::vendor) want.insert(want.end(), {mn, firstMin, mx, firstMax});
      for (auto& g : got) CHECK(g == want);
    }
  }
}

TEST_CASE("Local: allgather and gather by every algorithm, sizes that differ per rank") {
  if (!single_process()) return;
  for (int P : kSizes) {
    for (Algorithm a : {Algorithm::ring, Algorithm::recursive_doubling, Algorithm::vendor}) {
      CAPTURE(P);
      CAPTURE(to_string(a));
      auto mine = [](int r) { return std::vector<int>(static_cast<std::size_t>(r % 4), r); };
      std::vector<std::vector<std::vector<int>>> all(static_cast<std::size_t>(P));
      std::vector<std::vector<Record>> gathered(static_cast<std::size_t>(P));
      std::vector<std::uint64_t> roundsAfterAllgather(static_cast<std::size_t>(P));
      run_local(P, [&](Comm& c) {
        const int r = c.rank();
        all[static_cast<std::size_t>(r)] = allgather(c, mine(r), {a});
        roundsAfterAllgather[static_cast<std::size_t>(r)] = c.stats().rounds;
        gathered[static_cast<std::size_t>(r)] =
            gather(c, Record{"r" + std::to_string(r), mine(r)}, P - 1, {Algorithm::binomial});
      });
      std::vector<std::vector<int>> want;
      std::vector<Record> wantRecords;
      for (int q = 0; q < P; ++q) {
        want.push_back(mine(q));
        wantRecords.push_back(Record{"r" + std::to_string(q), mine(q)});
      }
      for (int r = 0; r < P; ++r) {
        CHECK(all[static_cast<std::size_t>(r)] == want);
        if (r == P - 1)
          CHECK(gathered[static_cast<std::size_t>(r)] == wantRecords);
        else
          CHECK(gathered[static_cast<std::size_t>(r)].empty());
      }
      if (P > 1 && a != Algorithm::vendor) {
        const std::uint64_t rounds =
            *std::max_element(roundsAfterAllgather.begin(), roundsAfterAllgather.end());
        if (a == Algorithm::ring || (P & (P - 1)) == 0)
          CHECK(rounds == static_cast<std::uint64_t>(a == Algorithm::ring ? P - 1 : ceil_log2(P)));
        else
          CHECK(rounds <= static_cast<std::uint64_t>(2 * ceil_log2(P)));
      }
    }
  }
}

TEST_CASE("Local: Boost-serialized payloads and strings through broadcast") {
  if (!single_process()) return;
  for (int P : {1, 2, 5, 13}) {
    for (Algorithm a : {Algorithm::binomial, Algorithm::linear_pipeline, Algorithm::fibonacci,
                        Algorithm::scatter_allgather}) {
      CAPTURE(P);
      CAPTURE(to_string(a));
      std::vector<int> ok(static_cast<std::size_t>(P), 0);
      run_local(P, [&](Comm& c) {
        Record rec;
        std::string text;
        if (c.rank() == P / 2) {
          rec = Record{"from the middle", std::vector<int>(5000, 7)};
          text = std::string(3001, 'x');
        }
        broadcast(c, rec, P / 2, {a, 3});
        broadcast(c, text, P / 2, {a, 3});
        ok[static_cast<std::size_t>(c.rank())] =
            rec == Record{"from the middle", std::vector<int>(5000, 7)} &&
            text == std::string(3001, 'x');
      });
      CHECK(std::accumulate(ok.begin(), ok.end(), 0) == P);
    }
  }
}

TEST_CASE("Local: bad input fails on every rank with a clear error, and never hangs") {
  if (!single_process()) return;
  // A root out of range.
  CHECK_THROWS_AS(run_local(3,
                            [](Comm& c) {
                              int x = 0;
                              broadcast(c, x, 3);
                            }),
                  IndexError);
  // An algorithm that cannot run with this payload, or for this collective.
  try {
    run_local(3, [](Comm& c) {
      (void)allreduce(c, Concat{"x"}, ops::reduce_class{}, {Algorithm::reduce_scatter_allgather});
    });
    FAIL("expected an error");
  } catch (const ValueError& e) {
    CHECK(std::string(e.what()).find("elementwise") != std::string::npos);
    CHECK(std::string(e.what()).find("recursive_doubling") != std::string::npos);
  }
  CHECK_THROWS_AS(run_local(2,
                            [](Comm& c) {
                              int x = 0;
                              broadcast(c, x, 0, {Algorithm::ring});
                            }),
                  ValueError);
  CHECK_THROWS_AS(run_local(2,
                            [](Comm& c) {
                              (void)allreduce(c, Concat{"x"}, ops::reduce_class{},
                                              {Algorithm::vendor});
                            }),
                  ValueError);
  CHECK_THROWS_AS(parse_algorithm("fastest"), ValueError);
  // Sizes that must agree and do not: an error, not a hang.
  CHECK_THROWS_AS(run_local(4,
                            [](Comm& c) {
                              (void)allreduce(
                                  c,
                                  std::vector<double>(static_cast<std::size_t>(c.rank() + 1), 1.0),
                                  ops::sum{}, {Algorithm::recursive_doubling});
                            }),
                  CommError);
  // A rank that skips a collective: the others are told, not left waiting.
  CHECK_THROWS_AS(run_local(4,
                            [](Comm& c) {
                              int x = 1;
                              if (c.rank() != 2) broadcast(c, x, 0, {Algorithm::binomial});
                              (void)c.recv((c.rank() + 1) % 4, 99);
                            }),
                  CommError);
}
