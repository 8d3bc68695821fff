// The clock's per-Element hooks (core/proc_finfo.hpp, core/element.hpp): prepare runs once per
// scheduled Element before each run and before reinit, on one thread (outside the parallel
// region), with its tick's dt and the time the run starts at, before any process of the run;
// processBlock gets each thread's whole slice in one call; the ElementState that prepare sets
// lives as long as its Element and is not copied with it. At 1-3 threads here (1-4 nodes through
// ctest).
#include <doctest/doctest.h>
#include <omp.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "core/class_builder.hpp"
#include "core/element.hpp"
#include "core/error.hpp"
#include "tests/support/model.hpp"

using namespace antler;
using antler::test::Model;

namespace {

std::atomic<int> statesAlive{0};

struct Call {
  double dt, currTime;
  bool reinit, inParallel;
};

/// What TestBlock keeps for its Element: the prepare calls, and processBlock calls this run.
class BlockState final : public ElementState {
 public:
  BlockState() { ++statesAlive; }
  ~BlockState() override { --statesAlive; }
  std::vector<Call> calls;
  std::atomic<long> blocks{0};
};

class TestBlock {
 public:
  static void prepare(const DataElement* e, const ProcInfo& p, bool reinit) {
    auto* s = static_cast<BlockState*>(e->state());
    if (!s) {
      auto made = std::make_unique<BlockState>();
      s = made.get();
      e->setState(std::move(made));
    }
    s->calls.push_back({p.dt, p.currTime, reinit, omp_in_parallel() != 0});
    s->blocks = 0;
  }
  static void processBlock(const DataElement* e, Index lo, TestBlock* objs, Index n, ProcPtr p) {
    auto* s = static_cast<BlockState*>(e->state());
    // Runs on every node (the others serve node 0's commands, outside any test): no doctest here.
    if (!s) throw StateError("TestBlock: processed before prepare");
    ++s->blocks;
    for (Index i = 0; i < n; ++i) {
      objs[i].steps_ += 1;
      objs[i].time_ = p->currTime;
      objs[i].block_ = lo;
    }
  }
  void process(const Eref& e, ProcPtr p) {
    processBlock(static_cast<const DataElement*>(e.element()), e.dataIndex(), this, 1, p);
  }
  void reinit(const Eref&, ProcPtr) { steps_ = 0; }
  static const Cinfo* initCinfo() {
    static const Cinfo* c = ClassBuilder<TestBlock>("TestBlock", "prepare and processBlock")
                                .readOnly("steps", &TestBlock::steps_)
                                .readOnly("time", &TestBlock::time_)
                                .readOnly("block", &TestBlock::block_)
                                .proc<&TestBlock::process, &TestBlock::reinit>()
                                .build();
    return c;
  }

 private:
  double steps_ = 0, time_ = 0;
  unsigned block_ = 0;
};
[[maybe_unused]] const Cinfo* registered = TestBlock::initCinfo();

const BlockState* state_of(ObjId o) {
  return static_cast<const BlockState*>(
      static_cast<const DataElement*>(antler::test::element(o.id))->state());
}

}  // namespace

TEST_CASE(
    "prepare runs once per Element and run, on one thread, before process; processBlock "
    "gets whole slices") {
  for (unsigned threads : {1u, 2u, 3u}) {
    CAPTURE(threads);
    Model m;
    m.s.setNumThreads(threads);
    const Index n = 11;
    const double dt = 0.25;
    const ObjId a = m.s.create("TestBlock", "/a", n);
    m.s.setClock(0, dt);
    m.s.useClock(0, "/a");
    const int before = statesAlive;
    m.s.reinit();
    const BlockState* s = state_of(a);
    REQUIRE(s);
    CHECK(statesAlive == before + 1);
    REQUIRE(s->calls.size() == 1);
    CHECK(s->calls[0].reinit);
    CHECK(s->calls[0].dt == dt);
    CHECK(s->calls[0].currTime == 0.0);
    CHECK_FALSE(s->calls[0].inParallel);

    m.s.start(5 * dt);
    REQUIRE(s->calls.size() == 2);
    CHECK_FALSE(s->calls[1].reinit);
    CHECK(s->calls[1].currTime == 0.0);
    CHECK_FALSE(s->calls[1].inParallel);
    m.s.start(3 * dt);
    REQUIRE(s->calls.size() == 3);
    CHECK(s->calls[2].currTime == 5 * dt);

    // Each thread with entries made one call per step, starting at its slice.
    const DataElement* de = static_cast<const DataElement*>(antler::test::element(a.id));
    long withEntries = 0;
    std::vector<double> wantBlock(n);
    for (unsigned t = 0; t < threads; ++t) {
      auto [lo, hi] = thread_slice(de, t, threads);
      if (lo < hi) ++withEntries;
      for (Index i = lo; i < hi; ++i) wantBlock[i] = lo;
    }
    CHECK(s->blocks == 3 * withEntries);
    for (Index i = de->localBegin(); i < de->localEnd(); ++i) {
      CAPTURE(i);
      CHECK(Field<double>::get(m.s, ObjId(a.id, i), "steps") == 8);
      CHECK(Field<double>::get(m.s, ObjId(a.id, i), "time") == 8 * dt);
      CHECK(Field<unsigned>::get(m.s, ObjId(a.id, i), "block") == wantBlock[i]);
    }

    // A copy starts without the state (its first run prepares its own); deleting an Element
    // destroys its state.
    const ObjId b = m.s.copy(a, ObjId(Id::root()), "b");
    CHECK(state_of(b) == nullptr);
    m.s.destroy(a);
    CHECK(statesAlive == before);
  }
}
