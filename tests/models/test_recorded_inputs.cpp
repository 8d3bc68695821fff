// TimeTable and StimulusTable against closed forms: which step each event time goes out in (by
// the rule (t_{n-1}, t_n] evaluated here in integers), the times sent, and the stimulus value at
// every step (positions and interpolation computed here independently). The same source runs at
// 1-4 nodes x 1-2 threads: the entries are spread over the nodes.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "core/error.hpp"
#include "tests/support/model.hpp"

using namespace antler;
using antler::test::Model;

TEST_CASE("TimeTable sends each time in the step it falls in, in order, with its own value") {
  Model m;
  Shell& s = m.s;
  const double dt = 1e-4;  // not a power of two: times meant to be n * dt land a few ulps off
  // Per entry: times as step counts k (time k * dt, written as a product the way a user would)
  // plus some times strictly inside steps (k + 0.5) * dt, duplicates, and times at or before 0.
  const std::vector<std::vector<double>> steps{
      {-1.0, 0.0, 1.0, 1.0, 3.0, 3.5, 7.25, 10.0}, {2.0, 2.0, 2.0}, {}, {0.5, 4.0, 4.0, 9.999}};
  const Index n = static_cast<Index>(steps.size());
  const ObjId tt = m.s.create("TimeTable", "/tt", n);
  const ObjId got = m.s.create("Table", "/got", n);      // the times sent (pushed)
  const ObjId state = m.s.create("Table", "/state", n);  // state each step (pulled)
  std::vector<std::vector<double>> times(n);
  for (Index i = 0; i < n; ++i) {
    for (double k : steps[i]) times[i].push_back(k * dt);
    Field<std::vector<double>>::set(s, ObjId(tt.id, i), "vector", times[i]);
    m.s.addMsg("Single", ObjId(state.id, i), "requestOut", ObjId(tt.id, i), "getState");
  }
  m.s.addMsg("OneToOne", tt, "eventOut", got, "input");
  m.s.setClock(0, dt);
  for (const char* path : {"/tt", "/got", "/state"}) m.s.useClock(0, path);

  const long nsteps = 9;  // the times at 9.999 and 10 steps stay unsent
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    m.s.setNumThreads(threads);
    for (int run = 0; run < 2; ++run) {  // a second reinit rewinds
      m.s.reinit();
      m.s.start(nsteps * dt);
      for (Index i = 0; i < n; ++i) {
        CAPTURE(i);
        // Step of time k * dt: the first n >= 1 with k <= n, i.e. max(1, ceil(k)).
        std::vector<double> wantState(nsteps + 1, 0.0), wantTimes;
        for (std::size_t j = 0; j < steps[i].size(); ++j) {
          const long s = std::max(1L, static_cast<long>(std::ceil(steps[i][j])));
          if (s > nsteps) continue;
          wantState[s] = 1.0;
          wantTimes.push_back(times[i][j]);
        }
        CHECK(Field<std::vector<double>>::get(s, ObjId(got.id, i), "vector") == wantTimes);
        CHECK(Field<std::vector<double>>::get(s, ObjId(state.id, i), "vector") == wantState);
      }
    }
  }
}

TEST_CASE("TimeTable refuses a vector that is not sorted or holds NaN, and keeps its own") {
  Model m;
  Shell& s = m.s;
  const ObjId tt = m.s.create("TimeTable", "/tt", 3);
  const std::vector<double> good{0.1, 0.2, 0.2, 0.5};
  Field<std::vector<double>>::set(s, ObjId(tt.id, 1), "vector", good);
  for (const std::vector<double>& bad :
       {std::vector<double>{0.3, 0.1}, std::vector<double>{0.1, NAN}}) {
    try {
      Field<std::vector<double>>::set(s, ObjId(tt.id, 1), "vector", bad);
      FAIL("an unsorted or NaN vector was accepted");
    } catch (const ValueError& e) {
      const std::string what = e.what();
      CHECK(what.find("TimeTable.vector") != std::string::npos);
      CHECK(what.find("entry 1") != std::string::npos);
    }
    CHECK(Field<std::vector<double>>::get(s, ObjId(tt.id, 1), "vector") == good);
    CHECK(Field<unsigned>::get(s, ObjId(tt.id, 1), "size") == 4u);
  }
}

