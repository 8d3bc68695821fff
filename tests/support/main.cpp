// doctest main for tests written as if serial: rank 0 runs the test cases and every other rank
// serves its Shell commands; all ranks exit with the driver's result.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "shell/runtime.hpp"

int main(int argc, char** argv) {
  antler::Runtime rt(argc, argv);
  doctest::Context ctx(argc, argv);
  const int result = ctx.run();
  return rt.finish(result);
}
