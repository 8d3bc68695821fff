// comm::BlockRounds: each pattern run over blocks spread across ranks and threads, every block's
// state after every run compared with a serial execution of the same rounds written here (one
// process, a queue per link, blocks in gid order); all_to_all's deliveries checked record by
// record; sums checked against their formulas; bad input on one block of one rank an error on
// every rank, never a hang. MPI at the ranks this binary runs on, 1 and 2 threads, 1 to 8 blocks
// per rank; comm::Local up to P = 256.
#include <doctest/doctest.h>

#include <algorithm>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>
#include <cstdint>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "core/comm/block_rounds.hpp"
#include "core/comm/collectives.hpp"
#include "core/comm/local.hpp"
#include "core/error.hpp"

using namespace antler;
using namespace antler::comm;

namespace {

using U = std::uint64_t;
using Msg = std::vector<U>;

// ---- one callback, run both ways ----

/// How many messages block g sends to `to` in `round`, and what each holds (some empty).
std::vector<Msg> messages_for(int round, int g, int to, U state) {
  std::vector<Msg> out;
  const int count = 1 + (g + 2 * to + round) % 3;
  for (int i = 0; i < count; ++i) {
    Msg m;
    for (int j = 0; j < (g * 3 + to + i) % 4; ++j)
      m.push_back(state * 31 + U(j) + U(to) * 7 + U(i));
    out.push_back(std::move(m));
  }
  return out;
}
U mix(U state, int round, int from, const Msg& m) {
  state = state * 1000003u ^ (U(round) << 40) ^ (U(from) << 20) ^ m.size();
  for (U x : m) state = state * 1099511628211u ^ x;
  return state;
}

/// The serial execution: every block in gid order each round, one FIFO per link.
std::vector<U> serial(const Partners& p) {
  const int n = p.nblocks();
  std::vector<U> state(static_cast<std::size_t>(n));
  for (int g = 0; g < n; ++g) state[static_cast<std::size_t>(g)] = U(g) + 1;
  std::map<std::pair<int, int>, std::vector<Msg>> q;
  for (int round = 0; round <= p.lastRound(); ++round) {
    std::map<std::pair<int, int>, std::vector<Msg>> next;
    for (int g = 0; g < n; ++g) {
      if (!p.active(round, g)) continue;
      U& s = state[static_cast<std::size_t>(g)];
      for (int from : p.in_link(round, g))
        for (const Msg& m : q[{from, g}]) s = mix(s, round, from, m);
      for (int to : p.out_link(round, g))
        for (Msg& m : messages_for(round, g, to, s)) next[{g, to}].push_back(std::move(m));
    }
    q = std::move(next);
  }
  return state;
}

/// The same rounds through BlockRounds; every rank returns all blocks' states (gathered).
std::vector<U> distributed(Comm& c, BlockRounds& br, const Partners& p, unsigned threads) {
  const int n = p.nblocks();
  const BlockOwners owners = BlockOwners::blocked(n, c.size());
  const int first = owners.first(c.rank());
  std::vector<U> mine(static_cast<std::size_t>(owners.end(c.rank()) - first));
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = U(first) + i + 1;
  br.reduce(
      owners, p,
      [&](int g, ReduceProxy& rp) {
        U& s = mine[static_cast<std::size_t>(g - first)];
        for (int from : rp.in_link())
          while (rp.incoming(from)) s = mix(s, rp.round(), from, rp.dequeue<Msg>(from));
        for (int to : rp.out_link())
          for (const Msg& m : messages_for(rp.round(), g, to, s)) rp.enqueue(to, m);
      },
      threads);
  std::vector<U> all;
  for (auto& part : allgather(c, mine)) all.insert(all.end(), part.begin(), part.end());
  return all;
}

struct Config {
  std::vector<int> div;
  int k;
  bool contiguous;
};

/// Every pattern of each config, against the serial run; returns the failures' descriptions.
std::vector<std::string> check_patterns(Comm& c, BlockRounds& br, const std::vector<Config>& cs,
                                        unsigned threads) {
  std::vector<std::string> bad;
  for (const Config& cf : cs)
    for (Pattern pat : {Pattern::merge, Pattern::swap, Pattern::broadcast, Pattern::allReduce}) {
      const Partners p(pat, BlockGrid(cf.div), cf.k, cf.contiguous);
      const std::vector<U> got = distributed(c, br, p, threads);
      if (c.rank() == 0 && got != serial(p))  // the serial run once, not on every rank
        bad.push_back(std::string(pattern_name(pat)) + " over " + std::to_string(p.nblocks()) +
                      " blocks, k " + std::to_string(cf.k) + (cf.contiguous ? "" : " halving"));
    }
  return bad;
}

/// Sums: merge leaves the total at gid 0, allReduce and broadcast at every block. Returns the
/// number of blocks that disagree.
int check_sums(Comm& c, BlockRounds& br, int n, int k) {
  int wrong = 0;
  const BlockOwners owners = BlockOwners::blocked(n, c.size());
  const int first = owners.first(c.rank()), count = owners.end(c.rank()) - first;
  const double total = double(n) * (n + 1) / 2;
  for (Pattern pat : {Pattern::merge, Pattern::allReduce, Pattern::broadcast}) {
    std::vector<double> v(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) v[static_cast<std::size_t>(i)] = first + i + 1;
    if (pat == Pattern::broadcast)
      for (int i = 0; i < count; ++i) v[static_cast<std::size_t>(i)] = first + i == 0 ? total : -1;
    const Partners p(pat, BlockGrid::line(n), k);
    br.reduce(owners, p, [&](int g, ReduceProxy& rp) {
      double& x = v[static_cast<std::size_t>(g - first)];
      const bool up =
          pat == Pattern::merge || (pat == Pattern::allReduce && rp.round() <= p.lastRound() / 2);
      if (up) {
        for (int from : rp.in_link())
          if (from != g)
            x += rp.dequeue<double>(from);
          else
            rp.dequeue<double>(from);
      } else {
        for (int from : rp.in_link()) x = rp.dequeue<double>(from);
      }
      for (int to : rp.out_link()) rp.enqueue(to, x);
    });
    for (int i = 0; i < count; ++i) {
      const int g = first + i;
      if (pat == Pattern::merge && g != 0) continue;
      if (v[static_cast<std::size_t>(i)] != total) ++wrong;
    }
  }
  return wrong;
}

/// all_to_all: block b sends block t (b + 2t) % 4 messages of records naming (b, t, i); every
/// block checks what it received from every block, in order.
std::size_t check_all_to_all(Comm& c, BlockRounds& br, int n, int k, unsigned threads) {
  const BlockOwners owners = BlockOwners::blocked(n, c.size());
  std::size_t bad = 0, got = 0;
  auto count = [](int b, int t) { return (b + 2 * t) % 4; };
  br.all_to_all(
      owners,
      [&](int g, ReduceProxy& rp) {
        if (rp.round() == 0) {
          if (!rp.in_link().empty() || static_cast<int>(rp.out_link().size()) != n)
            throw std::logic_error("all_to_all: the first call's links");
          for (int t = 0; t < n; ++t)
            for (int i = 0; i < count(g, t); ++i)
              rp.enqueue(t, std::vector<int>{g, t, i, g * 1000 + t});
          return;
        }
        if (!rp.out_link().empty() || static_cast<int>(rp.in_link().size()) != n)
          throw std::logic_error("all_to_all: the last call's links");
        for (int b = 0; b < n; ++b) {
          if (rp.incoming(b) != static_cast<std::size_t>(count(b, g))) {
#pragma omp atomic
            ++bad;
            continue;
          }
          for (int i = 0; i < count(b, g); ++i) {
            const auto r = rp.dequeue<std::vector<int>>(b);
            if (r != std::vector<int>{b, g, i, b * 1000 + g}) {
#pragma omp atomic
              ++bad;
            }
#pragma omp atomic
            ++got;
          }
        }
      },
      k, threads);
  const std::size_t total = allreduce(c, got, ops::sum{});
  std::size_t expect = 0;
  for (int b = 0; b < n; ++b)
    for (int t = 0; t < n; ++t) expect += static_cast<std::size_t>(count(b, t));
  return bad + (total == expect ? 0 : 1);
}

std::vector<Config> configs_for(int P) {
  std::vector<Config> cs;
  for (int per : {1, 2, 3, 8})
    for (int k : {2, 3, 4})
      for (bool contiguous : {true, false}) cs.push_back({{per * P}, k, contiguous});
  for (int n : {6, 7, 9, 12})
    for (int k : {2, 4}) cs.push_back({{n}, k, true});
  cs.push_back({{2, 3}, 2, true});
  cs.push_back({{3, 2, 2}, 2, false});
  cs.push_back({{4, 3}, 8, true});
  return cs;
}

}  // namespace