namespace {
// The vector read at x, as MOOSE 4's TableBase::interpolate computes it (builtins/TableBase.cpp),
// written here from its rule, not from the class.
double lookup(const std::vector<double>& v, double start, double stop, double x) {
  if (v.size() == 1 || x < start || start >= stop) return v.front();
  if (x > stop) return v.back();
  const double xdivs = static_cast<double>(v.size() - 1);
  const double fraction = (x - start) / (stop - start);
  const auto j = static_cast<std::size_t>(xdivs * fraction);
  if (j >= v.size() - 1) return v.back();
  const double dx = (stop - start) / xdivs;
  return v[j] + (v[j + 1] - v[j]) * ((x - (start + j * dx)) / dx);
}
}  // namespace

TEST_CASE("StimulusTable plays its vector by steps or by time, once or looping") {
  Model m;
  Shell& s = m.s;
  const double dt = 1.0 / 1024;  // powers of two: positions and times are exact
  const std::vector<double> v{1.0, -2.0, 4.0, 8.0, 0.5};
  struct Case {
    double stepSize, start, stop, loopTime;
    bool loop;
  };
  const std::vector<Case> cases{
      {1.0, 0.0, 4.0, 0.0, false},         // one entry per step, then the last held
      {0.25, 0.0, 4.0, 0.0, false},        // one entry per 4 steps, interpolated between
      {0.25, 1.0, 3.0, 2.5, true},         // a window of the position, looping past 2.5
      {0.0, 2 * dt, 12 * dt, 0.0, false},  // by time: entries at 2, 4.5, 7, 9.5, 12 steps
      {0.0, 0.0, 8 * dt, 10 * dt, true},   // by time, looping every 10 steps
  };
  const Index n = static_cast<Index>(cases.size());
  const ObjId st = m.s.create("StimulusTable", "/st", n);
  const ObjId tab = m.s.create("Table", "/tab", n);
  for (Index i = 0; i < n; ++i) {
    const ObjId o(st.id, i);
    Field<std::vector<double>>::set(s, o, "vector", v);
    Field<double>::set(s, o, "stepSize", cases[i].stepSize);
    Field<double>::set(s, o, "startTime", cases[i].start);
    Field<double>::set(s, o, "stopTime", cases[i].stop);
    Field<double>::set(s, o, "loopTime", cases[i].loopTime);
    Field<bool>::set(s, o, "doLoop", cases[i].loop);
    m.s.addMsg("Single", ObjId(tab.id, i), "requestOut", o, "getOutputValue");
  }
  antler::test::set_base_dt(s, dt);
  m.s.setClock(0, dt);
  m.s.useClock(0, "/st");
  m.s.useClock(0, "/tab");
  const long nsteps = 30;
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    m.s.setNumThreads(threads);
    m.s.reinit();
    m.s.start(nsteps * dt);
    for (Index i = 0; i < n; ++i) {
      CAPTURE(i);
      const Case& c = cases[i];
      std::vector<double> want{lookup(v, c.start, c.stop, 0.0)};
      for (long s = 1; s <= nsteps; ++s) {
        // MOOSE's position: s stepSize (summed step by step), or the time; past
        // start + loopTime, read loopTime floor((x - start) / loopTime) earlier.
        double x = 0.0;
        if (c.stepSize > 0)
          for (long k = 0; k < s; ++k) x += c.stepSize;
        else
          x = s * dt;
        if (c.loop && x > c.start + c.loopTime)
          x -= c.loopTime * std::floor((x - c.start) / c.loopTime);
        want.push_back(lookup(v, c.start, c.stop, x));
      }
      CHECK(Field<std::vector<double>>::get(s, ObjId(tab.id, i), "vector") == want);
    }
  }
  // One entry per step: step s sends v[s] (and the last entry once past the end).
  const auto first = Field<std::vector<double>>::get(s, ObjId(tab.id, 0), "vector");
  CHECK(first[0] == 1.0);
  CHECK(first[3] == 8.0);
  CHECK(first[10] == 0.5);
  // One entry per 4 steps: step 2 is halfway from v[0] to v[1].
  CHECK(Field<std::vector<double>>::get(s, ObjId(tab.id, 1), "vector")[2] == -0.5);
}
