// The error roots: user input (Error), the system below (SystemError), antler's own bugs
// (InternalError); a kind crosses nodes and comes back as the same class.
#include <doctest/doctest.h>

#include <algorithm>
#include <type_traits>

#include "core/error.hpp"
#include "tests/support/model.hpp"

using namespace antler;

TEST_CASE("CommError is a failure of the system, not of the user's input") {
  static_assert(std::is_base_of_v<SystemError, CommError>);
  static_assert(!std::is_base_of_v<Error, CommError>);
  static_assert(std::is_base_of_v<Exception, Error> && std::is_base_of_v<Exception, SystemError>);
  static_assert(!std::is_base_of_v<Exception, InternalError>);
  // Every kind is rethrown as its own class, under the right root.
  const ErrorKind kinds[] = {ErrorKind::value, ErrorKind::path,  ErrorKind::field,
                             ErrorKind::type,  ErrorKind::index, ErrorKind::class_,
                             ErrorKind::msg,   ErrorKind::state, ErrorKind::comm};
  for (ErrorKind k : kinds) {
    CAPTURE(to_string(k));
    try {
      throw_error(k, "what");
    } catch (const Error& e) {
      CHECK(k != ErrorKind::comm);
      CHECK(e.kind() == k);
    } catch (const SystemError& e) {
      CHECK(k == ErrorKind::comm);
      CHECK(e.kind() == k);
      CHECK(std::string(e.what()) == "what");
    }
  }
  CHECK_THROWS_AS(throw_error(ErrorKind::comm, "x"), CommError);
}

TEST_CASE("error leaves carry their data, across nodes, next to the message") {
  antler::test::Model m;
  Shell& s = m.s;
  const ObjId a = s.create("TestAdder", "/a", 5);
  // An index out of range, found on the node that owns the entries' range (any node at P > 1).
  try {
    Field<double>::get(s, ObjId(a.id, 7), "x");
    FAIL("no IndexError");
  } catch (const IndexError& e) {
    CHECK(e.index() == 7u);
    CHECK(e.size() == 5u);
  }
  try {
    Field<double>::get(s, a, "nope");
    FAIL("no FieldError");
  } catch (const FieldError& e) {
    CHECK(e.field() == "nope");
    CHECK(e.className() == "TestAdder");
    const auto valid = e.valid();
    CHECK(std::find(valid.begin(), valid.end(), "x") != valid.end());
    CHECK(std::find(valid.begin(), valid.end(), "nope") == valid.end());
  }
  try {
    Field<int>::get(s, a, "x");
    FAIL("no TypeError");
  } catch (const TypeError& e) {
    CHECK(e.expected() == "double");
    CHECK(e.got() == "int");
  }
  try {
    s.find("/a/zz");
    FAIL("no PathError");
  } catch (const PathError& e) {
    CHECK(e.path() == "/a/zz");
  }
  try {
    s.create("NoSuchClass", "/b");
    FAIL("no ClassError");
  } catch (const ClassError& e) {
    CHECK(e.className() == "NoSuchClass");
  }
  // An error that records no facts has none, and says so.
  try {
    s.setClock(0, -1.0);
    FAIL("no ValueError");
  } catch (const ValueError& e) {
    CHECK(e.details().empty());
    CHECK_FALSE(e.detail("index"));
  }
}
