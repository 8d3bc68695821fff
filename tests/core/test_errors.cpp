// The error roots: user input (Error), the system below (SystemError), antler's own bugs
// (InternalError); a kind crosses nodes and comes back as the same class.
#include <doctest/doctest.h>

#include <type_traits>

#include "core/error.hpp"

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
