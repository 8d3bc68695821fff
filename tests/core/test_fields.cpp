// Field get/set of every Finfo kind, vector access across nodes, calls, introspection and type
// errors. Values are set from formulas and compared with the same formulas.
#include <doctest/doctest.h>

#include <cmath>

#include "core/element.hpp"
#include "tests/support/model.hpp"

using namespace antler;
using antler::test::Model;

TEST_CASE("value fields: get and set one object on whatever node owns it") {
  Model m;
  Shell& s = m.s;
  const ObjId a = m.s.create("TestAdder", "/a", 11);
  for (Index i = 0; i < 11; ++i) Field<double>::set(s, ObjId(a.id, i), "x", 1.5 * i - 4);
  for (Index i = 0; i < 11; ++i) {
    CHECK(Field<double>::get(s, ObjId(a.id, i), "x") == 1.5 * i - 4);
    CHECK(Field<double>::get(s, ObjId(a.id, i), "doubled") ==
          2 * (1.5 * i - 4));  // read-only via getter
  }
  CHECK(Field<unsigned>::get(s, ObjId(a.id, 4), "count") == 0u);
  CHECK(Field<std::string>::get(s, ObjId(a.id, 4), "name") == "a");
  CHECK(Field<std::string>::get(s, ObjId(a.id, 4), "path") == "/a[4]");
  CHECK(Field<std::string>::get(s, ObjId(a.id, 4), "className") == "TestAdder");
  CHECK(Field<unsigned>::get(s, a, "numData") == 11u);
}

TEST_CASE("vector get and set cover every entry in index order") {
  Model m;
  Shell& s = m.s;
  const ObjId a = m.s.create("TestAdder", "/a", 101);
  std::vector<double> v(101);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.1 * static_cast<double>(i));
  Field<double>::setVec(s, a.id, "x", v);
  CHECK(Field<double>::getVec(s, a.id, "x") == v);
  Field<double>::setAll(s, a.id, "x", 2.5);
  for (double x : Field<double>::getVec(s, a.id, "x")) CHECK(x == 2.5);
  CHECK_THROWS_AS(Field<double>::setVec(s, a.id, "x", std::vector<double>(100)), ValueError);
  CHECK(Field<double>::getVec(s, a.id, "x").size() == 101);  // unchanged by the failed set
}

TEST_CASE("global elements hold every entry on every node") {
  Model m;
  Shell& s = m.s;
  const ObjId g = m.s.create("TestAdder", "/g", 5, true);
  CHECK(antler::test::element(g)->isGlobal());
  CHECK(antler::test::element(g)->numLocal() == 5);
  for (Index i = 0; i < 5; ++i) Field<double>::set(s, ObjId(g.id, i), "x", i * 3.0);
  CHECK(Field<double>::getVec(s, g.id, "x") == std::vector<double>{0, 3, 6, 9, 12});
}

TEST_CASE("field elements: per-parent sizes, per-entry values") {
  Model m;
  Shell& s = m.s;
  const ObjId r = m.s.create("TestReceiver", "/r", 6);
  const ObjId syn = m.s.find("/r/syn");
  for (Index i = 0; i < 6; ++i) Field<unsigned>::set(s, ObjId(r.id, i), "numSyn", i);
  for (Index i = 0; i < 6; ++i) {
    CHECK(Field<unsigned>::get(s, ObjId(r.id, i), "numSyn") == i);
    std::vector<double> w(i);
    for (Index k = 0; k < i; ++k) w[k] = 10.0 * i + k;
    Field<double>::setFieldVec(s, ObjId(syn.id, i), "weight", w);
    CHECK(Field<double>::getFieldVec(s, ObjId(syn.id, i), "weight") == w);
  }
  CHECK(Field<double>::get(s, m.s.find("/r[4]/syn[3]"), "weight") == 43.0);
  Field<double>::set(s, m.s.find("/r[4]/syn[3]"), "weight", -1.0);
  CHECK(Field<double>::get(s, ObjId(syn.id, 4, 3), "weight") == -1.0);
  // Every entry of every parent, parent by parent: 0+1+...+5 = 15 entries.
  const auto all = Field<double>::getVec(s, syn.id, "weight");
  CHECK(all.size() == 15);
  CHECK_THROWS_AS(Field<double>::get(s, ObjId(syn.id, 4, 4), "weight"), IndexError);
  CHECK_THROWS_AS(Field<double>::set(s, ObjId(syn.id, 2, 7), "weight", 1.0), IndexError);
  std::vector<double> flat(15);
  for (std::size_t k = 0; k < flat.size(); ++k) flat[k] = 0.5 * static_cast<double>(k) - 3;
  Field<double>::setVec(s, syn.id, "weight", flat);  // parent by parent, across nodes
  CHECK(Field<double>::getVec(s, syn.id, "weight") == flat);
  CHECK(Field<double>::get(s, ObjId(syn.id, 5, 4), "weight") == flat[14]);
  CHECK_THROWS_AS(Field<double>::setVec(s, syn.id, "weight", std::vector<double>(14)), ValueError);
  CHECK(Field<double>::getVec(s, syn.id, "weight") == flat);
  Field<double>::setAll(s, syn.id, "weight", 0.25);
  for (double w : Field<double>::getVec(s, syn.id, "weight")) CHECK(w == 0.25);
  CHECK(Field<unsigned>::get(s, ObjId(syn.id, 3, 1), "numField") == 3u);
}

