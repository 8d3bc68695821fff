// Comm::setYielding: the vendor collectives and point-to-point waits, completed by polling
// (MPI_Test + sched_yield on nonblocking calls) instead of the library's blocking calls, give
// the same values as computed here; and the per-node guess that turns it on
// (threads_exceed_cores) follows its override.
#include <doctest/doctest.h>

#include <cstdlib>
#include <numeric>
#include <vector>

#include "core/comm/collectives.hpp"
#include "core/comm/mpi.hpp"

using namespace antler;
using namespace antler::comm;

TEST_CASE("yielding waits: vendor collectives and waits give the values computed here") {
  Comm c = Comm::world().dup();
  const int P = c.size(), r = c.rank();
  for (bool y : {true, false}) {
    CAPTURE(y);
    c.setYielding(y);
    CHECK(c.yielding() == (y && c.backendName() == "MPI"));
    const Options vendor{Algorithm::vendor};
    CHECK(allreduce(c, static_cast<long>(r + 1), ops::sum{}, vendor) ==
          static_cast<long>(P) * (P + 1) / 2);
    int v = r == P - 1 ? 42 : 0;
    broadcast(c, v, P - 1, vendor);
    CHECK(v == 42);
    const std::vector<int> all = allgather(c, 3 * r, vendor);
    std::vector<int> want(static_cast<std::size_t>(P));
    for (int k = 0; k < P; ++k) want[static_cast<std::size_t>(k)] = 3 * k;
    CHECK(all == want);
    // Point-to-point: a ring of irecv/isend, completed by wait.
    if (P > 1) {
      int got = -1;
      const int next = (r + 1) % P, prev = (r + P - 1) % P;
      Request in = c.irecv(prev, 5, reinterpret_cast<char*>(&got), sizeof got);
      const int mine = 100 + r;
      Request out = c.isend(next, 5, {reinterpret_cast<const char*>(&mine), sizeof mine});
      c.wait(out);
      c.wait(in);
      CHECK(got == 100 + prev);
    }
  }
}

TEST_CASE("threads_exceed_cores follows ANTLER_COMM_YIELD, else counts threads against cores") {
  const char* old = std::getenv("ANTLER_COMM_YIELD");
  const std::string saved = old ? old : "";
  setenv("ANTLER_COMM_YIELD", "1", 1);
  CHECK(threads_exceed_cores(1));
  setenv("ANTLER_COMM_YIELD", "0", 1);
  CHECK_FALSE(threads_exceed_cores(100000));
  unsetenv("ANTLER_COMM_YIELD");
  CHECK(threads_exceed_cores(100000));  // no node has that many cores
  if (old) setenv("ANTLER_COMM_YIELD", saved.c_str(), 1);
}