TEST_CASE("BlockRounds on MPI: every pattern equals the serial run, 1 and 2 threads") {
  Comm c = Comm::world();
  BlockRounds br(c);
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    const auto bad = check_patterns(c, br, configs_for(c.size()), threads);
    CHECK_MESSAGE(bad.empty(), (bad.empty() ? "" : bad.front())
                                   << " (" << bad.size() << " failed)");
  }
  for (int n : {1, 2, 5, 2 * c.size() + 1, 8 * c.size()})
    for (int k : {2, 3}) CHECK_MESSAGE(check_sums(c, br, n, k) == 0, n << " blocks, k " << k);
}

TEST_CASE("BlockRounds on MPI: all_to_all delivers every record once, in order") {
  Comm c = Comm::world();
  BlockRounds br(c);
  for (unsigned threads : {1u, 2u})
    for (int n : {1, 2, 3, c.size(), 4 * c.size(), 7, 12})
      for (int k : {2, 3, 4}) CHECK(check_all_to_all(c, br, n, k, threads) == 0);
}

TEST_CASE("BlockRounds on Local: P up to 256") {
  for (int P : {2, 3, 5, 8}) {
    std::vector<std::string> bad;
    std::vector<std::size_t> wrong(static_cast<std::size_t>(P));
    run_local(P, [&](Comm& c) {
      BlockRounds br(c);
      auto b = check_patterns(c, br, configs_for(P), 1);
      if (c.rank() == 0) bad = b;
      wrong[static_cast<std::size_t>(c.rank())] =
          check_all_to_all(c, br, 3 * P + 1, 2, 1) + check_all_to_all(c, br, 2 * P, 4, 1) +
          static_cast<std::size_t>(check_sums(c, br, 2 * P + 1, 3));
    });
    CHECK_MESSAGE(bad.empty(), "P " << P << ": " << (bad.empty() ? "" : bad.front()));
    CHECK(std::accumulate(wrong.begin(), wrong.end(), std::size_t{0}) == 0);
  }
  for (int P : {64, 256}) {
    std::vector<std::string> bad;
    std::vector<std::size_t> wrong(static_cast<std::size_t>(P));
    run_local(P, [&](Comm& c) {
      BlockRounds br(c);
      const std::vector<Config> cs{{{P}, 2, true}, {{2 * P + 3}, 4, false}, {{P / 4, 4}, 2, true}};
      auto b = check_patterns(c, br, cs, 1);
      if (c.rank() == 0) bad = b;
      wrong[static_cast<std::size_t>(c.rank())] =
          static_cast<std::size_t>(check_sums(c, br, P, 2)) + check_all_to_all(c, br, P, 2, 1);
    });
    CHECK_MESSAGE(bad.empty(), "P " << P << ": " << (bad.empty() ? "" : bad.front()));
    CHECK(std::accumulate(wrong.begin(), wrong.end(), std::size_t{0}) == 0);
  }
}

