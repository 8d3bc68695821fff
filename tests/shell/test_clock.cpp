// The clock: tick strides, time, scheduling errors, errors raised during a run.
#include <doctest/doctest.h>

#include <chrono>

#include "tests/support/model.hpp"

using namespace antler;
using antler::test::Model;

TEST_CASE("ticks run at their own dt and time advances by the base dt") {
  Model m;
  Shell& s = m.s;
  const ObjId a = m.s.create("TestAdder", "/a", 5);
  const ObjId b = m.s.create("TestAdder", "/b", 5);
  const ObjId c = m.s.create("TestAdder", "/c", 5);
  const ObjId d = m.s.create("TestAdder", "/d", 5);
  m.s.addMsg("OneToOne", a, "out", b, "add");
  m.s.addMsg("OneToOne", c, "out", d, "add");
  m.s.setClock(3, 0.25);
  m.s.setClock(7, 1.0);
  m.s.useClock(3, "/a");
  m.s.useClock(3, "/b");
  m.s.useClock(7, "/c");
  m.s.useClock(7, "/d");
  m.s.reinit();
  CHECK(m.s.currentTime() == 0.0);
  m.s.start(3.0);  // 12 base steps: a runs 12 times, c 3 times
  CHECK(m.s.currentTime() == doctest::Approx(3.0));
  CHECK(Field<unsigned>::get(s, ObjId(b.id, 4), "count") == 12u);
  CHECK(Field<unsigned>::get(s, ObjId(d.id, 4), "count") == 3u);
  m.s.start(1.0);  // continues from 3.0
  CHECK(m.s.currentTime() == doctest::Approx(4.0));
  CHECK(Field<unsigned>::get(s, ObjId(b.id, 0), "count") == 16u);
  CHECK(Field<unsigned>::get(s, ObjId(d.id, 0), "count") == 4u);
  m.s.reinit();
  CHECK(Field<unsigned>::get(s, ObjId(b.id, 0), "count") == 0u);
}

TEST_CASE("clock commands reject bad input and change nothing") {
  Model m;
  m.s.create("TestAdder", "/a", 2);
  m.s.create("Neutral", "/n");
  m.s.create("TestReceiver", "/r", 2);
  CHECK_THROWS_AS(m.s.setClock(32, 0.1), IndexError);
  CHECK_THROWS_AS(m.s.setClock(0, 0.0), ValueError);
  CHECK_THROWS_AS(m.s.setClock(0, -1.0), ValueError);
  CHECK_THROWS_AS(m.s.useClock(40, "/a"), IndexError);
  CHECK_THROWS_AS(m.s.useClock(0, "/nothing"), PathError);
  CHECK_THROWS_AS(m.s.useClock(0, "/n"), FieldError);  // Neutral has no process
  CHECK_THROWS_AS(m.s.useClock(0, "/r/syn"), FieldError);
  CHECK_THROWS_AS(m.s.useClock(0, "/a", "init"), FieldError);
  CHECK_THROWS_AS(m.s.start(-1.0), ValueError);
  CHECK_THROWS_AS(m.s.setNumThreads(0), ValueError);
}

TEST_CASE("an exception in process ends the run on every node and reaches the driver") {
  Model m;
  Shell& s = m.s;
  const ObjId f = m.s.create("TestFaulty", "/f", 8);
  Field<int>::set(s, ObjId(f.id, 6), "failAt", 6);  // entry 6 lives on the last node when split
  m.s.setClock(0, 1.0);
  m.s.useClock(0, "/f");
  for (unsigned threads : {1u, 2u}) {
    m.s.setNumThreads(threads);
    m.s.reinit();
    try {
      m.s.start(5);
      FAIL("no error");
    } catch (const ValueError& e) {
      CHECK(std::string(e.what()).find("failed at entry 6") != std::string::npos);
    }
  }
  // The model is still usable afterwards: nothing hangs, commands still work everywhere.
  Field<int>::set(s, ObjId(f.id, 6), "failAt", -1);
  m.s.reinit();
  m.s.start(3);
  CHECK(m.s.currentTime() == doctest::Approx(3.0));
}

