// comm::Reductions (Converse's CmiReduce family): every form against folds written here from the
// documented rule (the binomial tree over member positions, children nearest first), ids started
// in different orders on different ranks, hundreds in flight, lists and groups that leave ranks
// out while those ranks run other collectives, and each misuse on each rank. MPI at the ranks
// this binary runs on; comm::Local at P up to 256, with its exact message counts.
#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/comm/collectives.hpp"
#include "core/comm/detail/elementwise.hpp"
#include "core/comm/local.hpp"
#include "core/comm/reductions.hpp"
#include "core/error.hpp"

using namespace antler;
using namespace antler::comm;
using namespace std::chrono_literals;

namespace {

bool single_process() {
  return Comm::world().size() == 1;
}

struct Failures {
  std::vector<std::string> list;
  void expect(bool ok, const std::string& what) {
    if (!ok && list.size() < 20) list.push_back(what);
  }
};

// ---- the oracle: the documented tree, written independently of the implementation ----

/// The tree's result at member position p of n, for a merge that writes "x(children...)":
/// p's children are p + 1, p + 2, p + 4, ... below p's lowest set bit (any power of two at the
/// root) and below n.
std::string tree_text(const std::vector<int>& members, int p,
                      const std::function<std::string(int)>& leaf) {
  const int n = static_cast<int>(members.size());
  std::string s = leaf(members[static_cast<std::size_t>(p)]);
  std::vector<std::string> kids;
  for (int d = 1; p + d < n && (p == 0 || d < (p & -p)); d *= 2)
    kids.push_back(tree_text(members, p + d, leaf));
  if (kids.empty()) return s;
  s += "(";
  for (std::size_t i = 0; i < kids.size(); ++i) s += (i ? "," : "") + kids[i];
  return s + ")";
}

/// The canonical fold over member order for a left-folding merge: fold[a, a + 2m) =
/// fold[a, a + m) + fold[a + m, a + 2m) (core/comm/algorithms.hpp), recursively.
double canonical_sum(const std::vector<double>& v, std::size_t a, std::size_t len) {
  if (len == 1) return v[a];
  std::size_t m = 1;
  while (m * 2 < len) m *= 2;
  return canonical_sum(v, a, m) + canonical_sum(v, a + m, len - m);
}

/// A value per rank whose sum depends on the order (cancelling magnitudes).
double value_of(int rank, int salt) {
  return std::ldexp(1.0 + 0.37 * rank + salt, (rank * 7 + salt) % 50 - 25) *
         ((rank + salt) % 2 ? -1 : 1);
}

ByteBuffer text_bytes(const std::string& s) {
  ByteBuffer b;
  b.append(s.data(), s.size());
  return b;
}
std::string text_of(Bytes b) {
  return std::string(b.data(), b.size());
}

/// The plain-form merge that shows the tree: mine(child,child,...).
ByteBuffer show_tree(ByteBuffer mine, std::span<const Bytes> kids) {
  std::string s = text_of({mine.data(), mine.size()}) + "(";
  for (std::size_t i = 0; i < kids.size(); ++i) s += (i ? "," : "") + text_of(kids[i]);
  return text_bytes(s + ")");
}
/// Left-folding sum of doubles.
ByteBuffer sum_doubles(ByteBuffer mine, std::span<const Bytes> kids) {
  double acc;
  std::memcpy(&acc, mine.data(), sizeof acc);
  for (Bytes k : kids) {
    double x;
    std::memcpy(&x, k.data(), sizeof x);
    acc += x;
  }
  std::memcpy(mine.data(), &acc, sizeof acc);
  return mine;
}
ByteBuffer double_bytes(double x) {
  ByteBuffer b;
  b.append(&x, sizeof x);
  return b;
}
/// Sums vectors of doubles element by element, children left to right.
ByteBuffer sum_vectors(ByteBuffer mine, std::span<const Bytes> kids) {
  for (Bytes k : kids)
    for (std::size_t i = 0; i < mine.size() / sizeof(double); ++i) {
      double a, x;
      std::memcpy(&a, mine.data() + i * sizeof a, sizeof a);
      std::memcpy(&x, k.data() + i * sizeof x, sizeof x);
      a += x;
      std::memcpy(mine.data() + i * sizeof a, &a, sizeof a);
    }
  return mine;
}

double double_of(Bytes b) {
  double x;
  std::memcpy(&x, b.data(), sizeof x);
  return x;
}

/// A struct that needs Boost.Serialization (not trivially copyable).
struct Tally {
  std::vector<int> ranks;
  std::string path;
  template <class A>
  void serialize(A& ar, unsigned) {
    ar& ranks& path;
  }
};
Tally merge_tallies(Tally mine, std::vector<Tally>& kids) {
  mine.path += "(";
  for (std::size_t i = 0; i < kids.size(); ++i) {
    mine.ranks.insert(mine.ranks.end(), kids[i].ranks.begin(), kids[i].ranks.end());
    mine.path += (i ? "," : "") + kids[i].path;
  }
  mine.path += ")";
  return mine;
}
/// merge_tallies writes the tree as show_tree does (a member without children never merges).
std::string tally_text(const std::vector<int>& members, int p) {
  return tree_text(members, p, [](int r) { return "r" + std::to_string(r); });
}

/// Whether f() throws an E (doctest's CHECK_THROWS_AS is not for Local's rank threads).
template <class E, class F>
bool throws(F&& f) {
  try {
    f();
  } catch (const E&) {
    return true;
  } catch (...) {
    return false;
  }
  return false;
}

std::string leaf_name(int r) {
  return "r" + std::to_string(r);
}

// ---- the body every rank runs ----

/// Every form over every rank and over lists, with and without ids and toAll.
void every_form(Comm& c, Failures& f) {
  const int P = c.size(), me = c.rank();
  Reductions red(c);
  std::vector<int> all(static_cast<std::size_t>(P));
  std::iota(all.begin(), all.end(), 0);
  const std::string wantAll = tree_text(all, 0, leaf_name);

  // reduce, root only: the handler runs on rank 0 only, with the tree's text.
  int calls = 0;
  std::string got;
  auto r = red.reduce(text_bytes(leaf_name(me)), show_tree, [&](Bytes b) {
    ++calls;
    got = text_of(b);
  });
  r.wait();
  f.expect(calls == (me == 0 ? 1 : 0), "reduce: the handler ran " + std::to_string(calls) + "x");
  if (me == 0) f.expect(got == wantAll, "reduce: " + got + " != " + wantAll);
  f.expect(r.hasResult() == (me == 0), "reduce: hasResult");

  // toAll: every rank gets it.
  got.clear();
  auto a = red.reduce(text_bytes(leaf_name(me)), show_tree, [&](Bytes b) { got = text_of(b); },
                      {.toAll = true});
  a.wait();
  f.expect(got == wantAll && text_of(a.result()) == wantAll,
           "reduce toAll on rank " + std::to_string(me) + ": " + got);

  // Sums of cancelling doubles: the canonical fold, bit for bit, on every rank.
  for (int salt = 0; salt < 3; ++salt) {
    std::vector<double> v(static_cast<std::size_t>(P));
    for (int q = 0; q < P; ++q) v[static_cast<std::size_t>(q)] = value_of(q, salt);
    const double want = canonical_sum(v, 0, v.size());
    auto s = red.reduce(double_bytes(value_of(me, salt)), sum_doubles, {}, {.toAll = true});
    s.wait();
    const double x = double_of(s.result());
    f.expect(std::memcmp(&x, &want, sizeof x) == 0, "sum toAll salt " + std::to_string(salt));
  }

  // Payloads past the inline size travel as a header and a second message: 3000 doubles each
  // (vector sums, element by element), root only then toAll; the root's result moved out.
  for (bool toAllLarge : {false, true}) {
    const std::size_t n = 3000;
    std::vector<double> mineV(n);
    for (std::size_t i = 0; i < n; ++i)
      mineV[i] = value_of(me, static_cast<int>(i % 7)) * (1.0 + i);
    ByteBuffer b;
    b.append(mineV.data(), n * sizeof(double));
    auto big = red.reduce(std::move(b),
                          [](ByteBuffer m, std::span<const Bytes> k) {
                            auto* a = reinterpret_cast<double*>(m.data());
                            for (Bytes x : k)
                              for (std::size_t i = 0; i < m.size() / sizeof(double); ++i)
                                a[i] += reinterpret_cast<const double*>(x.data())[i];
                            return m;
                          },
                          {}, {.toAll = toAllLarge});
    big.wait();
    if (!big.hasResult()) {
      f.expect(!toAllLarge && me != 0, "a large result missing");
      continue;
    }
    const ByteBuffer res = big.takeResult();
    f.expect(!big.hasResult() && res.size() == n * sizeof(double), "takeResult");
    bool same = true;
    for (std::size_t i = 0; i < n && same; ++i) {
      std::vector<double> v(static_cast<std::size_t>(P));
      for (int q = 0; q < P; ++q)
        v[static_cast<std::size_t>(q)] = value_of(q, static_cast<int>(i % 7)) * (1.0 + i);
      const double want = canonical_sum(v, 0, v.size());
      double got;
      std::memcpy(&got, res.data() + i * sizeof(double), sizeof got);
      same = std::memcmp(&got, &want, sizeof got) == 0;
    }
    f.expect(same, std::string("a large sum, ") + (toAllLarge ? "toAll" : "root only"));
  }

  // The struct form, Boost-serialized values.
  Tally mine{{me}, leaf_name(me)};
  auto t = red.reduceStruct<Tally>(mine, merge_tallies, {}, {.toAll = true});
  t.wait();
  std::vector<int> ranks = t.value().ranks;
  std::sort(ranks.begin(), ranks.end());
  f.expect(ranks == all, "reduceStruct: every rank once");
  f.expect(t.value().path == tally_text(all, 0), "reduceStruct: " + t.value().path);

  // A trivially copyable struct, root only, with an explicit id.
  struct MinMax {
    double lo, hi;
  };
  const ReductionId id = red.globalReductionId();
  auto mm = red.reduceStruct<MinMax>(MinMax{value_of(me, 1), value_of(me, 1)},
                                     [](MinMax m, std::vector<MinMax>& k) {
                                       for (auto& x : k)
                                         m = {std::min(m.lo, x.lo), std::max(m.hi, x.hi)};
                                       return m;
                                     },
                                     {}, {.id = id});
  mm.wait();
  if (me == 0) {
    double lo = 1e300, hi = -1e300;
    for (int q = 0; q < P; ++q)
      lo = std::min(lo, value_of(q, 1)), hi = std::max(hi, value_of(q, 1));
    f.expect(mm.value().lo == lo && mm.value().hi == hi, "reduceStruct MinMax");
  }
  f.expect(mm.id() == id, "the handle's id");

  // Lists: every second rank from the top (the root is the last rank), and a shuffled list.
  std::vector<int> odd;
  for (int q = P - 1; q >= 0; q -= 2) odd.push_back(q);
  std::vector<int> shuffled = all;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(42));
  for (const auto* list : {&odd, &shuffled}) {
    const bool member = std::find(list->begin(), list->end(), me) != list->end();
    // The ranks left out run a collective of their own meanwhile (members and the others each
    // split off a communicator; the split itself is the last thing every rank does together).
    Comm side = c.split(member ? 0 : 1, me);
    if (!member) {
      f.expect(throws<ValueError>([&] { red.listReduce(*list, text_bytes("x"), show_tree); }),
               "red.listReduce(*list, text_bytes(\"x\"), show_tree) throws ValueError");
      const int outside = allreduce(side, 1, ops::sum{});
      f.expect(outside == P - static_cast<int>(list->size()), "the others' own all-reduce");
      continue;
    }
    got.clear();
    auto l = red.listReduce(*list, text_bytes(leaf_name(me)), show_tree,
                            [&](Bytes b) { got = text_of(b); }, {.toAll = true});
    l.wait();
    f.expect(got == tree_text(*list, 0, leaf_name), "listReduce: " + got);
    const Group g = red.establishGroup(*list);
    std::string rootGot;
    auto gr = red.groupReduceStruct<Tally>(g, mine, merge_tallies,
                                           [&](const Tally& x) { rootGot = x.path; });
    gr.wait();
    if (me == list->front())
      f.expect(rootGot == tally_text(*list, 0), "groupReduceStruct at the root: " + rootGot);
    else
      f.expect(rootGot.empty() && !gr.hasResult(), "groupReduceStruct: a result off the root");
  }
  f.expect(red.inFlight() == 0, "nothing left in flight");
}