TEST_CASE("BlockRounds on Local: messages only between partners, none between blocks of a rank") {
  // A merge over one block per rank: each block but gid 0 sends once, to its group's root, on
  // another rank; everything else stays on its rank.
  const int P = 64;
  std::vector<BlockRounds::Counts> counts(P);
  auto stats = run_local(P, [&](Comm& c) {
    BlockRounds br(c);
    br.comm().resetStats();
    br.reduce(BlockOwners::blocked(P, P), Partners::merge(BlockGrid::line(P), 2),
              [](int g, ReduceProxy& rp) {
                for (int f : rp.in_link()) rp.dequeue<int>(f);
                for (int t : rp.out_link()) rp.enqueue(t, g);
              });
    counts[static_cast<std::size_t>(c.rank())] = br.lastCounts();
  });
  std::uint64_t linkMsgs = 0, localLinks = 0;
  for (auto& k : counts) {
    linkMsgs += k.rankMessages;
    localLinks += k.localLinks;
    CHECK(k.rounds == 7);  // log2(64) + 1
  }
  CHECK(linkMsgs == P - 1);
  CHECK(localLinks == P - 1);  // each group's root to itself: 32 + 16 + ... + 1 groups
  // Four blocks per rank: the first two rounds (groups of 2, then of 4, one apart) stay on each
  // rank; only 16 - 1 rank messages remain.
  std::vector<BlockRounds::Counts> c4(16);
  run_local(16, [&](Comm& c) {
    BlockRounds br(c);
    br.reduce(BlockOwners::blocked(64, 16), Partners::merge(BlockGrid::line(64), 2),
              [](int g, ReduceProxy& rp) {
                for (int f : rp.in_link()) rp.dequeue<int>(f);
                for (int t : rp.out_link()) rp.enqueue(t, g);
              });
    c4[static_cast<std::size_t>(c.rank())] = br.lastCounts();
  });
  std::uint64_t m4 = 0;
  for (auto& k : c4) m4 += k.rankMessages;
  CHECK(m4 == 15);
  (void)stats;
}