TEST_CASE("stop() from a process function ends the run on every node at the end of that step") {
  Model m;
  Shell& s = m.s;
  const ObjId st = m.s.create("TestStopper", "/stop", 5);
  const ObjId a = m.s.create("TestAdder", "/a", 5);
  const ObjId b = m.s.create("TestAdder", "/b", 5);
  m.s.addMsg("OneToOne", a, "out", b, "add");
  Field<double>::set(s, ObjId(st.id, 4), "stopAt", 3.0);  // the last entry: on the last node
  m.s.setClock(0, 1.0);
  m.s.useClock(0, "/##[TYPE=TestStopper]");
  m.s.useClock(0, "/a");
  m.s.useClock(0, "/b");
  m.s.reinit();
  m.s.start(10.0);
  CHECK(m.s.currentTime() == doctest::Approx(3.0));
  CHECK(Field<unsigned>::get(s, ObjId(b.id, 0), "count") == 3u);  // three whole steps, then stop
  Field<double>::set(s, ObjId(st.id, 4), "stopAt", 1e300);
  m.s.start(2.0);  // the next start runs normally
  CHECK(m.s.currentTime() == doctest::Approx(5.0));
  m.s.stop();  // not running: nothing to stop
}

TEST_CASE("phase timers account for a run's rounds, phase by phase and Element by Element") {
  Model m;
  Shell& s = m.s;
  Clock& clock = m.sim.clock();
  const unsigned n = 20000;
  const ObjId a = s.create("TestAdder", "/a", n);
  const ObjId b = s.create("TestAdder", "/b", n);
  s.addMsg("OneToOne", a, "out", b, "add");
  s.setClock(0, 1.0);
  s.useClock(0, "/a");
  s.useClock(0, "/b");
  const auto count_sum = [&] {
    std::uint64_t c = 0;
    for (unsigned i = 0; i < n; i += 997) c += Field<unsigned>::get(s, ObjId(b.id, i), "count");
    return c;
  };
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    s.setNumThreads(threads);
    clock.setPhaseTimers(false);
    s.reinit();
    s.start(30);
    const std::uint64_t untimed = count_sum();
    CHECK(clock.phaseTimes().rounds == 0);  // off: nothing counted

    clock.setPhaseTimers(true);
    s.reinit();  // a reinit's round is not counted
    CHECK(clock.phaseTimes().rounds == 0);
    const auto t0 = std::chrono::steady_clock::now();
    s.start(30);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(count_sum() == untimed);  // the same results

    const PhaseTimes& pt = clock.phaseTimes();
    CHECK(pt.rounds == 30);
    REQUIRE(pt.threads.size() == Clock::workers(threads));
    // Each Element once, in schedule order, its time > 0; together the threads' process time.
    REQUIRE(pt.elements.size() == 2);
    CHECK(pt.elements[0].first == a.id);
    CHECK(pt.elements[1].first == b.id);
    double process = 0, elements = 0;
    for (const auto& t : pt.threads) process += t.process;
    for (const auto& [id, sec] : pt.elements) {
      CHECK(sec > 0.0);
      elements += sec;
    }
    CHECK(elements == doctest::Approx(process).epsilon(1e-9));
    // The master's phases cover the rounds: within the run's wall time, and on one node most
    // of it (on several, oversubscribed, the collectives that begin and end a run, outside the
    // rounds, may wait out another rank's time slice).
    const PhaseTimes::Phases& master = pt.threads[0];
    CHECK(master.deliver > 0.0);
    CHECK(master.total() <= wall);
    if (antler::test::runtime().numNodes() == 1) CHECK(master.total() >= 0.5 * wall);

    // They add up across runs, and turning them on again starts from zero.
    const double before = master.total();
    s.start(10);
    CHECK(clock.phaseTimes().rounds == 40);
    CHECK(clock.phaseTimes().threads[0].total() > before);
    clock.setPhaseTimers(true);
    CHECK(clock.phaseTimes().rounds == 0);
    CHECK(clock.phaseTimes().elements.empty());
  }
  // A deleted Element leaves the list (its Id may be reused); clearing the model zeroes it all.
  s.reinit();
  s.start(3);
  REQUIRE(clock.phaseTimes().elements.size() == 2);
  s.destroy(b);
  REQUIRE(clock.phaseTimes().elements.size() == 1);
  CHECK(clock.phaseTimes().elements[0].first == a.id);
  CHECK(clock.phaseTimes().rounds == 3);
  s.clearModel();
  CHECK(clock.phaseTimes().rounds == 0);
  CHECK(clock.phaseTimes().threads.empty());
  CHECK(clock.phaseTimers());
  clock.setPhaseTimers(false);
}