/// Hundreds in flight with ids, started in a different order on every rank, over the whole set
/// and over two overlapping lists; the ranks left out run other collectives meanwhile.
void many_in_flight(Comm& c, Failures& f, int n, bool batched = false) {
  const int P = c.size(), me = c.rank();
  Reductions red(c);
  // Batched: every start's messages wait (the batch is still open across the allreduce below);
  // the first wait sends them.
  std::optional<Reductions::Batch> batch;
  if (batched) batch.emplace(red.batch());
  std::vector<ReductionId> ids;
  for (int i = 0; i < n; ++i) ids.push_back(red.globalReductionId());
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(1000u + static_cast<unsigned>(me)));
  std::vector<int> low, high;  // the lower half (root 0) and the upper half, reversed
  for (int q = 0; q < P; ++q) (q < (P + 1) / 2 ? low : high).push_back(q);
  std::reverse(high.begin(), high.end());
  if (high.empty()) high = low;
  std::vector<double> results(static_cast<std::size_t>(n), std::nan(""));
  std::vector<Reduction> handles(static_cast<std::size_t>(n));
  for (int i : order) {
    const int kind = i % 3;  // 0: every rank, 1: low, 2: high
    const auto& list = kind == 1 ? low : high;
    const double mineV = value_of(me, i);
    auto store = [&results, i](Bytes b) { results[static_cast<std::size_t>(i)] = double_of(b); };
    const ReduceOptions o{.id = ids[static_cast<std::size_t>(i)], .toAll = (i % 2) == 0};
    if (kind == 0)
      handles[static_cast<std::size_t>(i)] = red.reduce(double_bytes(mineV), sum_doubles, store, o);
    else if (std::find(list.begin(), list.end(), me) != list.end())
      handles[static_cast<std::size_t>(i)] =
          red.listReduce(list, double_bytes(mineV), sum_doubles, store, o);
  }
  // The ranks outside `high` run collectives of their own communicator meanwhile.
  const double x = allreduce(c, 1.0, ops::sum{});  // every rank: apart from the reductions
  f.expect(x == P, "an allreduce in the middle");
  for (int i = 0; i < n; ++i) {
    const int kind = i % 3;
    if (kind != 0) {
      const auto& list = kind == 1 ? low : high;
      if (std::find(list.begin(), list.end(), me) == list.end()) continue;  // not a member
    }
    handles[static_cast<std::size_t>(i)].wait();
    const auto& list = kind == 0 ? std::vector<int>() : (kind == 1 ? low : high);
    std::vector<int> members = list;
    if (kind == 0) {
      members.resize(static_cast<std::size_t>(P));
      std::iota(members.begin(), members.end(), 0);
    }
    const bool toAll = (i % 2) == 0;
    if (!toAll && me != members.front()) {
      f.expect(std::isnan(results[static_cast<std::size_t>(i)]), "a result off the root");
      continue;
    }
    std::vector<double> v;
    for (int q : members) v.push_back(value_of(q, i));
    const double want = canonical_sum(v, 0, v.size());
    const double got = results[static_cast<std::size_t>(i)];
    f.expect(std::memcmp(&got, &want, sizeof got) == 0,
             "reduction " + std::to_string(i) + " on rank " + std::to_string(me));
  }
  f.expect(red.inFlight() == 0, "in flight after every wait: " + std::to_string(red.inFlight()));
}

/// One source's messages are taken in the order sent, a large contribution (its payload a message
/// of its own, still arriving) included: rank 1 contributes 20 kB with an id, waits until its send
/// is done, then reuses the id for a small one, which must not overtake the large one at rank 0.
void large_then_small_same_id(Comm& c, Failures& f) {
  const int me = c.rank();
  if (c.size() < 2) return;
  Reductions red(c);  // collective: every rank
  if (me > 1) return;
  const ReductionId id = ReductionId::user(11);
  const std::vector<int> pair{0, 1};
  std::string big(20000, ' ');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + (i + me) % 26);
  const std::string small = "s" + std::to_string(me);
  for (int round = 0; round < 5; ++round) {
    auto h1 = red.listReduce(pair, text_bytes(big), show_tree, {}, {.id = id});
    h1.wait();
    auto h2 = red.listReduce(pair, text_bytes(small), show_tree, {}, {.id = id});
    h2.wait();
    if (me != 0) continue;
    std::string other(20000, ' ');
    for (std::size_t i = 0; i < other.size(); ++i) other[i] = static_cast<char>('a' + (i + 1) % 26);
    f.expect(text_of(h1.result()) == big + "(" + other + ")",
             "the large contribution first (round " + std::to_string(round) + ")");
    f.expect(text_of(h2.result()) == "s0(s1)",
             "then the small one: " + text_of(h2.result()).substr(0, 40));
  }
}

/// A batch's messages to one rank keep their order: rank 1 reuses one id for ten root-only
/// reductions with rank 0 inside a batch (each done once its message is made, so the id is free
/// again), and rank 0 takes them one at a time, in that order.
void batch_keeps_order(Comm& c, Failures& f) {
  const int me = c.rank();
  if (c.size() < 2) return;
  Reductions red(c);
  const ReductionId id = ReductionId::user(7);
  const std::vector<int> pair{0, 1};
  if (me == 1) {
    auto batch = red.batch();
    for (int j = 0; j < 10; ++j) {
      auto h = red.listReduce(pair, double_bytes(value_of(1, j)), sum_doubles, {}, {.id = id});
      f.expect(h.done(), "a non-root's root-only reduction is done once its message is made");
    }
    f.expect(red.comm().stats().messagesSent == 0, "nothing sent while the batch is open");
  } else if (me == 0) {
    for (int j = 0; j < 10; ++j) {
      auto h = red.listReduce(pair, double_bytes(value_of(0, j)), sum_doubles, {}, {.id = id});
      h.wait();
      const double want = value_of(0, j) + value_of(1, j), got = double_of(h.result());
      f.expect(std::memcmp(&got, &want, sizeof got) == 0,
               "batched reduction " + std::to_string(j) + " matched in order");
    }
  }
  if (me == 1)
    f.expect(red.comm().stats().messagesSent == 1,
             "ten messages in one: " + std::to_string(red.comm().stats().messagesSent));
}

/// A barrier on c (not on the Reductions' own communicator).
void barrier(Comm& c) {
  allreduce(c, 0, ops::sum{});
}

/// Any wait or progress call sends what a batch holds, even when it has nothing left to wait
/// for: rank 1's root-only contribution is done once made, and its progressUntil (already true)
/// must still send it before rank 1 blocks in another communicator's collective with the batch
/// open; rank 0 would otherwise wait past its deadline.
void batch_sends_on_any_wait(Comm& c, Failures& f) {
  const int me = c.rank();
  if (c.size() < 2) return;
  Reductions red(c);
  const std::vector<int> pair{0, 1};
  if (me == 1) {
    auto batch = red.batch();
    auto h = red.listReduce(pair, double_bytes(value_of(1, 5)), sum_doubles);
    red.progressUntil([&] { return red.inFlight() == 0; });
    barrier(c);  // the batch still open
  } else if (me == 0) {
    auto h = red.listReduce(pair, double_bytes(value_of(0, 5)), sum_doubles);
    try {
      h.wait(20s);
      const double want = value_of(0, 5) + value_of(1, 5), got = double_of(h.result());
      f.expect(std::memcmp(&got, &want, sizeof got) == 0, "the batched contribution's sum");
    } catch (const CommError& e) {
      f.expect(false, std::string("rank 1's batched contribution never came: ") + e.what());
    }
    barrier(c);
  } else {
    barrier(c);
  }
}

