// Message kinds: index mappings, connect-time checks, sparse filling.
#include <doctest/doctest.h>

#include <set>

#include "core/element.hpp"
#include "msg/msg.hpp"
#include "shell/simulation.hpp"
#include "tests/support/model.hpp"

using namespace antler;
using antler::test::Model;

namespace {
// Each node's hash of a Sparse message's (source, destination data) pairs.
void matrix_hash(Simulation& sim, Reader& r, Writer& w) {
  auto* m = static_cast<const SparseMsg*>(sim.msgs().get(r.get<std::uint32_t>()));
  std::uint64_t h = 1469598103934665603ull;
  for (Index i = 0; i < m->numRows(); ++i) {
    auto [b, e] = m->row(i);
    for (const Index* t = b; t != e; ++t)
      h = (h ^ (std::uint64_t{i} << 32 | *t)) * 1099511628211ull;
  }
  w.put<std::uint64_t>(h);
}
[[maybe_unused]] const bool reg = (Shell::registerCommand("test.matrixHash", &matrix_hash), true);

std::vector<Index> datas(const std::vector<Target>& t) {
  std::vector<Index> out;
  for (auto& x : t) out.push_back(x.data);
  return out;
}
}  // namespace

TEST_CASE("each message kind maps source entries to the right targets") {
  Model m;
  const ObjId a = m.s.create("TestAdder", "/a", 6);
  const ObjId b = m.s.create("TestAdder", "/b", 6);
  const ObjId c = m.s.create("TestAdder", "/c", 4);
  const Msg* single = m.s.msg(m.s.addMsg("Single", ObjId(a.id, 2), "out", ObjId(c.id, 3), "add"));
  CHECK(single->targets(2, 0) == std::vector<Target>{{3, 0}});
  CHECK(single->targets(1, 0).empty());
  const Msg* one = m.s.msg(m.s.addMsg("OneToOne", a, "out", b, "add"));
  for (Index i = 0; i < 6; ++i) CHECK(datas(one->targets(i, 0)) == std::vector<Index>{i});
  const Msg* all = m.s.msg(m.s.addMsg("OneToAll", a, "out", c, "add"));
  CHECK(datas(all->targets(5, 0)) == std::vector<Index>{0, 1, 2, 3});
  const auto did = m.s.addMsg("Diagonal", a, "out", c, "add");
  m.s.setStride(did, -2);
  const Msg* diag = m.s.msg(did);
  CHECK(diag->targets(0, 0).empty());
  CHECK(datas(diag->targets(2, 0)) == std::vector<Index>{0});
  CHECK(datas(diag->targets(5, 0)) == std::vector<Index>{3});
  m.s.setStride(did, 1);
  CHECK(datas(diag->targets(2, 0)) == std::vector<Index>{3});
  CHECK(diag->targets(3, 0).empty());
  const auto sid = m.s.addMsg("Sparse", a, "out", c, "add");
  m.s.pairFill(sid, {0, 0, 5, 2, 0}, {3, 1, 0, 2, 2});
  const Msg* sp = m.s.msg(sid);
  CHECK(datas(sp->targets(0, 0)) == std::vector<Index>{1, 2, 3});  // rows sorted by target
  CHECK(datas(sp->targets(5, 0)) == std::vector<Index>{0});
  CHECK(sp->targets(1, 0).empty());
}

TEST_CASE("connect checks fields, argument types, kinds and indices at connect time") {
  Model m;
  const ObjId a = m.s.create("TestAdder", "/a", 3);
  const ObjId b = m.s.create("TestAdder", "/b", 4);
  try {
    m.s.addMsg("OneToAll", a, "out", b, "addPair");
    FAIL("no error");
  } catch (const TypeError& e) {
    const std::string w = e.what();
    CHECK(w.find("sends (double)") != std::string::npos);
    CHECK(w.find("takes (double,unsigned int)") != std::string::npos);
  }
  CHECK_THROWS_AS(m.s.addMsg("OneToAll", a, "pair", b, "add"), TypeError);
  try {
    m.s.addMsg("OneToAll", a, "outt", b, "add");
    FAIL("no error");
  } catch (const FieldError& e) {
    CHECK(std::string(e.what()).find("source fields: out, pair, label") != std::string::npos);
  }
  CHECK_THROWS_AS(m.s.addMsg("OneToAll", a, "out", b, "nosuch"), FieldError);
  CHECK_THROWS_AS(m.s.addMsg("OneToAll", a, "add", b, "add"), FieldError);  // a dest is not a src
  try {
    m.s.addMsg("Sideways", a, "out", b, "add");
    FAIL("no error");
  } catch (const MsgError& e) {
    CHECK(std::string(e.what()).find("Single, OneToOne, OneToAll, Diagonal, Sparse, Reduce") !=
          std::string::npos);
  }
  CHECK_THROWS_AS(m.s.addMsg("OneToOne", a, "out", b, "add"), MsgError);  // sizes differ
  CHECK_THROWS_AS(m.s.addMsg("Single", ObjId(a.id, 1), "out", ObjId(b.id, 4), "add"), IndexError);
  CHECK_THROWS_AS(m.s.addMsg("OneToAll", a, "out", b, "getX"), MsgError);  // only Reduce reads
  CHECK_THROWS_AS(m.s.addMsg("OneToAll", "/a", "out", "/nope", "add"), PathError);
  const auto sid = m.s.addMsg("Sparse", a, "out", b, "add");
  CHECK_THROWS_AS(m.s.pairFill(sid, {0, 3}, {0, 0}), IndexError);
  CHECK_THROWS_AS(m.s.pairFill(sid, {0}, {0, 1}), ValueError);
  CHECK_THROWS_AS(m.s.setRandomConnectivity(sid, 1.5, 1), ValueError);
  CHECK_THROWS_AS(m.s.setStride(sid, 2), MsgError);  // not a Diagonal
  CHECK_THROWS_AS(m.s.setRandomConnectivity(999999, 0.5, 1), MsgError);
  CHECK(antler::test::element(b)->msgIds().size() == 1);  // only the Sparse message was made
}

