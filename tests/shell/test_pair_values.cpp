// Shell::pairFill with field values (PairValues): one value per pair, in pair order, reaching the
// entry each pair made in the destination field element, packed by a callback or handed as an
// array of the field's type. The expected layout is computed here from the rule (each parent's
// entries message by message, each message's by source, a repeated pair in the order given);
// through ctest at 1 to 4 nodes (on one node the pairs are not encoded; on more they travel).
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/error.hpp"
#include "msg/msg.hpp"
#include "shell/field.hpp"
#include "tests/support/model.hpp"

using namespace antler;
using antler::test::Model;

namespace {

Shell::PairValues packed_by_callback(const std::vector<double>& v) {
  return {"weight",
          &typeid(double),
          [&v](ByteBuffer& out) -> std::uint64_t {
            Writer w(out);
            for (double x : v) w.put<double>(x);
            return v.size();
          },
          {},
          0};
}

Shell::PairValues packed_in_place(const std::vector<double>& v) {
  return {"weight",
          &typeid(double),
          {},
          {reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double)},
          v.size()};
}

}  // namespace

TEST_CASE("pairFill's field values reach the entry each pair made, on every parent") {
  Model m;
  m.s.create("Neutral", "/net");
  const ObjId B = m.s.create("TestAdder", "/net/B", 6);
  const ObjId R = m.s.create("TestReceiver", "/net/R", 4);
  const ObjId syn = m.s.find("/net/R/syn");
  // Two messages onto the same synapses; the first's pairs out of source order, (5, 2) twice.
  const std::vector<Index> s1{5, 0, 3, 5, 1, 0, 5, 3}, d1{2, 1, 0, 2, 3, 1, 0, 3};
  const std::vector<double> w1{1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<Index> s2{0, 1, 1, 4, 5}, d2{3, 0, 3, 3, 0};
  const std::vector<double> w2{-1, -2, -3, -4, -5};
  const auto m1 = m.s.addMsg("Sparse", B, "out", syn, "hit");
  const auto m2 = m.s.addMsg("Sparse", B, "out", syn, "hit");
  m.s.pairFill(m1, s1, d1, {packed_by_callback(w1)});
  m.s.pairFill(m2, s2, d2, {packed_in_place(w2)});

  for (Index d = 0; d < 4; ++d) {
    std::vector<double> want;
    for (const auto& [s, t, w] : {std::tie(s1, d1, w1), std::tie(s2, d2, w2)}) {
      std::vector<std::size_t> ks;
      for (std::size_t k = 0; k < s.size(); ++k)
        if (t[k] == d) ks.push_back(k);
      std::stable_sort(ks.begin(), ks.end(),
                       [&](std::size_t a, std::size_t b) { return s[a] < s[b]; });
      for (std::size_t k : ks) want.push_back(w[k]);
    }
    CAPTURE(d);
    REQUIRE(Field<unsigned>::get(m.s, ObjId(R.id, d), "numSyn") == want.size());
    for (Index f = 0; f < want.size(); ++f)
      CHECK(Field<double>::get(m.s, ObjId(syn.id, d, f), "weight") == want[f]);
  }
}

TEST_CASE("pairFill's refused field values change nothing") {
  Model m;
  m.s.create("Neutral", "/net");
  const ObjId B = m.s.create("TestAdder", "/net/B", 3);
  const ObjId R = m.s.create("TestReceiver", "/net/R", 3);
  const ObjId syn = m.s.find("/net/R/syn");
  const auto id = m.s.addMsg("Sparse", B, "out", syn, "hit");
  const std::vector<Index> s{0, 1, 2}, d{2, 1, 0};
  const std::vector<double> two{1, 2}, three{1, 2, 3};
  auto unchanged = [&] {
    CHECK(static_cast<const SparseMsg*>(m.s.msg(id))->numEntries() == 0);
    for (Index p = 0; p < 3; ++p) CHECK(Field<unsigned>::get(m.s, ObjId(R.id, p), "numSyn") == 0);
  };
  CHECK_THROWS_WITH_AS(m.s.pairFill(id, s, d, {packed_in_place(two)}),
                       doctest::Contains("2 values of TestSyn.weight for 3 pairs"), ValueError);
  unchanged();
  Shell::PairValues wrongField = packed_in_place(three);
  wrongField.field = "wieght";
  CHECK_THROWS_WITH_AS(m.s.pairFill(id, s, d, {wrongField}), doctest::Contains("'wieght'"),
                       FieldError);
  unchanged();
  Shell::PairValues wrongType = packed_in_place(three);
  wrongType.type = &typeid(float);
  CHECK_THROWS_AS(m.s.pairFill(id, s, d, {wrongType}), TypeError);
  unchanged();
  CHECK_THROWS_WITH_AS(m.s.pairFill(id, s, d, {packed_in_place(three), packed_in_place(three)}),
                       doctest::Contains("given twice"), ValueError);
  unchanged();
  const std::vector<Index> bad{2, 1, 3};
  CHECK_THROWS_AS(m.s.pairFill(id, s, bad, {packed_in_place(three)}), IndexError);
  unchanged();
  m.s.pairFill(id, s, d, {packed_in_place(three)});
  for (Index p = 0; p < 3; ++p)
    CHECK(Field<double>::get(m.s, ObjId(syn.id, p, 0), "weight") == three[2 - p]);
}
