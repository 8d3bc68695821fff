// Block rounds over the entries of an Element (shell/blocks.hpp): the Shell's blockReduce and
// allToAll with a class's declared block fields (TestBlock), and blocks::reduce with a lambda
// from code every node runs (an extension command). Values checked against sums and item counts
// computed here; ctest runs this at 1-4 nodes x 1-2 threads, so each split must give them.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/element.hpp"
#include "shell/blocks.hpp"
#include "shell/field.hpp"
#include "shell/simulation.hpp"
#include "tests/support/model.hpp"
#include "tests/support/test_classes.hpp"

using namespace antler;
using antler::test::Model;

namespace {

std::vector<double> values(std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = 0.25 * static_cast<double>(i * i % 11) - 1;  // exact
  return v;
}

// Each node runs blocks::reduce with a lambda: an all-reduce of value + 1 over /b's entries.
void lambda_handler(Simulation& sim, Reader& r, Writer&) {
  const Element* e = sim.elements().get(r.get<Id>());
  const int n = static_cast<int>(e->numData());
  blocks::reduce<test::Block>(*e, comm::Partners::allReduce(comm::BlockGrid::line(n), 3),
                              [](test::Block& b, comm::ReduceProxy& rp, const comm::Partners& p) {
                                const bool down =
                                    rp.round() > static_cast<int>(p.factored().size());
                                if (rp.round() == 0) b.result_ = b.value_ + 1;
                                if (!rp.in_link().empty()) {
                                  double s = 0;
                                  for (int f : rp.in_link())
                                    s = down ? rp.dequeue<double>(f) : s + rp.dequeue<double>(f);
                                  b.result_ = s;
                                }
                                for (int t : rp.out_link()) rp.enqueue(t, b.result_);
                              });
}
// The same with a class the element does not hold.
void wrong_type_handler(Simulation& sim, Reader& r, Writer&) {
  const Element* e = sim.elements().get(r.get<Id>());
  blocks::reduce<test::Adder>(*e, comm::Partners::merge(comm::BlockGrid::line(1), 2),
                              [](test::Adder&, comm::ReduceProxy&, const comm::Partners&) {});
}
[[maybe_unused]] const bool reg =
    (Shell::registerCommand("test.blocksLambda", &lambda_handler),
     Shell::registerCommand("test.blocksWrongType", &wrong_type_handler), true);

}  // namespace

TEST_CASE("blockReduce: every pattern, grid and radix gives the sums on every split") {
  Model m;
  Shell& s = m.s;
  for (unsigned threads : {1u, 2u}) {
    s.setNumThreads(threads);
    for (std::size_t n : {1u, 2u, 5u, 7u, 12u, 24u}) {
      const ObjId b = s.create("TestBlocks", "/b", n);
      const std::vector<double> v = values(n);
      Field<double>::setVec(s, b.id, "value", v);
      double total = 0;
      for (double x : v) total += x;
      std::vector<std::vector<int>> grids{{}};
      if (n == 12) grids = {{}, {3, 4}, {2, 2, 3}, {12, 1}};
      if (n == 24) grids = {{}, {2, 3, 4}};
      for (const auto& div : grids)
        for (int k : {2, 3, 4, 8})
          for (bool contiguous : {true, false})
            for (comm::Pattern pat : {comm::Pattern::merge, comm::Pattern::swap,
                                      comm::Pattern::broadcast, comm::Pattern::allReduce}) {
              CAPTURE(n);
              CAPTURE(k);
              CAPTURE(contiguous);
              CAPTURE(comm::pattern_name(pat));
              CAPTURE(div.size());
              s.blockReduce("/b", "sum", {pat, k, contiguous, div, {}});
              const auto r = Field<double>::getVec(s, b.id, "result");
              REQUIRE(r.size() == n);
              if (pat == comm::Pattern::merge) CHECK(r[0] == total);
              if (pat == comm::Pattern::swap || pat == comm::Pattern::allReduce)
                for (double x : r) CHECK(x == total);
              if (pat == comm::Pattern::broadcast)
                for (double x : r) CHECK(x == v[0]);
            }
      // Explicit rounds: 12 = 3 x 2 x 2 in one dimension.
      if (n == 12) {
        s.blockReduce("/b", "sum",
                      {comm::Pattern::allReduce, 2, true, {}, {{0, 3}, {0, 2}, {0, 2}}});
        for (double x : Field<double>::getVec(s, b.id, "result")) CHECK(x == total);
      }
      s.destroy("/b");
    }
  }
}

TEST_CASE("blockReduce: each entry is called once per round it takes part in") {
  Model m;
  Shell& s = m.s;
  const int n = 12;
  const ObjId b = s.create("TestBlocks", "/b", n);
  s.blockReduce("/b", "sum", {comm::Pattern::merge, 2, true, {}, {}});
  // 12 = 2 x 2 x 3: rounds 0..3; entry g takes part while it was its group's root before.
  const comm::Partners p = comm::Partners::merge(comm::BlockGrid::line(n), 2);
  const auto calls = Field<unsigned>::getVec(s, b.id, "calls");
  for (int g = 0; g < n; ++g) {
    unsigned expect = 0;
    for (int r = 0; r <= 3; ++r) {
      bool root_before = true;
      for (int q = 0; q < r; ++q) root_before = root_before && p.group(q, g).front() == g;
      expect += root_before;
    }
    CHECK(calls[static_cast<std::size_t>(g)] == expect);
  }
}