TEST_CASE("setRandomConnectivity: deterministic per seed, right density, fills synapse indices") {
  Model m;
  Shell& s = m.s;
  const ObjId a = m.s.create("TestAdder", "/a", 300);
  const ObjId r = m.s.create("TestReceiver", "/r", 200);
  const ObjId syn = m.s.find("/r/syn");
  const auto s1 = m.s.addMsg("Sparse", a, "out", syn, "hit");
  const auto s2 = m.s.addMsg("Sparse", a, "out", syn, "hit");
  m.s.setRandomConnectivity(s1, 0.1, 7);
  m.s.setRandomConnectivity(s2, 0.1, 7);  // same seed: same matrix, appended after s1's entries
  auto* m1 = static_cast<const SparseMsg*>(m.s.msg(s1));
  auto* m2 = static_cast<const SparseMsg*>(m.s.msg(s2));
  std::size_t n = 0;
  std::vector<Index> per1(200, 0), per2(200, 0);
  for (Index i = 0; i < 300; ++i) {
    CHECK(datas(m1->targets(i, 0)) == datas(m2->targets(i, 0)));
    for (auto t : m1->targets(i, 0)) {
      CHECK(t.field == per1[t.data]);  // field index = arrival order at that parent
      ++per1[t.data];
      ++n;
    }
  }
  // s2's entries follow s1's on each parent (checked on the parents this node owns).
  for (Index i = 0; i < 300; ++i)
    for (auto t : m2->targets(i, 0))
      if (antler::test::element(r)->isLocal(t.data))
        CHECK(t.field == per1[t.data] + per2[t.data]++);
  // Binomial(60000, 0.1): mean 6000, sd ~73; 6 sd bounds.
  CHECK(n > 6000 - 440);
  CHECK(n < 6000 + 440);
  for (Index d = 0; d < 200; ++d)
    CHECK(Field<unsigned>::get(s, ObjId(r.id, d), "numSyn") == 2 * per1[d]);
  // A refill replaces s2's own entries and keeps s1's.
  m.s.setRandomConnectivity(s2, 0.1, 8);
  bool differs = false;
  for (Index i = 0; i < 300 && !differs; ++i)
    differs = !(datas(m1->targets(i, 0)) == datas(m2->targets(i, 0)));
  CHECK(differs);
  std::vector<Index> per3(200, 0);
  for (Index i = 0; i < 300; ++i)
    for (auto t : m2->targets(i, 0)) ++per3[t.data];
  for (Index d = 0; d < 200; ++d)
    CHECK(Field<unsigned>::get(s, ObjId(r.id, d), "numSyn") == per1[d] + per3[d]);
  CHECK(m.s.doSyncDataHandler(syn.id) == [&] {
    Index mx = 0;
    for (Index d = 0; d < 200; ++d) mx = std::max(mx, per1[d] + per3[d]);
    return mx;
  }());
  // Every node built the same matrix: the rows do not depend on the node count or rank.
  ByteBuffer arg;
  Writer(arg).put<std::uint32_t>(s1);
  const auto hashes = m.s.dispatchExtension("test.matrixHash", arg);
  for (const ByteBuffer& b : hashes) {
    Reader rd(b);
    Reader rd0(hashes[0]);
    CHECK(rd.get<std::uint64_t>() == rd0.get<std::uint64_t>());
  }
  const auto all = m.s.addMsg("Sparse", a, "out", a, "add");
  m.s.setRandomConnectivity(all, 1.0, 1);
  CHECK(static_cast<const SparseMsg*>(m.s.msg(all))->numEntries() == 300u * 300u);
  m.s.setRandomConnectivity(all, 0.0, 1);
  CHECK(static_cast<const SparseMsg*>(m.s.msg(all))->numEntries() == 0u);
}