namespace {
/// Runs a merge over 2 blocks per rank in which `bad` does something wrong on block `at`;
/// returns what each rank caught (its type and text).
std::string misuse(Comm& c, const std::function<void(ReduceProxy&)>& bad, int at) {
  BlockRounds br(c);
  const int n = 2 * c.size();
  try {
    br.reduce(BlockOwners::blocked(n, c.size()), Partners::merge(BlockGrid::line(n), 2),
              [&](int g, ReduceProxy& rp) {
                if (g == at && rp.round() == 1) return bad(rp);
                for (int f : rp.in_link()) rp.dequeue<int>(f);
                for (int t : rp.out_link()) rp.enqueue(t, g);
              });
  } catch (const IndexError& e) {
    return std::string("IndexError: ") + e.what();
  } catch (const StateError& e) {
    return std::string("StateError: ") + e.what();
  } catch (const TypeError& e) {
    return std::string("TypeError: ") + e.what();
  } catch (const ValueError& e) {
    return std::string("ValueError: ") + e.what();
  } catch (const std::runtime_error& e) {
    return std::string("runtime_error: ") + e.what();
  }
  return "no error";
}
}  // namespace

TEST_CASE("BlockRounds: misuse in one block on one rank is an error on every rank") {
  // Returns the failed expectations (doctest's macros stay on the main thread).
  auto each_rank = [](Comm& c) {
    std::vector<std::string> f;
    auto expect = [&](bool ok, int at, const std::string& what, const std::string& e) {
      if (!ok)
        f.push_back("rank " + std::to_string(c.rank()) + ", block " + std::to_string(at) + ": " +
                    what + " (" + e + ")");
    };
    const int n = 2 * c.size();
    for (int at = 0; at < n; at += 2) {  // every rank's first block (active in round 1)
      const std::string blk = "block " + std::to_string(at);
      std::string e = misuse(
          c, [](ReduceProxy& rp) { rp.enqueue(rp.gid() + 1000, 1); }, at);
      expect(e.rfind("IndexError: ", 0) == 0 && e.find(blk) != std::string::npos &&
                 e.find("not in its out-link") != std::string::npos,
             at, "enqueue outside the out-link", e);
      e = misuse(
          c,
          [](ReduceProxy& rp) {
            for (int fr : rp.in_link()) rp.dequeue<int>(fr);
            rp.dequeue<int>(rp.in_link().front());
          },
          at);
      expect(e.rfind("StateError: ", 0) == 0 && e.find("which sent 1") != std::string::npos, at,
             "dequeue past the last message", e);
      e = misuse(
          c, [](ReduceProxy& rp) { rp.dequeue<double>(rp.in_link().front()); }, at);
      expect(e.rfind("TypeError: ", 0) == 0, at, "dequeue of another type", e);
      e = misuse(
          c, [](ReduceProxy& rp) { rp.dequeue<int>(rp.gid() == 0 ? 7 : 0); }, at);
      expect(e.rfind("IndexError: ", 0) == 0 && e.find("not in its in-link") != std::string::npos,
             at, "dequeue outside the in-link", e);
      e = misuse(
          c, [](ReduceProxy&) { throw std::runtime_error("the user's own failure"); }, at);
      // Every rank, the one that threw included, gets a ValueError naming the block and rank.
      expect(e.rfind("ValueError: ", 0) == 0 &&
                 e.find("the user's own failure") != std::string::npos &&
                 e.find(blk + " on rank " + std::to_string(at / 2)) != std::string::npos,
             at, "a callback's own exception", e);
      // The communicator is still usable afterwards: nothing was left in flight.
      expect(allreduce(c, 1, ops::sum{}) == c.size(), at, "a collective afterwards", "");
    }
    return f;
  };
  Comm world = Comm::world();
  auto f = each_rank(world);
  CHECK_MESSAGE(f.empty(), (f.empty() ? "" : f.front()));
  std::vector<std::string> lf;
  run_local(3, [&](Comm& c) {
    auto g = each_rank(c);
    if (c.rank() == 1) lf = g;
  });
  CHECK_MESSAGE(lf.empty(), (lf.empty() ? "" : lf.front()));
  // Bad arguments: refused before any message, on the rank that gives them.
  Comm w = Comm::world();
  BlockRounds br(w);
  CHECK_THROWS_AS(br.reduce(BlockOwners::blocked(5, w.size()), Partners::merge(BlockGrid::line(6)),
                            [](int, ReduceProxy&) {}),
                  ValueError);
  CHECK_THROWS_AS(br.reduce(BlockOwners::blocked(6, w.size() + 1),
                            Partners::merge(BlockGrid::line(6)), [](int, ReduceProxy&) {}),
                  ValueError);
  CHECK_THROWS_AS(br.all_to_all(
                      BlockOwners::blocked(6, w.size()), [](int, ReduceProxy&) {}, 1),
                  ValueError);
  CHECK_THROWS_AS(BlockOwners({0, 4, 2}), ValueError);
}

