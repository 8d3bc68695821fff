// doctest main for core/comm's own tests: every rank runs every test case (SPMD, unlike the
// antler suite where rank 0 drives and the others serve), and every rank exits with the worst
// result of any rank. Tests of the Local backend run in the 1-rank run only. Every rank runs the
// watchdog (tests/support/watchdog.hpp): a rank stuck in a case ends the run with exit code 124
// and the case's name, and mpirun ends the others.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>

#include "core/comm/mpi.hpp"
#include "tests/support/watchdog.hpp"

#ifndef ANTLER_TEST_CASE_TIMEOUT_DEFAULT  // seconds; tests/CMakeLists.txt sets it
#define ANTLER_TEST_CASE_TIMEOUT_DEFAULT 120
#endif

DOCTEST_REGISTER_LISTENER("watchdog", 1, antler::test::WatchdogListener);

int main(int argc, char** argv) {
  antler::comm::Environment env(&argc, &argv);
  const char* limit = std::getenv("ANTLER_TEST_CASE_TIMEOUT");  // seconds; 0 turns it off
  const double seconds = limit ? std::atof(limit) : ANTLER_TEST_CASE_TIMEOUT_DEFAULT;
  auto& watchdog = antler::test::Watchdog::instance();
  if (seconds > 0) watchdog.start(seconds);
  doctest::Context ctx(argc, argv);
  int result = ctx.run();
  watchdog.stop();
  int worst = 0;
  MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX,
                antler::comm::mpi_handle(antler::comm::Comm::world()));
  return worst;
}
