// Odd paths: '.', '..', indices in the middle of a create path, n = 0, odd characters, indices
// out of range, and '##' wildcards. Lookups, exists, children, create and wildcardFind agree,
// and every refusal leaves the tree as it was.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <functional>

#include "core/cinfo.hpp"
#include "core/detail/path.hpp"
#include "core/element.hpp"
#include "tests/support/model.hpp"

using namespace antler;
using antler::test::Model;

namespace {

/// Every element as "path class entries", in preorder, by walking the tree directly.
std::vector<std::string> tree() {
  std::vector<std::string> out;
  std::function<void(const Element*)> visit = [&](const Element* e) {
    out.push_back(e->path() + " " + e->cinfo()->name() + " " + std::to_string(e->numData()));
    for (Id c : e->children())
      if (const Element* k = antler::test::element(c)) visit(k);
  };
  visit(antler::test::element(Id::root()));
  return out;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// Runs f, which must throw E; returns the message.
template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL("wrong exception type: " << e.what());
    return {};
  }
  FAIL("no exception");
  return {};
}

}  // namespace

TEST_CASE("paths: '.' and '..' resolve as a shell resolves them") {
  Model m;
  const ObjId net = m.s.create("Neutral", "/net");
  const ObjId a = m.s.create("TestAdder", "/net/a", 3);
  const ObjId b = m.s.create("Neutral", "/net/a/b");
  const ObjId root(Id::root());
  CHECK(m.s.find("/net/..") == root);
  CHECK(m.s.find("/net/.") == net);
  CHECK(m.s.find("/net/./a[2]") == ObjId(a.id, 2));
  CHECK(m.s.find("/net/a[2]/..") == net);
  CHECK(m.s.find("/net/a[2]/b/..") == ObjId(a.id, 2));  // back to where it was, index too
  CHECK(m.s.find("/net/a/b/../../a[1]") == ObjId(a.id, 1));
  CHECK(m.s.find("/..") == root);  // '..' at the root stays there, as in POSIX
  CHECK(m.s.find("/../../net") == net);
  CHECK(m.s.find("/.") == root);
  CHECK(m.s.find("/net//a/") == ObjId(a.id, 0));
  CHECK(m.s.exists("/net/.."));
  CHECK(m.s.exists("/net/a/b/.."));
  CHECK_FALSE(m.s.exists("/nope/.."));  // each component before '..' must exist
  CHECK_THROWS_AS(m.s.find("/nope/.."), PathError);
  CHECK_THROWS_AS(m.s.find("/net/..[1]"), ValueError);
  CHECK_THROWS_AS(m.s.find("/net/.[0]"), ValueError);
  CHECK(m.s.children("/net/a/..").size() == 1);
  CHECK(m.s.children("/net/a/..")[0].id == a.id);
  // wildcardFind agrees: '.' and '..' before the first wildcard resolve as in lookups.
  CHECK(m.s.wildcardFind("/net/..") == std::vector<ObjId>{root});
  CHECK(m.s.wildcardFind("/net/a/../#") == std::vector<ObjId>{ObjId(a.id)});
  CHECK(m.s.wildcardFind("/net/./##/.") == std::vector<ObjId>{ObjId(a.id), ObjId(b.id)});
  const std::string w = message_of<ValueError>([&] { m.s.wildcardFind("/net/#/.."); });
  CHECK(has(w, "'/net/#/..'"));
  // A base element for relative paths (the hook for a current element).
  CHECK(resolve_path(m.sim.elements(), "b", "find", ObjId(a.id, 2)) == b);
  CHECK(resolve_path(m.sim.elements(), "..", "find", ObjId(a.id, 2)) == net);
  CHECK(resolve_path(m.sim.elements(), "../a[1]", "find", ObjId(a.id, 2)) == ObjId(a.id, 1));
  CHECK(resolve_path(m.sim.elements(), "/net", "find", ObjId(a.id, 2)) == net);
}