namespace {
/// An all-reduce of 3000 doubles per block (24 KB: links of their own messages between ranks),
/// summed through views, with a small message after each vector on the same link; then an
/// all_to_all of 16 KB messages. Returns the number of wrong values.
std::size_t large_messages(Comm& c, int n, int k, unsigned threads, bool lend) {
  BlockRounds br(c);
  const BlockOwners owners = BlockOwners::blocked(n, c.size());
  const int first = owners.first(c.rank()), count = owners.end(c.rank()) - first;
  const std::size_t len = 3000;
  std::vector<std::vector<double>> v(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i)
    for (std::size_t j = 0; j < len; ++j)
      v[static_cast<std::size_t>(i)].push_back((first + i) * 0.5 + double(j));
  const Partners p = Partners::allReduce(BlockGrid::line(n), k);
  const int R = static_cast<int>(p.factored().size());
  std::size_t bad = 0;
  br.reduce(
      owners, p,
      [&](int g, ReduceProxy& rp) {
        auto& x = v[static_cast<std::size_t>(g - first)];
        if (!rp.in_link().empty()) {
          std::vector<double> s(len, 0.0);
          for (int from : rp.in_link()) {
            const auto view = rp.dequeueView<double>(from);
            const int tag = rp.dequeue<int>(from);  // the small message after it, in order
            if (view.size() != len || tag != from * 10 + rp.round() - 1) {
#pragma omp atomic
              ++bad;
              continue;
            }
            if (rp.round() <= R)
              for (std::size_t j = 0; j < len; ++j) s[j] += view[j];
            else
              s.assign(view.begin(), view.end());
          }
          x = std::move(s);
        }
        for (int to : rp.out_link()) {
          rp.enqueue(to, std::span<const double>(x));
          rp.enqueue(to, g * 10 + rp.round());
        }
      },
      threads);
  for (int i = 0; i < count; ++i)
    for (std::size_t j = 0; j < len; ++j)
      if (v[static_cast<std::size_t>(i)][j] != 0.25 * n * (n - 1) + double(n) * double(j)) ++bad;
  br.all_to_all(
      owners,
      [&](int g, ReduceProxy& rp) {
        if (rp.round() == 0) {
          for (int t = 0; t < n; ++t) {
            std::vector<int> m(4000);
            for (std::size_t j = 0; j < m.size(); ++j) m[j] = g * 100000 + t * 10 + int(j % 7);
            rp.enqueue(t, m);
          }
          return;
        }
        for (int from = 0; from < n; ++from) {
          const auto m = rp.dequeue<std::vector<int>>(from);
          for (std::size_t j = 0; j < m.size(); ++j)
            if (m[j] != from * 100000 + g * 10 + int(j % 7)) {
#pragma omp atomic
              ++bad;
              break;
            }
        }
      },
      k, threads);
  return bad;
}
}  // namespace

TEST_CASE(
    "BlockRounds: large and lent messages travel in their own messages; views read them in place") {
  Comm w = Comm::world();
  for (bool lend : {false, true})
    for (unsigned threads : {1u, 2u})
      for (int n : {w.size(), 3 * w.size() + 1})
        for (int k : {2, 4})
          CHECK_MESSAGE(large_messages(w, n, k, threads, lend) == 0,
                        n << " blocks, k " << k << (lend ? ", lent" : ""));
  std::vector<std::size_t> bad(5);
  run_local(5, [&](Comm& c) {
    bad[static_cast<std::size_t>(c.rank())] =
        large_messages(c, 11, 2, 1, false) + large_messages(c, 11, 3, 1, true);
  });
  CHECK(std::accumulate(bad.begin(), bad.end(), std::size_t{0}) == 0);
}
