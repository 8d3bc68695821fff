// doctest main for tests written as if serial: rank 0 runs the test cases and every other rank
// serves its Shell commands; all ranks exit with the driver's result. A test case that hangs ends
// the run with a message naming it (tests/support/watchdog.hpp).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>

#include "shell/runtime.hpp"
#include "tests/support/runtime.hpp"
#include "tests/support/watchdog.hpp"

#ifndef ANTLER_TEST_CASE_TIMEOUT_DEFAULT  // seconds; tests/CMakeLists.txt sets it
#define ANTLER_TEST_CASE_TIMEOUT_DEFAULT 120
#endif

DOCTEST_REGISTER_LISTENER("watchdog", 1, antler::test::WatchdogListener);

namespace {
antler::Runtime* g_runtime = nullptr;
}

antler::Runtime& antler::test::runtime() {
  return *g_runtime;
}

int main(int argc, char** argv) {
  antler::Runtime rt(argc, argv);  // workers serve the driver from here and never return
  g_runtime = &rt;
  const char* limit = std::getenv("ANTLER_TEST_CASE_TIMEOUT");  // seconds; 0 turns it off
  const double seconds = limit ? std::atof(limit) : ANTLER_TEST_CASE_TIMEOUT_DEFAULT;
  auto& watchdog = antler::test::Watchdog::instance();
  if (seconds > 0) watchdog.start(seconds);
  doctest::Context ctx(argc, argv);
  const int result = ctx.run();
  watchdog.stop();
  return rt.finish(result);
}