TEST_CASE("paths: create refuses '.' and '..' as names, and resolves them before the name") {
  Model m;
  m.s.create("Neutral", "/net");
  m.s.create("TestAdder", "/net/a", 3);
  const auto before = tree();
  for (const char* p :
       {"/net/..", "/net/.", "/net/a/..", "/..", "/.", "..", ".", "/net/./", "/net/../"}) {
    CAPTURE(p);
    const std::string w = message_of<ValueError>([&] { m.s.create("Neutral", p); });
    CHECK(has(w, "create"));
    CHECK(has(w, std::string("'") + p + "'"));
    CHECK(has(w, "not an element name"));
    CHECK(tree() == before);
  }
  // '..' and '.' in the parent part resolve like lookups.
  const ObjId c = m.s.create("Neutral", "/net/a/../c");
  CHECK(antler::test::element(c)->path() == "/net/c");
  CHECK(m.s.find("/net/./c") == c);
  const ObjId d = m.s.create("Neutral", "/net/./d");
  CHECK(antler::test::element(d)->path() == "/net/d");
  CHECK_THROWS_AS(m.s.create("Neutral", "/nope/../e"), PathError);
  CHECK_FALSE(m.s.exists("/e"));
}

TEST_CASE("paths: an index in the middle of a create path only where it is unambiguous") {
  Model m;
  m.s.create("Neutral", "/net");
  m.s.create("TestAdder", "/net/n", 3);
  const auto before = tree();
  std::string w = message_of<ValueError>([&] { m.s.create("Neutral", "/net/n[2]/x"); });
  CHECK(has(w, "create"));
  CHECK(has(w, "'/net/n[2]/x'"));
  CHECK(has(w, "whole element /net/n (3 entries)"));
  CHECK(tree() == before);
  CHECK_FALSE(m.s.exists("/net/n/x"));
  w = message_of<IndexError>([&] { m.s.create("Neutral", "/net/n[7]/x"); });
  CHECK(has(w, "index 7"));
  CHECK(has(w, "0..2"));
  w = message_of<ValueError>([&] { m.s.create("Neutral", "/net/n[-1]/x"); });
  CHECK(has(w, "'-1'"));
  w = message_of<ValueError>([&] { m.s.create("Neutral", "/net/x[3]"); });
  CHECK(has(w, "'x[3]'"));
  CHECK(has(w, "takes no index"));
  CHECK(tree() == before);
  // [0] of a one-entry element is the element itself (ObjId paths print it: '/net[0]').
  const ObjId x = m.s.create("Neutral", antler::test::path(ObjId(m.s.find("/net"))) + "/x");
  CHECK(antler::test::element(x)->path() == "/net/x");
}

TEST_CASE("paths: create with n = 0, empty paths and odd names are refused by name") {
  Model m;
  m.s.create("Neutral", "/net");
  const auto before = tree();
  std::string w = message_of<ValueError>([&] { m.s.create("TestAdder", "/z", 0); });
  CHECK(has(w, "'/z'"));
  CHECK(has(w, "n must be >= 1"));
  CHECK_FALSE(m.s.exists("/z"));
  w = message_of<ValueError>([&] { m.s.create("Neutral", ""); });
  CHECK(has(w, "empty path"));
  w = message_of<ValueError>([&] { m.s.create("Neutral", "/"); });
  CHECK(has(w, "root"));
  w = message_of<ValueError>([&] { m.s.create("Neutral", std::string("/net/bad\0name", 13)); });
  CHECK(has(w, "'bad\\x00name'"));  // escaped: the NUL does not cut the message short
  for (const char* p : {"/net/a#", "/net/a]", "/net/a b", "/net/a\n", "/net/a'b"}) {
    CAPTURE(p);
    w = message_of<ValueError>([&] { m.s.create("Neutral", p); });
    CHECK(has(w, "create"));
    CHECK(w.find('\n') == std::string::npos);
  }
  CHECK(tree() == before);
  CHECK(antler::test::element(m.s.create("Neutral", "/net/a.b-c_1"))->name() == "a.b-c_1");
}

