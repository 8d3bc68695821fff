// loadLibrary: a library that would register a class name twice (a test library with its own
// 'IntFire', or a second copy of libantler) is refused with a ValueError naming the class and
// both libraries, and nothing of it stays registered; so are empty and unloadable paths.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>

#include "core/cinfo.hpp"
#include "core/element.hpp"
#include "tests/support/model.hpp"

using namespace antler;
using antler::test::Model;

namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string load_error(Shell& s, const std::string& path) {
  try {
    s.loadLibrary(path);
  } catch (const ValueError& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL("wrong exception type: " << e.what());
    return {};
  }
  FAIL("no exception");
  return {};
}

/// The model still works with antler's own IntFire after a refused load.
void check_int_fire_works(Shell& s) {
  const ObjId n = s.create("IntFire", "/after", 3);
  CHECK(antler::test::element(n)->cinfo() == Cinfo::find("IntFire"));
  CHECK(antler::test::element(n)->cinfo()->findFinfo("thresh") != nullptr);
  Field<double>::set(s, ObjId(n.id, 2), "thresh", 2.5);
  CHECK(Field<double>::get(s, ObjId(n.id, 2), "thresh") == 2.5);
}

}  // namespace

TEST_CASE("loadLibrary: empty and unloadable paths are ValueErrors; nothing changes") {
  Model m;
  const auto before = Cinfo::classNames();
  CHECK(has(load_error(m.s, ""), "empty path"));
  const std::string w = load_error(m.s, "/no/such/libnothing.so");
  CHECK(has(w, "loadLibrary"));
  CHECK(has(w, "'/no/such/libnothing.so'"));
  CHECK(Cinfo::classNames() == before);
}

TEST_CASE("loadLibrary: a library registering a class name twice is refused, nothing registered") {
  Model m;
  const auto before = Cinfo::classNames();
  const std::string lib = ANTLER_DUP_CLASS_LIB;
  const std::string file = std::filesystem::path(lib).filename().string();
  for (int attempt = 0; attempt < 2; ++attempt) {  // and again: the same refusal
    CAPTURE(attempt);
    const std::string w = load_error(m.s, lib);
    CHECK(has(w, "loadLibrary"));
    CHECK(has(w, "'IntFire'"));
    CHECK(has(w, "'" + lib + "'"));  // the library as given
    CHECK(has(w, "libantler"));      // where the first IntFire comes from
    CHECK(has(w, Cinfo::libraryOf("IntFire")));
    CHECK(Cinfo::classNames() == before);  // TestDupFresh, registered before, is gone again
    CHECK(Cinfo::find("TestDupFresh") == nullptr);
    CHECK(Cinfo::find("TestDupAfter") == nullptr);
  }
  check_int_fire_works(m.s);
}

TEST_CASE("loadLibrary: a second copy of libantler is refused, and antler goes on working") {
  Model m;
  const auto before = Cinfo::classNames();
  const std::string original = ANTLER_LIB;
  // Rank 0 copies the file before the command reaches any node; every node loads the same copy.
  const std::filesystem::path copy =
      std::filesystem::temp_directory_path() / ("antler_copy_" + std::to_string(getpid()) + ".so");
  std::filesystem::copy_file(original, copy, std::filesystem::copy_options::overwrite_existing);
  for (int attempt = 0; attempt < 2; ++attempt) {
    CAPTURE(attempt);
    const std::string w = load_error(m.s, copy.string());
    CHECK(has(w, "'" + copy.string() + "'"));
    CHECK(has(w, "already registered"));
    CHECK(has(w, Cinfo::libraryOf("Neutral")));
    CHECK(Cinfo::classNames() == before);
  }
  std::filesystem::remove(copy);
  check_int_fire_works(m.s);
}
