// comm::cores_per_rank and threads_exceed_cores count the cores the process may use, also under
// OpenMP binding: OMP_PROC_BIND (or OMP_PLACES alone) makes the runtime bind the initial thread to
// its first place as the program starts, so that thread's own affinity mask is one place. ctest's
// comm.ompbind runs this case with OMP_PROC_BIND=spread OMP_PLACES=cores (and
// ANTLER_EXPECT_OMP_BIND=1, so that a runtime that ignored them fails the case instead of passing
// it unbound); every other comm run checks the unbound count.
#include <doctest/doctest.h>
#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/comm/comm.hpp"

using namespace antler::comm;

namespace {
/// Unsets an environment variable for a scope, then restores it.
struct Unset {
  explicit Unset(const char* name) : name_(name) {
    if (const char* v = std::getenv(name)) {
      had_ = true;
      was_ = v;
    }
    unsetenv(name);
  }
  ~Unset() {
    if (had_) setenv(name_, was_.c_str(), 1);
  }
  const char* name_;
  bool had_ = false;
  std::string was_;
};
}  // namespace

TEST_CASE("cores_per_rank: the process's cores, also when OpenMP has bound the initial thread") {
  const Unset cores("ANTLER_CORES_PER_RANK"), yield("ANTLER_COMM_YIELD");
  cpu_set_t mine;
  REQUIRE(sched_getaffinity(0, sizeof mine, &mine) == 0);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  long mask = CPU_COUNT(&mine);
  const bool bound = omp_get_proc_bind() != omp_proc_bind_false;
  if (std::getenv("ANTLER_EXPECT_OMP_BIND")) REQUIRE(bound);
  if (bound) {
    // The processors the runtime found when the program started: this thread's mask is now one
    // place of them.
    mask = omp_get_num_procs();
    CHECK((CPU_COUNT(&mine) < mask || mask == 1));
  }
  long ranks = 1;
  if (const char* v = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE")) ranks = std::max(1L, std::atol(v));
  const long want = mask < online ? mask : std::max(1L, online / ranks);
  CAPTURE(bound);
  CAPTURE(mask);
  CAPTURE(online);
  CAPTURE(ranks);
  CHECK(static_cast<long>(cores_per_rank()) == want);
  // More threads than cores: a bound rank's own, else the machine's for all its ranks together.
  for (long t : {1L, want, want + 1, 2 * online}) {
    CAPTURE(t);
    CHECK(threads_exceed_cores(static_cast<unsigned>(t)) ==
          (mask < online ? t > mask : ranks * t > online));
  }
}