TEST_CASE("lookup fields and calls by name") {
  Model m;
  Shell& s = m.s;
  const ObjId a = m.s.create("TestAdder", "/a", 3);
  LookupField<unsigned, double>::set(s, ObjId(a.id, 2), "weight", 4u, 7.5);
  CHECK(LookupField<unsigned, double>::get(s, ObjId(a.id, 2), "weight", 4u) == 7.5);
  CHECK(LookupField<unsigned, double>::get(s, ObjId(a.id, 2), "weight", 1u) == 0.0);
  CHECK(LookupField<unsigned, double>::get(s, ObjId(a.id, 1), "weight", 0u) == -1.0);
  Field<double>::set(s, ObjId(a.id, 2), "x", 3.0);
  SetGet::call(s, ObjId(a.id, 2), "scale", 2.0);  // x = 2 * 3 + index 2
  CHECK(Field<double>::get(s, ObjId(a.id, 2), "x") == 8.0);
  SetGet::call(s, ObjId(a.id, 1), "add", 5.0);
  CHECK(Field<double>::get(s, ObjId(a.id, 1), "sum") == 5.0);
  SetGet::call(s, ObjId(a.id, 1), "setX", 9.0);  // every value field has a setX function
  CHECK(Field<double>::get(s, ObjId(a.id, 1), "x") == 9.0);
}

TEST_CASE("bad field names, types and indices are errors and change nothing") {
  Model m;
  Shell& s = m.s;
  const ObjId a = m.s.create("TestAdder", "/a", 4);
  Field<double>::set(s, ObjId(a.id, 1), "x", 1.0);
  try {
    Field<double>::set(s, ObjId(a.id, 1), "xx", 2.0);
    FAIL("no error");
  } catch (const FieldError& e) {
    const std::string w = e.what();
    CHECK(w.find("'xx'") != std::string::npos);
    CHECK(w.find("fields: ") != std::string::npos);
    CHECK(w.find("x,") != std::string::npos);
  }
  try {
    Field<int>::set(s, ObjId(a.id, 1), "x", 2);
    FAIL("no error");
  } catch (const TypeError& e) {
    const std::string w = e.what();
    CHECK(w.find("double") != std::string::npos);
    CHECK(w.find("int") != std::string::npos);
  }
  CHECK_THROWS_AS(Field<double>::set(s, ObjId(a.id, 1), "sum", 2.0), FieldError);  // read-only
  CHECK_THROWS_AS(Field<double>::set(s, ObjId(a.id, 4), "x", 2.0), IndexError);
  CHECK_THROWS_AS(Field<double>::get(s, ObjId(a.id, 9), "x"), IndexError);
  CHECK_THROWS_AS(SetGet::call(s, ObjId(a.id, 1), "scale", 2), TypeError);
  CHECK_THROWS_AS(SetGet::call(s, ObjId(a.id, 1), "nosuch", 2.0), FieldError);
  CHECK_THROWS_AS((LookupField<int, double>::get(s, ObjId(a.id, 1), "weight", 1)), TypeError);
  CHECK(Field<double>::get(s, ObjId(a.id, 1), "x") == 1.0);
}

TEST_CASE("introspection lists classes and fields with kinds and types") {
  const auto classes = Shell::classNames();
  CHECK(std::find(classes.begin(), classes.end(), "Neutral") != classes.end());
  CHECK(std::find(classes.begin(), classes.end(), "TestAdder") != classes.end());
  const auto fields = Shell::fieldInfo("TestAdder");
  auto find = [&](const std::string& n) {
    for (auto& f : fields)
      if (f.name == n) return f;
    return Shell::FieldInfo{};
  };
  CHECK(find("x").kind == "value");
  CHECK(find("x").type == "double");
  CHECK(find("sum").kind == "readonly value");
  CHECK(find("weight").kind == "lookup value");
  CHECK(find("weight").type == "unsigned int->double");
  CHECK(find("add").kind == "dest");
  CHECK(find("addPair").type == "double,unsigned int");
  CHECK(find("out").kind == "src");
  CHECK(find("pair").type == "double,unsigned int");
  CHECK(find("proc").kind == "shared");
  CHECK(find("setX").kind == "dest");
  CHECK(find("getX").kind == "dest");
  CHECK(find("name").kind == "readonly value");  // inherited from Neutral
  CHECK(Shell::fieldInfo("TestReceiver")[0].name == "name");
  bool hasSyn = false;
  for (auto& f : Shell::fieldInfo("TestReceiver"))
    hasSyn = hasSyn || (f.name == "syn" && f.kind == "field element");
  CHECK(hasSyn);
  CHECK_THROWS_AS(Shell::fieldInfo("Nope"), ClassError);
}
