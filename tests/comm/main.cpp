// doctest main for core/comm's own tests: every rank runs every test case (SPMD, unlike the
// antler suite where rank 0 drives and the others serve), and every rank exits with the worst
// result of any rank. Tests of the Local backend run in the 1-rank run only.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "core/comm/mpi.hpp"

int main(int argc, char** argv) {
  antler::comm::Environment env(&argc, &argv);
  doctest::Context ctx(argc, argv);
  int result = ctx.run();
  int worst = 0;
  MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX,
                antler::comm::mpi_handle(antler::comm::Comm::world()));
  return worst;
}
