// The clock's barrier (shell/detail/spin_barrier.hpp): nobody passes before everyone arrived, it is
// reusable round after round, and a thread that went to sleep is always woken (a lost wake-up
// would hang the case, and the watchdog in tests/support/watchdog.hpp ends it with its name).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "shell/detail/spin_barrier.hpp"
#include "tests/support/model.hpp"

using namespace antler;
using detail::SpinBarrier;

namespace {

/// T threads meet `rounds` times. Before each wait a thread counts itself in the round's arrival
/// counter and writes the round number into its own plain (non-atomic) slot; after the wait it
/// checks that all T arrived and that every slot holds this round (the barrier orders memory).
/// Slots alternate by round parity: a thread can only write round r+1's slots once everyone has
/// arrived at barrier r+1, i.e. finished reading round r-1's. Work between rounds varies per
/// thread, and now and then one thread is late by 200 us, so waits end both while spinning and
/// after sleeping. Returns the number of violations.
std::uint64_t stress(unsigned T, unsigned rounds, SpinBarrier::ns maxSpin,
                     SpinBarrier::ns yieldFor = SpinBarrier::kYieldFor) {
  SpinBarrier barrier(T, maxSpin, yieldFor);
  std::vector<std::atomic<unsigned>> arrived(rounds);
  std::vector<unsigned> slot[2] = {std::vector<unsigned>(T, ~0u), std::vector<unsigned>(T, ~0u)};
  std::atomic<std::uint64_t> violations{0};
  auto body = [&](unsigned t) {
    std::uint64_t x = 0x9E3779B97F4A7C15ull * (t + 1);
    for (unsigned r = 0; r < rounds; ++r) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift: a little work of varying length
      if (r % 128 == 0 && r / 128 % T == t)
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      else
        for (unsigned k = 0, n = static_cast<unsigned>(x % 512); k < n; ++k)
          asm volatile("" ::: "memory");  // kept: the compiler may not drop the loop
      arrived[r].fetch_add(1, std::memory_order_relaxed);
      slot[r % 2][t] = r;
      barrier.wait(t);
      std::uint64_t bad = arrived[r].load(std::memory_order_relaxed) != T;
      for (unsigned u = 0; u < T; ++u) bad += slot[r % 2][u] != r;
      if (bad) violations.fetch_add(bad, std::memory_order_relaxed);
    }
  };
  std::vector<std::thread> team;
  for (unsigned t = 1; t < T; ++t) team.emplace_back(body, t);
  body(0);
  for (auto& th : team) th.join();
  return violations.load();
}

}  // namespace

TEST_CASE("SpinBarrier: nobody passes early and nobody is left asleep, 1..8 threads") {
  // Threads of one process only: the 1-node runs of this program cover it. Under mpirun the
  // other ranks busy-poll for the driver's next command, and on 2 cores the case would take
  // minutes for nothing new.
  if (antler::test::runtime().numNodes() > 1) return;
  // 2 cores on the reference machine: from T = 3 on, threads outnumber cores.
  for (unsigned T = 1; T <= 8; ++T) {
    CAPTURE(T);
    // Spin then sleep (the clock's setting), and sleep at once (every wait takes the futex path,
    // so every round races a sleeper against the last arriver's wake-up).
    CHECK(stress(T, 4000, SpinBarrier::kMaxSpin) == 0);
    CHECK(stress(T, 4000, SpinBarrier::ns{0}, SpinBarrier::ns{0}) == 0);
  }
}

TEST_CASE("SpinBarrier: a wait its spin did not cover halves the waiter's spin budget") {
  if (antler::test::runtime().numNodes() > 1) return;  // as above
  SpinBarrier barrier(2);
  CHECK(barrier.budget(0) == SpinBarrier::kMaxSpin);
  CHECK(barrier.budget(1) == SpinBarrier::kMaxSpin);
  // Thread 1 arrives first; thread 0 arrives only once thread 1 has gone to sleep, so thread 1's
  // spin ran out (deterministically, however loaded the machine is).
  std::thread late([&] { barrier.wait(1); });
  while (barrier.sleeping() == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
  barrier.wait(0);
  late.join();
  CHECK(barrier.budget(1) == SpinBarrier::kMaxSpin / 2);
  CHECK(barrier.budget(0) == SpinBarrier::kMaxSpin);  // the last arriver does not wait
  CHECK(barrier.sleeping() == 0);
  // Halving stops at the floor.
  for (int k = 0; k < 40; ++k) {
    std::thread again([&] { barrier.wait(1); });
    while (barrier.sleeping() == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
    barrier.wait(0);
    again.join();
  }
  CHECK(barrier.budget(1) == SpinBarrier::kMinSpin);
}

TEST_CASE("the clock with more threads per node than cores gives the serial answer") {
  // 7 threads per node (28 at 4 nodes) on a 2-core machine: every barrier of every step has
  // threads that must sleep for others to run. Same model as the first case of test_clock.cpp.
  antler::test::Model m;
  Shell& s = m.s;
  const ObjId a = m.s.create("TestAdder", "/a", 20);
  const ObjId b = m.s.create("TestAdder", "/b", 20);
  m.s.addMsg("OneToOne", a, "out", b, "add");
  m.s.setClock(0, 0.25);
  m.s.useClock(0, "/a");
  m.s.useClock(0, "/b");
  std::vector<double> x(20);
  for (Index i = 0; i < 20; ++i) x[i] = 1.0 + i;
  Field<double>::setVec(s, a.id, "x", x);
  m.s.setNumThreads(7);
  m.s.reinit();
  m.s.start(25.0);  // 100 steps
  CHECK(m.s.currentTime() == doctest::Approx(25.0));
  for (Index i = 0; i < 20; ++i) {
    // Serially: each step /a[i] sends x[i] (its own sum stays 0), /b[i] folds sum = sum / 2 + v.
    double sum = 0;
    for (int k = 0; k < 100; ++k) sum = 0.5 * sum + x[i];
    CHECK(Field<unsigned>::get(s, ObjId(b.id, i), "count") == 100u);
    CHECK(Field<double>::get(s, ObjId(b.id, i), "sum") == sum);
  }
}