/// Each misuse, committed by rank k, for every k.
void misuse(Comm& c, Failures& f) {
  const int P = c.size(), me = c.rank();
  Reductions red(c);
  for (int k = 0; k < P; ++k) {
    CAPTURE(k);
    // The same id twice in flight on rank k (the first held in flight by a toAll whose other
    // members start after the misuse).
    const ReductionId id = red.globalReductionId();
    Reduction first;
    if (me == k) {
      first = red.reduce(double_bytes(1), sum_doubles, {}, {.id = id, .toAll = true});
      if (P > 1) {
        bool threw = false;
        try {
          red.reduce(double_bytes(1), sum_doubles, {}, {.id = id});
        } catch (const StateError& e) {
          threw = std::string(e.what()).find("already in flight") != std::string::npos;
        }
        f.expect(threw, "the same id twice in flight on rank " + std::to_string(k));
      }
    }
    barrier(c);
    if (me != k) first = red.reduce(double_bytes(1), sum_doubles, {}, {.id = id, .toAll = true});
    first.wait();
    f.expect(double_of(first.result()) == P, "the first reduction survives the misuse");

    // A non-member contributes to a list that leaves it out.
    std::vector<int> others;
    for (int q = 0; q < P; ++q)
      if (q != k) others.push_back(q);
    if (me == k) {
      bool threw = false;
      try {
        red.listReduce(others.empty() ? std::vector<int>{(k + 1) % std::max(P, 2)} : others,
                       double_bytes(1), sum_doubles);
      } catch (const Error& e) {
        threw = std::string(e.what()).find("not a member") != std::string::npos ||
                std::string(e.what()).find("out of range") != std::string::npos;
      }
      f.expect(threw, "a non-member's contribution on rank " + std::to_string(k));
    } else {
      auto l = red.listReduce(others, double_bytes(1), sum_doubles, {}, {.toAll = true});
      l.wait();
      f.expect(double_of(l.result()) == P - 1, "the members finish without rank k");
    }

    // A deadline that passes: rank k contributes only after the others gave up.
    if (P > 1) {
      const ReductionId late = red.globalReductionId();
      Reduction h;
      if (me != k) {
        h = red.reduce(double_bytes(value_of(me, k)), sum_doubles, {}, {.id = late, .toAll = true});
        std::string text;
        try {
          h.wait(50ms);
        } catch (const CommError& e) {
          text = e.what();
        }
        f.expect(!text.empty(), "a deadline passed without an error on rank " + std::to_string(me));
        if (me == 0) {  // the root names the subtree that holds k
          int d = 1;
          while (d * 2 <= k) d *= 2;
          const int last = std::min(2 * d, P) - 1;
          const std::string want =
              "from ranks " + std::to_string(d) + (last > d ? "-" + std::to_string(last) : "");
          f.expect(text.find(want) != std::string::npos, "the root's timeout text: " + text);
        }
      }
      barrier(c);
      if (me == k)
        h = red.reduce(double_bytes(value_of(me, k)), sum_doubles, {}, {.id = late, .toAll = true});
      h.wait();  // the reduction was left in flight: it finishes now
      std::vector<double> v;
      for (int q = 0; q < P; ++q) v.push_back(value_of(q, k));
      const double want = canonical_sum(v, 0, v.size()), got = double_of(h.result());
      f.expect(std::memcmp(&got, &want, sizeof got) == 0, "the late reduction's result");
    }

    // The struct and plain forms mixed: rank k contributes a struct, the others bytes.
    if (P > 1) {
      const ReductionId mixed = red.globalReductionId();
      Reduction h;
      if (me == k)
        h = red.reduceStruct<double>(1.0,
                                     [](double a, std::vector<double>& b) { return a + b.size(); },
                                     {}, {.id = mixed, .toAll = true});
      else
        h = red.reduce(double_bytes(1), sum_doubles, {}, {.id = mixed, .toAll = true});
      std::string text;
      try {
        h.wait();
      } catch (const CommError& e) {
        text = e.what();
      }
      f.expect(text.find("form") != std::string::npos,
               "mixed forms on rank " + std::to_string(me) + ": '" + text + "'");
    }
    f.expect(red.inFlight() == 0, "in flight after the misuse round");
    barrier(c);
  }
  f.expect(throws<ValueError>([&] { red.reduce(double_bytes(1), nullptr); }),
           "red.reduce(double_bytes(1), nullptr) throws ValueError");
  f.expect(
      throws<IndexError>([&] {
        red.listReduce(std::vector<int>{0, P}, double_bytes(1), sum_doubles);
      }),
      "red.listReduce(std::vector<int>{0, P}, double_bytes(1), sum_doubles) throws IndexError");
  f.expect(
      throws<ValueError>([&] {
        red.listReduce(std::vector<int>{0, 0}, double_bytes(1), sum_doubles);
      }),
      "red.listReduce(std::vector<int>{0, 0}, double_bytes(1), sum_doubles) throws ValueError");
  f.expect(throws<StateError>([&] { red.groupReduce(Group(), double_bytes(1), sum_doubles); }),
           "red.groupReduce(Group(), double_bytes(1), sum_doubles) throws StateError");
  f.expect(red.inFlight() == 0, "in flight after the bad calls");
  // dynamicReductionId off rank 0.
  if (me != 0)
    f.expect(throws<StateError>([&] { red.dynamicReductionId(); }),
             "red.dynamicReductionId() throws StateError");
  f.expect(throws<IndexError>([&] { red.requestReductionId(5, -1); }),
           "red.requestReductionId(5, -1) throws IndexError");
}

/// Ids handed out on request: rank P - 1 asks rank 0 for one, delivered to every rank with data;
/// then every rank reduces with it.
void ids_on_request(Comm& c, Failures& f) {
  const int P = c.size(), me = c.rank();
  Reductions red(c);
  std::optional<ReductionId> got;
  std::string data;
  const int h = red.onReductionId([&](ReductionId id, Bytes b) {
    got = id;
    data = text_of(b);
  });
  std::string largeGot;  // a second handler, registered before any request can reach it
  const int h2 = red.onReductionId([&](ReductionId, Bytes b) { largeGot = text_of(b); });
  if (me == P - 1) red.requestReductionId(h, -1, Bytes("hello", 5));
  red.progressUntil([&] { return got.has_value(); }, 30s);
  f.expect(data == "hello", "the request's data: " + data);
  // Data past the inline size goes as a payload of its own, intact.
  std::string large(20000, ' ');
  for (std::size_t i = 0; i < large.size(); ++i) large[i] = static_cast<char>('a' + i % 26);
  if (me == 0) red.requestReductionId(h2, -1, Bytes(large.data(), large.size()));
  red.progressUntil([&] { return !largeGot.empty(); }, 30s);
  f.expect(largeGot == large,
           "a request's 20 kB of data: " + std::to_string(largeGot.size()) + " bytes");
  struct Two {
    std::uint64_t lo, hi;
  };
  auto r = red.reduceStruct<Two>({got->value, got->value},
                                 [](Two m, std::vector<Two>& k) {
                                   for (auto& x : k)
                                     m = {std::min(m.lo, x.lo), std::max(m.hi, x.hi)};
                                   return m;
                                 },
                                 {}, {.id = *got, .toAll = true});
  r.wait();
  f.expect(r.value().lo == r.value().hi, "every rank got the same id");
  if (me == 0) {
    const ReductionId d = red.dynamicReductionId();
    f.expect(d.value != got->value, "a fresh dynamic id");
  }
  // An id delivered to rank 0 alone reaches its handler once (rank 0 serves its own request
  // without a message to itself).
  int calls = 0;
  const int h3 = red.onReductionId([&](ReductionId, Bytes) { ++calls; });
  barrier(c);  // registered everywhere before the request can reach rank 0
  if (me == P - 1) red.requestReductionId(h3, 0);
  if (me == 0) red.progressUntil([&] { return calls > 0; }, 30s);
  barrier(c);
  for (int i = 0; i < 100; ++i) red.progress();
  f.expect(calls == (me == 0 ? 1 : 0), "an id for rank 0 alone: " + std::to_string(calls) +
                                           " handler calls on rank " + std::to_string(me));
}

/// A finished reduction's state is reused by later ones only once no handle refers to it:
/// handles kept while many later reductions run (whose own handles are dropped at once, so their
/// states are reused) still give their own results; so do values past the inline size, whose
/// buffers are shared with the sends.
/// Reductions started inside another's handler, which may run inside that reduction's own start
/// (a start makes progress before it returns): the outer one counts as in flight until its
/// handler has returned, its id cannot be started again meanwhile, and the nested ones match.
void starts_inside_handlers(Comm& c, Failures& f) {
  const int P = c.size(), me = c.rank();
  Reductions red(c);
  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    const ReductionId id = red.globalReductionId();
    Reduction nested;
    std::size_t inFlightThen = 0;
    bool sameIdRefused = false;
    auto outer = red.reduce(double_bytes(me + 1), sum_doubles,
                            [&](Bytes) {
                              inFlightThen = red.inFlight();
                              try {
                                red.reduce(double_bytes(1), sum_doubles, {}, {.id = id});
                              } catch (const StateError& e) {
                                sameIdRefused = std::string(e.what()).find("already in flight") !=
                                                std::string::npos;
                              }
                              nested = red.reduce(double_bytes(2.0 * me), sum_doubles, {},
                                                  {.id = std::nullopt, .toAll = true});
                            },
                            {.id = id, .toAll = true});
    outer.wait();
    nested.wait();
    f.expect(double_of(outer.result()) == P * (P + 1) / 2.0, "the outer reduction's sum");
    f.expect(double_of(nested.result()) == P * (P - 1.0), "the nested reduction's sum");
    f.expect(inFlightThen >= 1,
             "the outer reduction in flight in its handler: " + std::to_string(inFlightThen));
    f.expect(sameIdRefused,
             "its id started again inside its handler on rank " + std::to_string(me));
    f.expect(red.inFlight() == 0, "in flight after both");
  }
}

