// Paths, the element tree, create and delete, and their errors.
#include <doctest/doctest.h>

#include "core/element.hpp"
#include "tests/support/model.hpp"

using namespace antler;
using antler::test::Model;

TEST_CASE("create builds a tree of paths with indices") {
  Model m;
  const ObjId model = m.s.create("Neutral", "/model");
  const ObjId n = m.s.create("TestAdder", "/model/neurons", 10);
  CHECK(antler::test::path(model) == "/model[0]");
  CHECK(antler::test::element(n)->path() == "/model/neurons");
  CHECK(antler::test::element(n)->numData() == 10);
  CHECK(m.s.find("/model/neurons[3]") == ObjId(n.id, 3));
  CHECK(m.s.find("/model/neurons") == ObjId(n.id, 0));
  CHECK(m.s.find("model/neurons[9]") == ObjId(n.id, 9));
  CHECK(antler::test::path(ObjId(n.id, 3)) == "/model/neurons[3]");
  CHECK(antler::test::element(n)->parent() == model.id);
  auto kids = m.s.children("/model");
  REQUIRE(kids.size() == 1);
  CHECK(kids[0].id == n.id);
  CHECK(m.s.exists("/model/neurons"));
  CHECK_FALSE(m.s.exists("/model/nope"));
}

TEST_CASE("field elements appear under their parent with two indices") {
  Model m;
  m.s.create("Neutral", "/net");
  const ObjId r = m.s.create("TestReceiver", "/net/r", 5);
  const ObjId syn = m.s.find("/net/r/syn");
  CHECK(antler::test::element(syn)->isField());
  CHECK(antler::test::element(syn)->cinfo()->name() == "TestSyn");
  const ObjId one = m.s.find("/net/r[3]/syn[2]");
  CHECK(one == ObjId(syn.id, 3, 2));
  CHECK(antler::test::path(one) == "/net/r[3]/syn[2]");
  CHECK(antler::test::element(syn)->parent() == r.id);
}

TEST_CASE("bad paths and names are errors naming the thing and the choices") {
  Model m;
  m.s.create("Neutral", "/model");
  m.s.create("TestAdder", "/model/a", 3);
  try {
    m.s.find("/model/b");
    FAIL("no error");
  } catch (const PathError& e) {
    const std::string w = e.what();
    CHECK(w.find("'b'") != std::string::npos);
    CHECK(w.find("children of /model: a") != std::string::npos);
  }
  CHECK_THROWS_AS(m.s.find("/model/a[3]"), IndexError);
  CHECK_THROWS_AS(m.s.find("/model/a[x]"), ValueError);
  CHECK_THROWS_AS(m.s.find("/model/a[1"), ValueError);
  CHECK_THROWS_AS(m.s.create("Neutral", "/nope/x"), PathError);
  CHECK_THROWS_AS(m.s.create("Neutral", "/model/bad name"), ValueError);
  try {
    m.s.create("NoSuchClass", "/model/c");
    FAIL("no error");
  } catch (const ClassError& e) {
    CHECK(std::string(e.what()).find("TestAdder") != std::string::npos);  // lists the classes
  }
  // A name clash changes nothing.
  try {
    m.s.create("Neutral", "/model/a");
    FAIL("no error");
  } catch (const PathError& e) {
    CHECK(std::string(e.what()).find("already exists") != std::string::npos);
  }
  CHECK(antler::test::element(m.s.find("/model/a"))->cinfo()->name() == "TestAdder");
  CHECK(m.s.children("/model").size() == 1);
}

TEST_CASE("delete removes a subtree; the root and field elements cannot be deleted") {
  Model m;
  m.s.create("Neutral", "/model");
  const ObjId a = m.s.create("TestAdder", "/model/a", 4);
  const ObjId b = m.s.create("TestAdder", "/model/b", 4);
  m.s.create("TestReceiver", "/model/r", 2);
  const auto msg = m.s.addMsg("OneToOne", a, "out", b, "add");
  CHECK(m.s.msg(msg) != nullptr);
  m.s.destroy("/model/a");
  CHECK_FALSE(m.s.exists("/model/a"));
  CHECK(antler::test::element(a) == nullptr);
  CHECK(m.s.msg(msg) == nullptr);  // messages touching a deleted element go with it
  CHECK_THROWS_AS(m.s.destroy(ObjId(Id::root())), ValueError);
  CHECK_THROWS_AS(m.s.destroy("/model/r/syn"), ValueError);
  CHECK(m.s.exists("/model/r/syn"));
  m.s.destroy("/model");
  CHECK_FALSE(m.s.exists("/model"));
  REQUIRE(m.s.children("/").size() == 1);  // only antler's /clock is left
  CHECK(antler::test::element(m.s.children("/")[0])->path() == "/clock");
}

TEST_CASE("wildcardFind matches names, prefixes, depth and class conditions") {
  Model m;
  m.s.create("Neutral", "/model");
  m.s.create("TestAdder", "/model/neurons", 3);
  m.s.create("TestAdder", "/model/nets", 2);
  m.s.create("Neutral", "/model/sub");
  m.s.create("TestAdder", "/model/sub/deep", 1);
  m.s.create("TestReceiver", "/model/sub/rec", 1);
  auto paths = [&](const std::string& p) {
    std::vector<std::string> out;
    for (auto& o : m.s.wildcardFind(p)) out.push_back(antler::test::element(o)->path());
    return out;
  };
  CHECK(paths("/model/##[TYPE=TestAdder]") ==
        std::vector<std::string>{"/model/neurons", "/model/nets", "/model/sub/deep"});
  CHECK(paths("/model/#") ==
        std::vector<std::string>{"/model/neurons", "/model/nets", "/model/sub"});
  CHECK(paths("/model/ne#") == std::vector<std::string>{"/model/neurons", "/model/nets"});
  CHECK(paths("/model/##[TYPE!=TestAdder]") ==
        std::vector<std::string>{"/model/sub", "/model/sub/rec", "/model/sub/rec/syn"});
  CHECK(paths("/##[ISA=TestReceiver]") == std::vector<std::string>{"/model/sub/rec"});
  CHECK(paths("/model/sub/deep") == std::vector<std::string>{"/model/sub/deep"});
  CHECK(paths("/model/none").empty());
  CHECK_THROWS_AS(m.s.wildcardFind("/model/##[KIND=x]"), ValueError);
}

TEST_CASE("block distribution covers every entry exactly once") {
  for (Index n : {0u, 1u, 7u, 10u, 1001u})
    for (int P : {1, 2, 3, 4, 7}) {
      Index next = 0;
      for (int r = 0; r < P; ++r) {
        auto [b, e] = block_range(n, P, r);
        CHECK(b == next);
        for (Index i = b; i < e; ++i) CHECK(block_owner(n, P, i) == r);
        next = e;
      }
      CHECK(next == n);
    }
}