TEST_CASE("allToAll: every item reaches the entry it names, whatever k") {
  Model m;
  Shell& s = m.s;
  for (int n : {1, 3, 8, 13}) {
    const ObjId b = s.create("TestBlocks", "/b", static_cast<Index>(n));
    std::vector<unsigned> received(static_cast<std::size_t>(n));
    std::vector<double> checksum(static_cast<std::size_t>(n));
    for (int g = 0; g < n; ++g)
      for (int i = 0; i < g % 5 + 1; ++i) {
        const int item = (g * 7 + 13 * i) % n;
        ++received[static_cast<std::size_t>(item)];
        checksum[static_cast<std::size_t>(item)] += g * 1000.0 + item;
      }
    for (int k : {2, 3, 4}) {
      CAPTURE(n);
      CAPTURE(k);
      s.allToAll("/b", "spread", k);
      CHECK(Field<unsigned>::getVec(s, b.id, "received") == received);
      CHECK(Field<double>::getVec(s, b.id, "checksum") == checksum);
    }
    s.destroy("/b");
  }
}

TEST_CASE("blocks::reduce with a lambda, from code every node runs") {
  Model m;
  Shell& s = m.s;
  const std::size_t n = 10;
  const ObjId b = s.create("TestBlocks", "/b", n);
  const auto v = values(n);
  Field<double>::setVec(s, b.id, "value", v);
  double total = 0;
  for (double x : v) total += x + 1;
  ByteBuffer args;
  Writer(args).put<Id>(b.id);
  s.dispatchExtension("test.blocksLambda", args);
  for (double x : Field<double>::getVec(s, b.id, "result")) CHECK(x == total);
  CHECK_THROWS_WITH_AS(s.dispatchExtension("test.blocksWrongType", args),
                       doctest::Contains("holds TestBlocks objects"), TypeError);
}

TEST_CASE("blockReduce and allToAll: bad input is a clear error on every node, never a hang") {
  Model m;
  Shell& s = m.s;
  s.create("TestBlocks", "/b", 12);
  s.create("TestBlocks", "/g", 4, true);
  s.create("TestAdder", "/a", 4);
  CHECK_THROWS_WITH_AS(s.blockReduce("/b", "nosuch"),
                       doctest::Contains("block fields: sum, spread"), FieldError);
  CHECK_THROWS_WITH_AS(s.blockReduce("/a", "sum"), doctest::Contains("block fields: none"),
                       FieldError);
  CHECK_THROWS_WITH_AS(s.blockReduce("/g", "sum"), doctest::Contains("is global"), ValueError);
  CHECK_THROWS_AS(s.blockReduce("/nosuch", "sum"), PathError);
  CHECK_THROWS_WITH_AS(s.blockReduce("/b", "sum", {comm::Pattern::merge, 2, true, {5}, {}}),
                       doctest::Contains("multiply to the entry count"), ValueError);
  CHECK_THROWS_WITH_AS(s.blockReduce("/b", "sum", {comm::Pattern::swap, 1, true, {}, {}}),
                       doctest::Contains("must be >= 2"), ValueError);
  CHECK_THROWS_AS(s.blockReduce("/b", "sum", {comm::Pattern::swap, 0, true, {}, {}}), ValueError);
  CHECK_THROWS_AS(s.blockReduce("/b", "sum", {comm::Pattern::merge, 2, true, {}, {{0, 5}}}),
                  ValueError);
  CHECK_THROWS_WITH_AS(s.allToAll("/b", "spread", 1), doctest::Contains("must be >= 2"),
                       ValueError);
  CHECK_THROWS_AS(s.allToAll("/b", "nosuch", 2), FieldError);
  // A callback that throws on one entry, on whichever node holds it: an error naming the entry.
  for (int bad : {0, 5, 11}) {
    Field<int>::set(s, ObjId(s.find("/b").id, static_cast<Index>(bad)), "fail", 1);
    const std::string want = "the callback of block " + std::to_string(bad);
    CHECK_THROWS_WITH_AS(s.blockReduce("/b", "sum", {comm::Pattern::swap, 2, true, {}, {}}),
                         doctest::Contains(want.c_str()), ValueError);
    Field<int>::set(s, ObjId(s.find("/b").id, static_cast<Index>(bad)), "fail", -1);
    // The nodes are in step afterwards: the next rounds run.
    s.blockReduce("/b", "sum", {comm::Pattern::allReduce, 2, true, {}, {}});
    for (double x : Field<double>::getVec(s, s.find("/b").id, "result")) CHECK(x == 0.0);
  }
}