void reused_states(Comm& c, Failures& f) {
  const int P = c.size(), me = c.rank();
  Reductions red(c);
  std::vector<int> all(static_cast<std::size_t>(P));
  std::iota(all.begin(), all.end(), 0);
  auto want = [&](int i) {
    std::vector<double> v;
    for (int q : all) v.push_back(value_of(q, i));
    return canonical_sum(v, 0, v.size());
  };
  std::vector<std::pair<int, Reduction>> kept;
  for (int i = 0; i < 90; ++i) {
    const bool toAll = i % 3 != 1;
    const std::size_t n = i % 5 == 0 ? 1500 : 1;  // 12 kB: past the inline size
    std::vector<double> v(n, value_of(me, i));
    ByteBuffer b;
    b.append(v.data(), n * sizeof(double));
    auto r = red.reduce(std::move(b), sum_vectors, {}, {.id = std::nullopt, .toAll = toAll});
    if (i % 4 == 0) kept.emplace_back(i, r);
    if (i % 7 == 0) r.wait();  // others finish in later calls
  }
  for (auto& [i, r] : kept) {
    r.wait();
    const bool toAll = i % 3 != 1;
    if (!r.hasResult()) {
      f.expect(!toAll && me != 0, "a kept handle lost its result: " + std::to_string(i));
      continue;
    }
    const Bytes got = r.result();
    const std::size_t n = i % 5 == 0 ? 1500 : 1;
    bool same = got.size() == n * sizeof(double);
    const double w = want(i);
    for (std::size_t k = 0; same && k < n; ++k)
      same = std::memcmp(got.data() + k * sizeof(double), &w, sizeof w) == 0;
    f.expect(same, "a kept handle's result, reduction " + std::to_string(i) + " on rank " +
                       std::to_string(me));
    if (i % 8 == 0) {  // moved out, then the handle has none
      const ByteBuffer taken = r.takeResult();
      f.expect(taken.size() == n * sizeof(double) && !r.hasResult(), "takeResult after reuse");
    }
  }
  // The dropped handles' reductions finish in any progress.
  red.progressUntil([&] { return red.inFlight() == 0; }, 30s);
  // A non-root member of a root-only reduction is done once its value has been sent, and then
  // Reductions::buffer hands that value's buffer back for the next contribution.
  for (std::size_t n : {std::size_t{1}, std::size_t{4000}}) {  // inline, and a payload of its own
    ByteBuffer b = red.buffer(n * sizeof(double));
    f.expect(b.empty() && b.capacity() >= n * sizeof(double), "Reductions::buffer's capacity");
    std::vector<double> v(n, value_of(me, 5));
    b.append(v.data(), n * sizeof(double));
    const char* mine = b.data();
    auto r = red.reduce(std::move(b), sum_vectors, {}, {.id = std::nullopt, .toAll = false});
    r.wait();
    if (me != 0)  // (nothing else in flight: no other reduction's buffers came in between)
      f.expect(red.buffer(n * sizeof(double)).data() == mine,
               "the sent value's buffer back from Reductions::buffer, " + std::to_string(n));
    else
      f.expect(r.hasResult() && r.result().size() == n * sizeof(double), "the root's result");
  }
}

/// Starts that finish their own reduction with nothing else in flight skip their poll, but not
/// for ever: an id delivered to a rank that only starts such reductions (a list of itself, never
/// a wait, test or progress call) reaches its handler within a few starts.
void quiet_starts_still_poll(Comm& c, Failures& f) {
  const int P = c.size(), me = c.rank();
  if (P < 2) return;
  Reductions red(c);
  bool got = false;
  const int h = red.onReductionId([&](ReductionId, Bytes) { got = true; });
  barrier(c);  // registered everywhere before the request is made
  if (me == 0) red.requestReductionId(h, P - 1);  // served here: the id goes to rank P - 1
  barrier(c);
  if (me == P - 1) {
    const int self[] = {me};
    int starts = 0;
    while (!got && starts < 100000) {
      auto r = red.listReduce(self, double_bytes(1.0), sum_doubles, {});
      f.expect(r.done(), "a list of one rank: done once started");
      ++starts;
    }
    f.expect(got, "the id reached rank P - 1 while it only started reductions of its own (" +
                      std::to_string(starts) + " starts)");
  }
  barrier(c);
}

/// Bytes that are not a reduction's message, on the reductions' own communicator: a CommError
/// naming the sender at the receiver, which then goes on working.
void stray_bytes(Comm& c, Failures& f) {
  const int P = c.size(), me = c.rank();
  if (P < 2) return;
  Reductions red(c);
  if (me == P - 1) red.comm().send(0, 1, Bytes("0123456789", 10));  // tag 1: the reductions'
  if (me == P - 1) red.comm().send(0, 7, Bytes("0123", 4));         // a tag no reduction uses
  if (me == 0) {
    bool threw = false;
    try {
      red.progressUntil([] { return false; }, 20s);
    } catch (const CommError& e) {
      const std::string w = e.what();
      threw = w.find("corrupted message of 10 bytes from rank " + std::to_string(P - 1)) !=
              std::string::npos;
    }
    f.expect(threw, "stray bytes: a CommError naming their size and sender");
    threw = false;
    try {
      red.progressUntil([] { return false; }, 20s);
    } catch (const CommError& e) {
      const std::string w = e.what();
      threw =
          w.find("4 bytes from rank " + std::to_string(P - 1) + " with tag 7") != std::string::npos;
    }
    f.expect(threw, "stray bytes with another tag: a CommError naming their size, sender, tag");
  }
  barrier(c);
  auto r = red.reduce(double_bytes(value_of(me, 3)), sum_doubles, {},
                      {.id = std::nullopt, .toAll = true});
  r.wait();
  std::vector<double> v;
  for (int q = 0; q < P; ++q) v.push_back(value_of(q, 3));
  const double want = canonical_sum(v, 0, v.size());
  const double got = double_of(r.result());
  f.expect(std::memcmp(&got, &want, sizeof got) == 0, "a reduction after the stray bytes");
}

/// The root of root-only reductions whose children's messages wait when it starts (the start
/// takes them from the posted receive, without a pass of progress): children a thousand
/// reductions ahead, each sum the tree's fold here; a merge and a handler that throw on the root,
/// rethrown by its wait; a child of the other form, an error at the root; shows the tree's order
/// too.
void root_takes_waiting_messages(Comm& c, Failures& f) {
  const int P = c.size(), me = c.rank();
  if (P < 2) return;
  Reductions red(c);
  auto fold = [&](int salt) {
    std::vector<double> v;
    for (int q = 0; q < P; ++q) v.push_back(value_of(q, salt));
    return canonical_sum(v, 0, v.size());
  };
  // The others start a thousand reductions before the root starts its first (on MPI, more than
  // the shared-memory queue holds: some of the leaves' sends do not complete at once).
  constexpr int kAhead = 1000;
  std::vector<Reduction> ahead;
  if (me != 0)
    for (int i = 0; i < kAhead; ++i)
      ahead.push_back(red.reduce(double_bytes(value_of(me, i)), sum_doubles));
  barrier(c);
  if (me == 0)
    for (int i = 0; i < kAhead; ++i) {
      double handled = 0;
      auto h = red.reduce(double_bytes(value_of(0, i)), sum_doubles,
                          [&](Bytes b) { handled = double_of(b); });
      h.wait();
      const double want = fold(i), got = double_of(h.result());
      f.expect(std::memcmp(&got, &want, sizeof got) == 0 && handled == got,
               "reduction " + std::to_string(i) + " with its children ahead");
    }
  for (Reduction& h : ahead) h.wait();

  // The tree's order, the children's messages waiting.
  if (me != 0) red.reduce(text_bytes(leaf_name(me)), show_tree).wait();
  barrier(c);
  if (me == 0) {
    auto h = red.reduce(text_bytes(leaf_name(0)), show_tree);
    h.wait();
    std::vector<int> all(static_cast<std::size_t>(P));
    std::iota(all.begin(), all.end(), 0);
    f.expect(text_of(h.result()) == tree_text(all, 0, leaf_name),
             "the tree's order: " + text_of(h.result()));
  }

  // A merge that throws on the root, then a handler that throws there.
  for (int which = 0; which < 2; ++which) {
    if (me != 0) red.reduce(double_bytes(1), sum_doubles).wait();
    barrier(c);
    if (me != 0) continue;
    auto h = which == 0 ? red.reduce(double_bytes(1),
                                     [](ByteBuffer, std::span<const Bytes>) -> ByteBuffer {
                                       throw std::runtime_error("the merge says no");
                                     })
                        : red.reduce(double_bytes(1), sum_doubles, [](Bytes) {
                            throw std::runtime_error("the handler says no");
                          });
    std::string text;
    try {
      h.wait();
    } catch (const std::runtime_error& e) {
      text = e.what();
    }
    f.expect(text == (which == 0 ? "the merge says no" : "the handler says no"),
             "the root's wait rethrows: '" + text + "'");
    f.expect(h.hasResult() == (which == 1), "a result only where the merge did not throw");
    if (which == 1) f.expect(double_of(h.result()) == P, "the sum before the handler threw");
  }

  // toAll one after another (over two ranks an exchange: each side sends its value straight
  // from its buffer and takes the other's from the posted receive): every member has the fold.
  for (int i = 0; i < 200; ++i) {
    double handled = 0;
    auto h =
        red.reduce(double_bytes(value_of(me, i)), sum_doubles,
                   [&](Bytes b) { handled = double_of(b); }, {.id = std::nullopt, .toAll = true});
    h.wait();
    const double want = fold(i), got = double_of(h.result());
    if (std::memcmp(&got, &want, sizeof got) != 0 || handled != got) {
      f.expect(false, "toAll reduction " + std::to_string(i) + " on rank " + std::to_string(me));
      break;
    }
  }
  // Over two ranks both members merge (the second makes the root's merge call): a merge that
  // throws is rethrown by both waits.
  if (P == 2) {
    auto h = red.reduce(double_bytes(1),
                        [](ByteBuffer, std::span<const Bytes>) -> ByteBuffer {
                          throw std::runtime_error("the merge says no");
                        },
                        {}, {.id = std::nullopt, .toAll = true});
    std::string text;
    try {
      h.wait();
    } catch (const std::runtime_error& e) {
      text = e.what();
    }
    f.expect(text == "the merge says no",
             "an exchange's throwing merge on rank " + std::to_string(me) + ": '" + text + "'");
  }

  // Rank P - 1 contributes the struct form: the root-only reduction fails at the root.
  barrier(c);
  Reduction mixed;
  if (me == P - 1)
    mixed = red.reduceStruct<double>(1.0, [](double a, std::vector<double>& b) {
      for (double x : b) a += x;
      return a;
    });
  else if (me != 0)
    mixed = red.reduce(double_bytes(1), sum_doubles);
  if (me != 0) {
    try {
      mixed.wait();
    } catch (const CommError&) {  // (a member whose subtree holds rank P - 1 fails too)
    }
  }
  barrier(c);
  if (me == 0) {
    std::string text;
    try {
      red.reduce(double_bytes(1), sum_doubles).wait();
    } catch (const CommError& e) {
      text = e.what();
    }
    f.expect(text.find("form") != std::string::npos, "a child of the other form: '" + text + "'");
  }
  f.expect(red.inFlight() == 0, "in flight after the waiting-children rounds");
  auto r = red.reduce(double_bytes(value_of(me, 9)), sum_doubles, {},
                      {.id = std::nullopt, .toAll = true});
  r.wait();
  const double want = fold(9), got = double_of(r.result());
  f.expect(std::memcmp(&got, &want, sizeof got) == 0, "a reduction after them");
}

// ---- elementwise merges ----