TEST_CASE("paths: indices out of range are IndexErrors naming the index as written") {
  Model m;
  m.s.create("TestAdder", "/n", 6);
  m.s.create("TestReceiver", "/r", 2);
  std::string w = message_of<IndexError>([&] { m.s.find("/n[99999999999]"); });
  CHECK(has(w, "index 99999999999"));
  CHECK(has(w, "/n, which has 6 entries"));
  CHECK(has(w, "valid: 0..5"));
  w = message_of<IndexError>([&] { m.s.find("/n[6]"); });
  CHECK(has(w, "index 6"));
  w = message_of<IndexError>([&] { m.s.find("/n[18446744073709551616]"); });
  CHECK(has(w, "18446744073709551616"));
  w = message_of<IndexError>([&] { m.s.find("/r[1]/syn[99999999999]"); });
  CHECK(has(w, "99999999999"));
  for (const char* p : {"/n[-1]", "/n[x]", "/n[]", "/n[ 1]", "/n[+1]", "/n[1]x", "/n]"}) {
    CAPTURE(p);
    w = message_of<ValueError>([&] { m.s.find(p); });
    CHECK(has(w, "malformed"));
    CHECK_FALSE(m.s.exists(p));
  }
  CHECK(has(message_of<ValueError>([&] { m.s.find("/n[-1]"); }), "'-1'"));
  CHECK_FALSE(m.s.exists("/n[99999999999]"));
  CHECK(m.s.exists("/n[5]"));
}

TEST_CASE("paths: '##' finds each element once, in tree order, in linear time") {
  Model m;
  // A chain /d0/d1/... of depth 300, each level with a leaf beside it: 600 elements.
  constexpr int depth = 300;
  std::string p;
  std::vector<std::string> preorder;  // computed independently: the chain, each leaf after
  std::vector<std::string> chain;
  for (int i = 0; i < depth; ++i) {
    p += "/d" + std::to_string(i);
    m.s.create("Neutral", p);
    chain.push_back(p);
  }
  for (const std::string& c : chain) m.s.create("TestAdder", c + "/leaf");
  // Preorder: d0, d0/d1, ..., then the leaves from the deepest back up (each leaf was created
  // after its sibling in the chain, so it comes after that sibling's whole subtree).
  std::function<void(int)> visit = [&](int i) {
    if (i == depth) return;
    preorder.push_back(chain[i]);
    visit(i + 1);
    preorder.push_back(chain[i] + "/leaf");
  };
  preorder.push_back("/clock");  // antler's own, the root's first child
  visit(0);
  auto paths = [&](const std::string& pat) {
    std::vector<std::string> out;
    for (auto& o : m.s.wildcardFind(pat)) out.push_back(antler::test::element(o)->path());
    return out;
  };
  auto depth_of = [](const std::string& s) { return std::count(s.begin(), s.end(), '/'); };
  auto at_least = [&](long d) {
    std::vector<std::string> out;
    for (auto& s : preorder)
      if (depth_of(s) >= d) out.push_back(s);
    return out;
  };
  CHECK(paths("/##") == at_least(1));
  CHECK(paths("/##/##") == at_least(2));
  CHECK(paths("/##/##/##") == at_least(3));
  CHECK(paths("/##/##/##/##/##/##") == at_least(6));
  // Linear: the search that followed every way of splitting the depth among the '##'s took
  // C(300, 6) steps here (about 1e12); each element is now visited once.
  const auto t0 = std::chrono::steady_clock::now();
  const auto found = m.s.wildcardFind("/##/##/##/##/##/##/##/##");
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(found.size() == at_least(8).size());
  CHECK(secs < 1.0);  // about a millisecond
  std::vector<std::string> leaves;
  for (auto& s : preorder)
    if (s.ends_with("/leaf")) leaves.push_back(s);
  CHECK(paths("/##/leaf") == leaves);
  CHECK(paths("/##/##[TYPE=TestAdder]") == leaves);  // every leaf is at depth >= 2
  CHECK(paths("/d0/##/d5/#[TYPE=TestAdder]") == std::vector<std::string>{chain[5] + "/leaf"});
}