/// Element i of rank r's contribution (salt: which reduction): mixed signs and magnitudes for
/// the floating types (their sums depend on the order) with zeros of both signs (min and max
/// then depend on which operand is left); wide values for integers, some of them zero for even
/// salts, all odd for odd ones (so that products, land and band do not all end at zero).
template <class T>
T elem_value(int r, std::size_t i, int salt) {
  if constexpr (std::is_floating_point_v<T>) {
    if (i % 5 == 4) return (r + salt) % 2 ? T(-0.0) : T(0.0);
    return static_cast<T>(value_of(r, salt + static_cast<int>(i % 40)));
  } else {
    std::uint64_t h = (static_cast<std::uint64_t>(r) + 1) * 0x9e3779b97f4a7c15ull ^
                      (i + 1) * 0xbf58476d1ce4e5b9ull ^
                      static_cast<std::uint64_t>(salt) * 0x94d049bb133111ebull;
    h ^= h >> 31;
    if (salt % 2) return static_cast<T>((h >> 7) | 1);
    return h % 4 == 0 ? T{0} : static_cast<T>(h >> 7);
  }
}

/// The documented tree's result for element i at member position p, the children folded into
/// the member's own value left to right with op (written here, from the rule in the header).
template <class T, class Op>
T elem_tree_fold(const std::vector<int>& members, int p, std::size_t i, int salt, Op op) {
  T acc = elem_value<T>(members[static_cast<std::size_t>(p)], i, salt);
  const int n = static_cast<int>(members.size());
  for (int d = 1; p + d < n && (p == 0 || d < (p & -p)); d *= 2)
    acc = op(acc, elem_tree_fold<T>(members, p + d, i, salt, op));
  return acc;
}

template <class T>
ByteBuffer elem_bytes(int r, std::size_t count, int salt) {
  ByteBuffer b;
  for (std::size_t i = 0; i < count; ++i) {
    const T x = elem_value<T>(r, i, salt);
    b.append(&x, sizeof x);
  }
  return b;
}

/// One elementwise case: type T, comm::ops operator CommOp, oracle op Op, `count` elements, over
/// `members` (every rank, a list or a group), in flight with `others` until waited for.
struct ElemCase {
  std::string name;
  std::function<Reduction(Reductions&)> start;
  std::function<bool(Bytes)> check;  // the result against the fold, bit for bit
  std::shared_ptr<std::string> handled = std::make_shared<std::string>();  // what the handler got
  bool member = true;
  bool toAll = false;
  int root = 0;
};

template <class T, class CommOp, class Op>
ElemCase elem_case(const std::string& name, const std::vector<int>& members, const Group* g,
                   bool toAll, std::size_t count, int salt, int me, Op op) {
  ElemCase k;
  k.name = name + (toAll ? " toAll" : " root-only") + ", " + std::to_string(count) +
           " elements over " + std::to_string(members.size()) + " members" + (g ? " (group)" : "");
  k.member = std::find(members.begin(), members.end(), me) != members.end();
  k.toAll = toAll;
  k.root = members.front();
  const ReduceOptions o{.id = std::nullopt, .toAll = toAll};
  const ElementwiseOp e = elementwise<T>(CommOp{});
  k.start = [=, handled = k.handled](Reductions& red) {
    ByteBuffer b = elem_bytes<T>(me, count, salt);
    handled->clear();
    Handler h = [handled](Bytes r) { handled->assign(r.data(), r.size()); };
    if (g) return red.groupReduce(*g, std::move(b), e, h, o);
    if (static_cast<int>(members.size()) == red.size()) return red.reduce(std::move(b), e, h, o);
    return red.listReduce(members, std::move(b), e, h, o);
  };
  k.check = [=](Bytes got) {
    if (got.size() != count * sizeof(T)) return false;
    for (std::size_t i = 0; i < count; ++i) {
      const T want = elem_tree_fold<T>(members, 0, i, salt, op);
      if (std::memcmp(got.data() + i * sizeof(T), &want, sizeof want) != 0) return false;
    }
    return true;
  };
  return k;
}

/// Integer sums and products wrap (through unsigned 64-bit arithmetic: no signed overflow here).
template <class T>
T wrap_sum(T a, T b) {
  return static_cast<T>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
template <class T>
T wrap_prod(T a, T b) {
  return static_cast<T>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}

/// The elementwise kernel for type T, every operator, against comm::ops (and the wrapping sums
/// and products written here): extremes for integers; zeros of both signs, NaN and infinities
/// for the floating types (min and max then show which operand is on the left).
template <class T>
void kernel_cases(Failures& f, const char* type) {
  std::vector<T> a, b;
  if constexpr (std::is_floating_point_v<T>) {
    const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
    a = {T(1.5), T(-0.0), T(0.0), nan, T(2), -inf, T(3.25), T(1e-30), T(-7)};
    b = {T(-2.25), T(0.0), T(-0.0), T(1), nan, T(5), T(3.25), T(1e30), T(0)};
  } else {
    const T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    a = {T(0), T(1), hi, lo, hi, T(3), static_cast<T>(-1), T(5), T(12), lo};
    b = {T(7), T(0), T(1), static_cast<T>(-1), hi, T(3), lo, T(0), T(10), lo};
  }
  const std::size_t n = a.size();
  for (OpKind op : {OpKind::sum, OpKind::prod, OpKind::min, OpKind::max, OpKind::land, OpKind::lor,
                    OpKind::band, OpKind::bor}) {
    const std::string what = std::string(type) + " op " + std::to_string(static_cast<int>(op));
    const comm::detail::ElementwiseFn fn =
        comm::detail::elementwise_fn(comm::detail::prim_of<T>(), op);
    const bool valid = std::is_integral_v<T> || (op != OpKind::band && op != OpKind::bor);
    f.expect((fn != nullptr) == valid &&
                 comm::detail::elementwise_valid(comm::detail::prim_of<T>(), op) == valid,
             what + ": applies where it should");
    if (!fn) continue;
    std::vector<T> got = a;
    fn(reinterpret_cast<char*>(got.data()), reinterpret_cast<const char*>(b.data()), n);
    // The same onto the right operand (the merge of a lent contribution).
    const comm::detail::ElementwiseKernel k =
        comm::detail::elementwise_kernel(comm::detail::prim_of<T>(), op);
    f.expect(k.inPlace == fn && k.onto, what + ": both forms");
    std::vector<T> onto = b;
    if (k.onto)
      k.onto(reinterpret_cast<char*>(onto.data()), reinterpret_cast<const char*>(a.data()), n);
    for (std::size_t i = 0; i < n; ++i) {
      T want{};
      switch (op) {
        case OpKind::sum:
          if constexpr (std::is_integral_v<T>)
            want = wrap_sum(a[i], b[i]);
          else
            want = a[i] + b[i];
          break;
        case OpKind::prod:
          if constexpr (std::is_integral_v<T>)
            want = wrap_prod(a[i], b[i]);
          else
            want = a[i] * b[i];
          break;
        case OpKind::min:
          want = ops::min{}(a[i], b[i]);
          break;
        case OpKind::max:
          want = ops::max{}(a[i], b[i]);
          break;
        case OpKind::land:
          want = ops::land{}(a[i], b[i]);
          break;
        case OpKind::lor:
          want = ops::lor{}(a[i], b[i]);
          break;
        case OpKind::band:
          if constexpr (std::is_integral_v<T>) want = ops::band{}(a[i], b[i]);
          break;
        case OpKind::bor:
          if constexpr (std::is_integral_v<T>) want = ops::bor{}(a[i], b[i]);
          break;
        case OpKind::none:
          break;
      }
      f.expect(std::memcmp(&got[i], &want, sizeof want) == 0,
               what + ": element " + std::to_string(i));
      f.expect(std::memcmp(&onto[i], &want, sizeof want) == 0,
               what + ": element " + std::to_string(i) + " onto the right operand");
    }
  }
}

/// The member lists of the elementwise and lent cases: every rank, and the odd ranks from the
/// last down, then rank 0 (P > 2; else empty).
std::pair<std::vector<int>, std::vector<int>> every_and_odd(int P) {
  std::vector<int> all(static_cast<std::size_t>(P));
  std::iota(all.begin(), all.end(), 0);
  std::vector<int> list;
  for (int r = P - 1; r >= 1; --r)
    if (r % 2) list.push_back(r);
  if (P > 2) list.push_back(0);
  return {all, list};
}

/// comm::elementwise merges: each type and operator over every rank, a list and a group,
/// root-only and toAll, one at a time and all in flight at once, against the tree's fold
/// written here (bit for bit); the same sums through a MergeFn, the same bits; bad operators and
/// sizes at the start (ValueError, nothing started), and a contribution whose size differs from
/// its parent's (every member's wait names it).
void elementwise_merges(Comm& c, Failures& f) {
  Reductions red(c);
  const int me = c.rank(), P = c.size();
  const auto [all, list] = every_and_odd(P);
  const Group g = list.empty() ? Group() : red.establishGroup(list);

  std::vector<ElemCase> cases;
  int salt = 0;
  for (bool toAll : {false, true})
    for (int form = 0; form < 3; ++form) {
      if (form > 0 && list.empty()) continue;
      const std::vector<int>& m = form == 0 ? all : list;
      const Group* gp = form == 2 ? &g : nullptr;
      for (std::size_t count : {std::size_t{1}, std::size_t{3}, std::size_t{1500}}) {
        ++salt;
        cases.push_back(elem_case<double, ops::sum>("double sum", m, gp, toAll, count, salt, me,
                                                    [](double a, double b) { return a + b; }));
        cases.push_back(elem_case<float, ops::min>("float min", m, gp, toAll, count, salt, me,
                                                   [](float a, float b) { return b < a ? b : a; }));
        cases.push_back(elem_case<float, ops::prod>("float prod", m, gp, toAll, count, salt, me,
                                                    [](float a, float b) { return a * b; }));
        cases.push_back(elem_case<std::int32_t, ops::sum>("int32 sum", m, gp, toAll, count, salt,
                                                          me, wrap_sum<std::int32_t>));
        cases.push_back(elem_case<std::uint64_t, ops::prod>("uint64 prod", m, gp, toAll, count,
                                                            salt, me, wrap_prod<std::uint64_t>));
        cases.push_back(elem_case<std::int16_t, ops::prod>("int16 prod", m, gp, toAll, count, salt,
                                                           me, wrap_prod<std::int16_t>));
        cases.push_back(elem_case<std::int16_t, ops::max>(
            "int16 max", m, gp, toAll, count, salt, me,
            [](std::int16_t a, std::int16_t b) { return a < b ? b : a; }));
        cases.push_back(elem_case<std::uint8_t, ops::sum>("uint8 sum", m, gp, toAll, count, salt,
                                                          me, wrap_sum<std::uint8_t>));
        cases.push_back(elem_case<std::int8_t, ops::band>(
            "int8 band", m, gp, toAll, count, salt, me,
            [](std::int8_t a, std::int8_t b) { return static_cast<std::int8_t>(a & b); }));
        cases.push_back(elem_case<std::uint32_t, ops::bor>(
            "uint32 bor", m, gp, toAll, count, salt, me,
            [](std::uint32_t a, std::uint32_t b) { return a | b; }));
        cases.push_back(elem_case<std::int64_t, ops::land>(
            "int64 land", m, gp, toAll, count, salt, me,
            [](std::int64_t a, std::int64_t b) { return static_cast<std::int64_t>(a && b); }));
        cases.push_back(elem_case<std::uint16_t, ops::lor>(
            "uint16 lor", m, gp, toAll, count, salt, me,
            [](std::uint16_t a, std::uint16_t b) { return static_cast<std::uint16_t>(a || b); }));
      }
    }
  auto check = [&](const ElemCase& k, Reduction& h, const char* how) {
    try {
      h.wait();
    } catch (const std::exception& e) {
      f.expect(false,
               k.name + " (" + how + ") threw on rank " + std::to_string(me) + ": " + e.what());
      return;
    }
    const std::string where = k.name + " (" + how + ") on rank " + std::to_string(me);
    f.expect(h.hasResult() == (k.toAll || me == k.root), where + ": a result where expected");
    if (h.hasResult()) {
      f.expect(k.check(h.result()), where + ": the tree's fold");
      f.expect(*k.handled == std::string(h.result().data(), h.result().size()),
               where + ": the handler's bytes");
    }
  };
  // One at a time (the root usually finds its children's messages waiting), then all in flight.
  for (const ElemCase& k : cases) {
    if (!k.member) continue;
    Reduction h = k.start(red);
    check(k, h, "one at a time");
  }
  std::vector<Reduction> hs(cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i)
    if (cases[i].member) hs[i] = cases[i].start(red);
  for (std::size_t i = 0; i < cases.size(); ++i)
    if (cases[i].member) check(cases[i], hs[i], "all in flight");

  // One state after another taking either kind of merge, with and without a handler (a finished
  // state is reused by the next start): each result the fold's.
  for (int i = 0; i < 40; ++i) {
    const bool fn = i % 3 != 1;
    double handled = 0;
    Handler h;
    if (i % 2) h = [&](Bytes r) { handled = double_of(r); };
    const ReduceOptions o{.id = std::nullopt, .toAll = i % 4 == 3};
    ByteBuffer b = elem_bytes<double>(me, 1, 40 + i);
    Reduction r = fn ? red.reduce(std::move(b), sum_vectors, h, o)
                     : red.reduce(std::move(b), elementwise<double>(ops::sum{}), h, o);
    r.wait();
    if (!r.hasResult()) continue;
    const double want = elem_tree_fold<double>(all, 0, 0, 40 + i, std::plus<double>());
    const double got = double_of(r.result());
    f.expect(std::memcmp(&got, &want, sizeof got) == 0 && (!(i % 2) || handled == got),
             "either merge, one after another: reduction " + std::to_string(i) + " on rank " +
                 std::to_string(me));
  }

  // The same sums through a MergeFn that loops the same way: the same bits.
  for (bool toAll : {false, true}) {
    const ReduceOptions o{.id = std::nullopt, .toAll = toAll};
    auto a = red.reduce(elem_bytes<double>(me, 7, 99), elementwise<double>(ops::sum{}), {}, o);
    auto b = red.reduce(elem_bytes<double>(me, 7, 99), sum_vectors, {}, o);
    a.wait();
    b.wait();
    if (a.hasResult())
      f.expect(a.result().size() == b.result().size() &&
                   std::memcmp(a.result().data(), b.result().data(), a.result().size()) == 0,
               "elementwise sum against the MergeFn on rank " + std::to_string(me));
  }

  // Misuse at the start: an error naming it on the rank that made it, nothing started.
  auto start_error = [&](ByteBuffer b, ElementwiseOp op, const std::string& words) {
    std::string text;
    try {
      red.reduce(std::move(b), op).wait();
    } catch (const ValueError& e) {
      text = e.what();
    } catch (const std::exception& e) {
      text = std::string("(not a ValueError) ") + e.what();
    }
    f.expect(text.find(words) != std::string::npos, "elementwise misuse on rank " +
                                                        std::to_string(me) + ": '" + text +
                                                        "', wanted '" + words + "'");
  };
  ByteBuffer twelve;
  twelve.resize(12);
  start_error(std::move(twelve), elementwise<double>(ops::sum{}), "12 bytes is not a whole number");
  start_error(double_bytes(1), ElementwiseOp{Prim::f64, OpKind::band},
              "band or bor applies to integers only");
  start_error(double_bytes(1), ElementwiseOp{Prim::none, OpKind::sum}, "needs an arithmetic type");
  start_error(double_bytes(1), ElementwiseOp{Prim::f64, OpKind::none}, "needs an arithmetic type");
  start_error(double_bytes(1), ElementwiseOp{}, "an empty merge");
  f.expect(red.inFlight() == 0, "elementwise misuse left something in flight");

  // Rank P - 1 contributes two doubles where the others give one: its parent's merge fails, and
  // with toAll every member's wait says so.
  if (P > 1) {
    ByteBuffer b = double_bytes(1);
    if (me == P - 1) b.append(b.data(), 8);
    std::string text;
    try {
      red.reduce(std::move(b), elementwise<double>(ops::sum{}), {},
                 {.id = std::nullopt, .toAll = true})
          .wait();
    } catch (const std::exception& e) {
      text = e.what();
    }
    // (Over two ranks rank 1 makes the root's merge call itself, with the root's 8 bytes.)
    const std::string want = P == 2 && me == 1
                                 ? "the root's contribution of 8 bytes where this member's has 16"
                                 : "a contribution of 16 bytes where this member's has 8";
    f.expect(text.find(want) != std::string::npos,
             "sizes that differ, rank " + std::to_string(me) + ": '" + text + "'");
  }
  // And the next reduction is whole.
  auto r = red.reduce(elem_bytes<double>(me, 5, 7), elementwise<double>(ops::sum{}), {},
                      {.id = std::nullopt, .toAll = true});
  r.wait();
  bool same = true;
  for (std::size_t i = 0; i < 5; ++i) {
    const double want = elem_tree_fold<double>(all, 0, i, 7, std::plus<double>());
    same = same && std::memcmp(r.result().data() + i * 8, &want, 8) == 0;
  }
  f.expect(same, "an elementwise reduction after the errors, rank " + std::to_string(me));
}

// ---- lent contributions ----

/// A contribution in pages of its own, read-only while lent (a write to them by Reductions
/// would fault), scribbled over once its reduction is done on this rank (a send that had not
/// finished reading them would carry the scribble to its receiver, whose result would be wrong).
class LentPages {
 public:
  explicit LentPages(const ByteBuffer& b) : n_(b.size()) {
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    cap_ = std::max<std::size_t>(page, (n_ + page - 1) / page * page);
    void* p = mmap(nullptr, cap_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("LentPages: mmap failed");
    p_ = static_cast<char*>(p);
    if (n_) std::memcpy(p_, b.data(), n_);
    mprotect(p_, cap_, PROT_READ);
  }
  LentPages(const LentPages&) = delete;
  LentPages& operator=(const LentPages&) = delete;
  ~LentPages() { munmap(p_, cap_); }
  Lent lent() const { return Lent{Bytes(p_, n_)}; }
  bool same(const ByteBuffer& b) const {
    return b.size() == n_ && (n_ == 0 || std::memcmp(p_, b.data(), n_) == 0);
  }
  void scribble() {
    mprotect(p_, cap_, PROT_READ | PROT_WRITE);
    std::memset(p_, 0xa5, cap_);
  }

 private:
  char* p_ = nullptr;
  std::size_t n_ = 0, cap_ = 0;
};

/// Lent contributions (comm::lend): each form (every rank, a list, a group), root-only and
/// toAll, inline and split sizes, an elementwise merge and a MergeFn, some ranks lending and the
/// others giving a buffer: each result the tree's fold, bit for bit; the lent pages never
/// written (read-only: a write faults) and free once this rank is done (scribbled at once, before
/// anyone checks); one at a time and all in flight; results taken or left on reused states; a
/// one-member reduction; misuse at the start.
void lent_contributions(Comm& c, Failures& f) {
  Reductions red(c);
  const int me = c.rank(), P = c.size();
  const auto [all, list] = every_and_odd(P);
  const Group g = list.empty() ? Group() : red.establishGroup(list);

  struct Case {
    std::string name;
    std::vector<int> members;
    const Group* group = nullptr;
    bool toAll = false, fn = false, lend = true, min = false;
    std::size_t count = 0;
    int salt = 0;
    std::unique_ptr<LentPages> pages;
    ByteBuffer mine;
    Reduction h;
  };
  std::vector<Case> cases;
  int salt = 100;
  for (bool toAll : {false, true})
    for (int form = 0; form < 3; ++form) {
      if (form > 0 && list.empty()) continue;
      // 1 and 1024 doubles go inline (copied at the start), 1025 and 20000 as split payloads.
      for (std::size_t count :
           {std::size_t{1}, std::size_t{1024}, std::size_t{1025}, std::size_t{20000}})
        for (int kind = 0; kind < 4; ++kind) {
          Case k;
          k.members = form == 0 ? all : list;
          k.group = form == 2 ? &g : nullptr;
          k.toAll = toAll;
          k.fn = kind == 1;
          k.lend = kind != 2 || me % 2 == 0;  // kind 2: the odd ranks give a buffer
          k.min = kind == 3;  // zeros of both signs: the result shows which operand was left
          k.count = count;
          k.salt = ++salt;
          k.name = std::string(k.fn    ? "MergeFn"
                               : k.min ? "elementwise min"
                                       : "elementwise") +
                   (kind == 2 ? " mixed" : "") + (toAll ? " toAll" : " root-only") + ", " +
                   std::to_string(count) + " doubles over " + std::to_string(k.members.size()) +
                   " members" +
                   (k.group     ? " (group)"
                    : form == 1 ? " (list)"
                                : "");
          cases.push_back(std::move(k));
        }
    }
  const ElementwiseOp sum = elementwise<double>(ops::sum{});
  auto start = [&](Case& k, std::optional<ReductionId> id = std::nullopt) {
    k.mine = elem_bytes<double>(me, k.count, k.salt);
    const ElementwiseOp op = k.min ? elementwise<double>(ops::min{}) : sum;
    const ReduceOptions o{.id = id, .toAll = k.toAll};
    const bool every = !k.group && static_cast<int>(k.members.size()) == P;
    if (!k.lend) {
      ByteBuffer b = k.mine;
      if (k.group)
        return k.fn ? red.groupReduce(*k.group, std::move(b), sum_vectors, {}, o)
                    : red.groupReduce(*k.group, std::move(b), op, {}, o);
      if (every)
        return k.fn ? red.reduce(std::move(b), sum_vectors, {}, o)
                    : red.reduce(std::move(b), op, {}, o);
      return k.fn ? red.listReduce(k.members, std::move(b), sum_vectors, {}, o)
                  : red.listReduce(k.members, std::move(b), op, {}, o);
    }
    k.pages = std::make_unique<LentPages>(k.mine);
    const Lent l = k.pages->lent();
    if (k.group)
      return k.fn ? red.groupReduce(*k.group, l, sum_vectors, {}, o)
                  : red.groupReduce(*k.group, l, op, {}, o);
    if (every) return k.fn ? red.reduce(l, sum_vectors, {}, o) : red.reduce(l, op, {}, o);
    return k.fn ? red.listReduce(k.members, l, sum_vectors, {}, o)
                : red.listReduce(k.members, l, op, {}, o);
  };
  auto finish = [&](Case& k, const char* how) {
    const std::string where = k.name + " (" + how + ") on rank " + std::to_string(me);
    try {
      k.h.wait();
    } catch (const std::exception& e) {
      f.expect(false, where + " threw: " + e.what());
      return;
    }
    if (k.pages) {
      f.expect(k.pages->same(k.mine), where + ": the lent bytes changed");
      k.pages->scribble();  // done: they are the caller's again
    }
    f.expect(k.h.hasResult() == (k.toAll || me == k.members.front()),
             where + ": a result where expected");
    if (!k.h.hasResult()) return;
    const Bytes got = k.h.result();
    bool ok = got.size() == k.count * sizeof(double);
    for (std::size_t i = 0; ok && i < k.count; ++i) {
      const double want =
          k.min ? elem_tree_fold<double>(k.members, 0, i, k.salt,
                                         [](double a, double b) { return b < a ? b : a; })
                : elem_tree_fold<double>(k.members, 0, i, k.salt, std::plus<double>());
      ok = std::memcmp(got.data() + i * sizeof want, &want, sizeof want) == 0;
    }
    f.expect(ok, where + ": the tree's fold");
  };
  auto member = [&](const Case& k) {
    return std::find(k.members.begin(), k.members.end(), me) != k.members.end();
  };
  for (Case& k : cases) {
    if (!member(k)) continue;
    k.h = start(k);
    finish(k, "one at a time");
  }
  for (Case& k : cases)
    if (member(k)) k.h = start(k);
  for (Case& k : cases)
    if (member(k)) finish(k, "all in flight");
  // With ids, started in the opposite order on odd ranks, inside a batch (the inline ones wait
  // in it; the split payloads go at once).
  std::vector<ReductionId> ids;
  for (std::size_t i = 0; i < cases.size(); ++i) ids.push_back(red.globalReductionId());
  {
    auto batch = red.batch();
    for (std::size_t j = 0; j < cases.size(); ++j) {
      const std::size_t i = me % 2 ? cases.size() - 1 - j : j;
      if (member(cases[i])) cases[i].h = start(cases[i], ids[i]);
    }
  }
  for (Case& k : cases)
    if (member(k)) finish(k, "with ids, in a batch");

  // Reused states, results taken or left: the merge's buffer comes from the pool or the last
  // result; each result the fold's.
  for (int i = 0; i < 12; ++i) {
    const std::size_t count = i % 3 == 2 ? 3 : 5000;
    const ByteBuffer mine = elem_bytes<double>(me, count, 300 + i);
    LentPages pages(mine);
    Reduction r = red.reduce(pages.lent(), sum, {}, {.id = std::nullopt, .toAll = i % 4 == 1});
    r.wait();
    pages.scribble();
    if (!r.hasResult()) continue;
    ByteBuffer taken;
    Bytes got = r.result();
    if (i % 2) {
      taken = r.takeResult();
      got = Bytes(taken.data(), taken.size());
    }
    bool ok = got.size() == count * sizeof(double);
    for (std::size_t k = 0; ok && k < count; ++k) {
      const double want = elem_tree_fold<double>(all, 0, k, 300 + i, std::plus<double>());
      ok = std::memcmp(got.data() + k * sizeof want, &want, sizeof want) == 0;
    }
    f.expect(ok, "lent, reused state " + std::to_string(i) + " on rank " + std::to_string(me));
  }

  // One member: the result is its contribution, a copy (the lent bytes are free once done).
  {
    const ByteBuffer mine = elem_bytes<double>(me, 3000, 77);
    LentPages pages(mine);
    const std::vector<int> alone{me};
    Reduction r = red.listReduce(alone, pages.lent(), sum);
    r.wait();
    pages.scribble();
    f.expect(r.hasResult() && r.result().size() == mine.size() &&
                 std::memcmp(r.result().data(), mine.data(), mine.size()) == 0,
             "lent, one member, rank " + std::to_string(me));
    const ByteBuffer taken = r.takeResult();
    f.expect(
        taken.size() == mine.size() && std::memcmp(taken.data(), mine.data(), mine.size()) == 0,
        "lent, one member, takeResult, rank " + std::to_string(me));
  }

  // Rank P - 1 lends twice as many elements as the others: its parent's merge fails, and with
  // toAll every member's wait says so (over two ranks rank 1 makes the root's merge call).
  if (P > 1) {
    const ByteBuffer mine = elem_bytes<double>(me, me == P - 1 ? 4000 : 2000, 9);
    LentPages pages(mine);
    std::string text;
    try {
      red.reduce(pages.lent(), sum, {}, {.id = std::nullopt, .toAll = true}).wait();
    } catch (const std::exception& e) {
      text = e.what();
    }
    pages.scribble();
    const std::string want = P == 2 && me == 1
                                 ? "the root's contribution of 16000 bytes where this member's has "
                                   "32000"
                                 : "a contribution of 32000 bytes where this member's has 16000";
    f.expect(text.find(want) != std::string::npos,
             "lent sizes that differ, rank " + std::to_string(me) + ": '" + text + "'");
  }

  // Misuse at the start, as with a buffer: an error naming it, nothing started.
  const std::vector<char> twelve(12);
  std::string text;
  try {
    red.reduce(lend(twelve), sum).wait();
  } catch (const ValueError& e) {
    text = e.what();
  } catch (const std::exception& e) {
    text = std::string("(not a ValueError) ") + e.what();
  }
  f.expect(text.find("12 bytes is not a whole number") != std::string::npos,
           "lent misuse on rank " + std::to_string(me) + ": '" + text + "'");
  f.expect(red.inFlight() == 0, "lent misuse left something in flight");

  // What lend() takes (its constraint, for the type lend(x) deduces): arrays that outlive the
  // call, never a temporary container.
  static_assert(Lendable<std::vector<double>&> && Lendable<const std::vector<double>&>);
  static_assert(Lendable<std::array<int, 3>&> && Lendable<std::span<const float>>);
  static_assert(!Lendable<std::vector<double>>);        // a temporary, or one moved from
  static_assert(!Lendable<std::vector<std::string>&>);  // not trivially copyable
  // lend() of a container and of a span: the same bytes.
  std::vector<std::uint32_t> v{1, 2, 3};
  const Lent a = lend(v), b = lend(std::span<const std::uint32_t>(v));
  f.expect(a.bytes.data() == reinterpret_cast<const char*>(v.data()) && a.bytes.size() == 12 &&
               b.bytes.data() == a.bytes.data() && b.bytes.size() == 12,
           "lend: a container's bytes");
}

/// A member that lent its contribution is not done while a send still reads it: rank 1 lends
/// 1 MiB to a root-only reduction over {0, 1} while rank 0 has not started it (rank 0 waits in a
/// collective of c first, where nothing receives the payload: a message that large waits for its
/// receive to be posted, Open MPI's rendezvous), so rank 1's test() stays false and its wait with
/// a deadline names the send; once rank 0 has started, rank 1's wait returns, the lent bytes are
/// scribbled over at once, and rank 0's result is still the fold of both.
void lent_send_gates_done(Comm& c, Failures& f) {
  if (c.size() < 2) return;
  const int me = c.rank();
  Reductions red(c);
  const std::vector<int> pair{0, 1};
  const std::size_t n = 131072;
  const ByteBuffer mine = elem_bytes<double>(me, n, 500);
  if (me == 1) {
    LentPages pages(mine);
    auto h = red.listReduce(pair, pages.lent(), elementwise<double>(ops::sum{}));
    bool early = false;
    for (int i = 0; i < 200 && !early; ++i) early = h.test();
    f.expect(!early, "a lent contribution's member was done before its receiver had started");
    std::string text;
    try {
      h.wait(20ms);
    } catch (const CommError& e) {
      text = e.what();
    }
    f.expect(text.find("still being sent to rank 0") != std::string::npos,
             "a lent send's deadline: '" + text + "'");
    barrier(c);  // rank 0 starts now
    h.wait();
    pages.scribble();
  } else if (me == 0) {
    barrier(c);
    auto h = red.listReduce(pair, ByteBuffer(mine), elementwise<double>(ops::sum{}));
    h.wait();
    bool ok = h.result().size() == n * sizeof(double);
    for (std::size_t i = 0; ok && i < n; ++i) {
      const double want = elem_tree_fold<double>(pair, 0, i, 500, std::plus<double>());
      ok = std::memcmp(h.result().data() + i * sizeof want, &want, sizeof want) == 0;
    }
    f.expect(ok, "the fold of a contribution lent while its root had not started");
  } else {
    barrier(c);
  }
}

void report(const std::vector<Failures>& fs) {
  for (auto& f : fs)
    for (auto& s : f.list) FAIL_CHECK(s);
}

}  // namespace

TEST_CASE("Reductions on MPI: every form against the tree folded here") {
  Comm c = Comm::world();
  Failures f;
  every_form(c, f);
  many_in_flight(c, f, 300);
  many_in_flight(c, f, 300, true);
  batch_keeps_order(c, f);
  batch_sends_on_any_wait(c, f);
  large_then_small_same_id(c, f);
  ids_on_request(c, f);
  reused_states(c, f);
  starts_inside_handlers(c, f);
  quiet_starts_still_poll(c, f);
  stray_bytes(c, f);
  root_takes_waiting_messages(c, f);
  elementwise_merges(c, f);
  lent_contributions(c, f);
  lent_send_gates_done(c, f);
  report({f});
}

TEST_CASE("Reductions: the elementwise kernel, every type and operator, against comm::ops") {
  Failures f;
  kernel_cases<std::int8_t>(f, "int8");
  kernel_cases<std::uint8_t>(f, "uint8");
  kernel_cases<std::int16_t>(f, "int16");
  kernel_cases<std::uint16_t>(f, "uint16");
  kernel_cases<std::int32_t>(f, "int32");
  kernel_cases<std::uint32_t>(f, "uint32");
  kernel_cases<std::int64_t>(f, "int64");
  kernel_cases<std::uint64_t>(f, "uint64");
  kernel_cases<float>(f, "float");
  kernel_cases<double>(f, "double");
  report({f});
}

TEST_CASE("Reductions on MPI: each misuse on each rank is an error, never a hang") {
  Comm c = Comm::world();
  Failures f;
  misuse(c, f);
  report({f});
}

TEST_CASE("Reductions on Local: P up to 256") {
  if (!single_process()) return;
  for (int P : {1, 2, 3, 5, 8, 17, 64, 256}) {
    CAPTURE(P);
    std::vector<Failures> f(static_cast<std::size_t>(P));
    run_local(P, [&](Comm& c) {
      Failures& mine = f[static_cast<std::size_t>(c.rank())];
      every_form(c, mine);
      many_in_flight(c, mine, P > 17 ? 30 : 200);
      many_in_flight(c, mine, P > 17 ? 30 : 200, true);
      batch_keeps_order(c, mine);
      batch_sends_on_any_wait(c, mine);
      large_then_small_same_id(c, mine);
      ids_on_request(c, mine);
      if (P <= 17) {
        misuse(c, mine);
        reused_states(c, mine);
        stray_bytes(c, mine);
        root_takes_waiting_messages(c, mine);
      }
      if (P <= 17) {
        elementwise_merges(c, mine);
        lent_contributions(c, mine);
      }
    });
    report(f);
  }
}

TEST_CASE("Reductions on Local: messages and rounds are the tree's, non-members see nothing") {
  if (!single_process()) return;
  for (int P : {1, 2, 3, 7, 16, 100, 256}) {
    CAPTURE(P);
    int logP = 0;
    while ((1 << logP) < P) ++logP;
    std::vector<Stats> rooted(static_cast<std::size_t>(P)), toAll(rooted), listed(rooted);
    std::vector<int> list;  // the even ranks, root 0
    for (int q = 0; q < P; q += 2) list.push_back(q);
    run_local(P, [&](Comm& c) {
      const auto me = static_cast<std::size_t>(c.rank());
      // A Reductions (its own communicator, its own counters and rounds) for each.
      Reductions a(c), b(c), l(c);
      a.reduce(double_bytes(1), sum_doubles).wait();
      b.reduce(double_bytes(1), sum_doubles, {}, {.toAll = true}).wait();
      if (me % 2 == 0) l.listReduce(list, double_bytes(1), sum_doubles).wait();
      barrier(c);  // every message has arrived
      rooted[me] = a.comm().stats();
      toAll[me] = b.comm().stats();
      listed[me] = l.comm().stats();
    });
    auto total = [](const std::vector<Stats>& s, auto field) {
      std::uint64_t t = 0, worst = 0;
      for (auto& x : s) t += x.*field, worst = std::max<std::uint64_t>(worst, x.rounds);
      return std::pair{t, worst};
    };
    const auto P1 = static_cast<std::uint64_t>(P - 1);
    CHECK(total(rooted, &Stats::messagesSent).first == P1);
    // Rounds: the binomial tree's, log2 P up and log2 P down for P a power of two (receives are
    // free in Local's model, so other P may take fewer); a toAll over two members is one
    // exchange (both messages in the first round).
    const bool pow2 = (P & (P - 1)) == 0;
    const auto up = total(rooted, &Stats::messagesSent).second;
    const auto both = total(toAll, &Stats::messagesSent).second;
    CHECK(up <= static_cast<std::uint64_t>(logP));
    CHECK(both <= static_cast<std::uint64_t>(2 * logP));
    if (pow2) CHECK(up == static_cast<std::uint64_t>(logP));
    if (pow2) CHECK(both == static_cast<std::uint64_t>(P == 2 ? 1 : 2 * logP));
    CHECK(total(toAll, &Stats::messagesSent).first == 2 * P1);
    // Each message of a call-order reduction over every rank is compact: its header goes in
    // its tag, its 8-byte payload alone on the wire (40 + 8 bytes with the header).
    CHECK(total(rooted, &Stats::bytesSent).first == P1 * 8);
    CHECK(total(toAll, &Stats::bytesSent).first == 2 * P1 * 8);
    CHECK(total(listed, &Stats::bytesSent).first == (list.size() - 1) * (40 + 8));
    CHECK(total(listed, &Stats::messagesSent).first == list.size() - 1);
    for (int q = 1; q < P; q += 2) {
      CHECK(listed[static_cast<std::size_t>(q)].messagesSent == 0);
      CHECK(listed[static_cast<std::size_t>(q)].messagesReceived == 0);
    }
  }
}

TEST_CASE("Reductions on Local: compact messages, and headers where the tags run short") {
  if (!single_process()) return;
  // P = 3: the root's children are ranks 1 and 2. A toAll, 1000 root-only reductions, two toAll:
  // each leaf sends 1003 compact contributions (8 bytes each: one call after the other, the id
  // one on from the last), and the root sends each toAll's result down to both. With MPI's
  // least tag space (32767: ids 512 apart at most in a tag) the second toAll's result, 1001 ids
  // after the last result the root sent, goes with its 40-byte header; with 2^31 - 1 compact.
  for (int maxTag : {32767, 2147483647}) {
    CAPTURE(maxTag);
    std::vector<Failures> f(3);
    LocalOptions o;
    o.maxTag = maxTag;
    std::vector<Stats> stats(3);
    run_local(
        3,
        [&](Comm& c) {
          const int me = c.rank();
          Reductions red(c);
          int salt = 0;
          auto one = [&](bool toAll) {
            auto r = red.reduce(double_bytes(value_of(me, salt)), sum_doubles, {},
                                {.id = std::nullopt, .toAll = toAll});
            r.wait();
            if (r.hasResult()) {
              std::vector<double> v;
              for (int q = 0; q < 3; ++q) v.push_back(value_of(q, salt));
              const double want = canonical_sum(v, 0, v.size()), got = double_of(r.result());
              f[static_cast<std::size_t>(me)].expect(std::memcmp(&got, &want, sizeof got) == 0,
                                                     "result " + std::to_string(salt));
            }
            ++salt;
          };
          one(true);
          for (int i = 0; i < 1000; ++i) one(false);
          one(true);
          one(true);
          stats[static_cast<std::size_t>(me)] = red.comm().stats();
        },
        o);
    report(f);
    CHECK(stats[1].bytesSent == 1003 * 8);
    CHECK(stats[2].bytesSent == 1003 * 8);
    CHECK(stats[0].bytesSent == (maxTag == 32767 ? 3 * 2 * 8 + 2 * 40 : 3 * 2 * 8));
  }
}

TEST_CASE("Reductions on Local: a batch sends each rank's messages together") {
  if (!single_process()) return;
  // P = 2, 1000 toAll reductions with ids in one batch: each rank sends its 1000 messages of
  // 48 bytes (a 40-byte header and a double) in ceil(1000 / 171) = 6 (171 fit in 8192 + 40 B).
  // P = 16, 100 of them: a leaf sends its 100 contributions in one message; nobody sends more
  // than without the batch; every result is the tree's.
  for (int P : {2, 16}) {
    CAPTURE(P);
    const int k = P == 2 ? 1000 : 100;
    std::vector<Stats> with(static_cast<std::size_t>(P)), without(with);
    std::vector<int> children(static_cast<std::size_t>(P));
    std::vector<Failures> f(static_cast<std::size_t>(P));
    for (bool batched : {true, false})
      run_local(P, [&](Comm& c) {
        const int me = c.rank();
        Reductions red(c);
        std::vector<ReductionId> ids;
        for (int i = 0; i < k; ++i) ids.push_back(red.globalReductionId());
        std::vector<Reduction> hs(static_cast<std::size_t>(k));
        {
          std::optional<Reductions::Batch> batch;
          if (batched) batch.emplace(red.batch());
          for (int j = 0; j < k; ++j) {
            const int i = me % 2 ? k - 1 - j : j;  // another order on odd ranks
            hs[static_cast<std::size_t>(i)] =
                red.reduce(double_bytes(value_of(me, i)), sum_doubles, {},
                           {.id = ids[static_cast<std::size_t>(i)], .toAll = true});
          }
        }
        for (int i = 0; i < k; ++i) {
          auto& h = hs[static_cast<std::size_t>(i)];
          h.wait();
          std::vector<double> v;
          for (int q = 0; q < P; ++q) v.push_back(value_of(q, i));
          const double want = canonical_sum(v, 0, v.size()), got = double_of(h.result());
          f[static_cast<std::size_t>(me)].expect(std::memcmp(&got, &want, sizeof got) == 0,
                                                 "result " + std::to_string(i));
        }
        barrier(c);
        (batched ? with : without)[static_cast<std::size_t>(me)] = red.comm().stats();
        int low = me == 0 ? P : (me & -me), kids = 0;
        for (int d = 1; d < low && me + d < P; d <<= 1) ++kids;
        children[static_cast<std::size_t>(me)] = kids;
      });
    report(f);
    for (int q = 0; q < P; ++q) {
      CAPTURE(q);
      const Stats& a = with[static_cast<std::size_t>(q)];
      const Stats& b = without[static_cast<std::size_t>(q)];
      CHECK(a.messagesSent <= b.messagesSent);
      if (P == 2) {
        CHECK(a.messagesSent == 6);
        CHECK(b.messagesSent == static_cast<std::uint64_t>(k));
        CHECK(a.bytesSent == static_cast<std::uint64_t>(k) * 48);
      } else if (children[static_cast<std::size_t>(q)] == 0) {
        CHECK(a.messagesSent == 1);  // its contributions, to its parent, in one message
        CHECK(b.messagesSent == static_cast<std::uint64_t>(k));
      }
    }
  }
}
