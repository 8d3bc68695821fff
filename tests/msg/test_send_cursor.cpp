// The send cursor and the bulk send (msg/outbox.hpp, SrcFinfo::sendEach, proc_sending).
//
// A bulk sender (process returns the value, registered with proc_sending) and a per-object sender
// (process calls send) with the same values feed receivers that fold what they receive in an
// order-dependent way (TestAdder: sum = 0.5 sum + v). Every receiver is checked against a serial
// reference computed here from the connectivity, bit for bit, at 1, 2 and 3 threads (and, through
// ctest, 1 to 4 nodes), on the fast path (OneToOne), the per-record path (Sparse) and the
// multi-message path (OneToOne + OneToAll on one port). Enough objects that the cursor outgrows
// the room it reserves many times per step.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "core/class_builder.hpp"
#include "core/element.hpp"
#include "msg/msg.hpp"
#include "msg/src_finfo.hpp"
#include "tests/support/model.hpp"

using namespace antler;
using antler::test::Model;

namespace {

/// Value sent by object i at step s (s = 0, 1, ...): x_i + s, then, for the second argument, i.
double x_of(Index i) {
  return 1.0 + 0.37 * i;
}

/// Bulk: process returns x + k (k = steps so far) and counts the calls.
class CursorBulk {
 public:
  inline static SrcFinfo<double> out{"out", "x + k every step"};
  double process(const Eref&, ProcPtr) { return x_ + k_++; }
  void reinit(const Eref&, ProcPtr) { k_ = 0; }
  static const Cinfo* initCinfo() {
    static const Cinfo* c = ClassBuilder<CursorBulk>("TestCursorBulk", "bulk sender")
                                .value("x", &CursorBulk::x_)
                                .readOnly("k", &CursorBulk::k_)
                                .src(out)
                                .add(proc_sending<&CursorBulk::process, &CursorBulk::reinit>(out))
                                .build();
    return c;
  }
  double x_ = 0;
  double k_ = 0;
};

/// The same values, one send() per object.
class CursorEach {
 public:
  inline static SrcFinfo<double> out{"out", "x + k every step"};
  void process(const Eref& e, ProcPtr) { out.send(e, x_ + k_++); }
  void reinit(const Eref&, ProcPtr) { k_ = 0; }
  static const Cinfo* initCinfo() {
    static const Cinfo* c = ClassBuilder<CursorEach>("TestCursorEach", "per-object sender")
                                .value("x", &CursorEach::x_)
                                .src(out)
                                .proc<&CursorEach::process, &CursorEach::reinit>()
                                .build();
    return c;
  }
  double x_ = 0;
  double k_ = 0;
};

/// Bulk with two arguments (a tuple): (x + k, index).
class CursorPair {
 public:
  inline static SrcFinfo<double, unsigned> pair{"pair", "(x + k, index) every step"};
  std::tuple<double, unsigned> process(const Eref& e, ProcPtr) {
    return {x_ + k_++, e.dataIndex()};
  }
  void reinit(const Eref&, ProcPtr) { k_ = 0; }
  static const Cinfo* initCinfo() {
    static const Cinfo* c = ClassBuilder<CursorPair>("TestCursorPair", "bulk sender, two args")
                                .value("x", &CursorPair::x_)
                                .src(pair)
                                .add(proc_sending<&CursorPair::process, &CursorPair::reinit>(pair))
                                .build();
    return c;
  }
  double x_ = 0;
  double k_ = 0;
};

/// A bulk sender whose process breaks the rule: it sends on `other` itself. Or throws at failAt.
class CursorRude {
 public:
  inline static SrcFinfo<double> out{"out", "x"};
  inline static SrcFinfo<double> other{"other", "must not be sent from a bulk process"};
  double process(const Eref& e, ProcPtr) {
    if (static_cast<int>(e.dataIndex()) == failAt_)
      throw ValueError("CursorRude failed at entry " + std::to_string(failAt_));
    if (nosy_) other.send(e, 1.0);
    return x_;
  }
  void reinit(const Eref&, ProcPtr) {}
  static const Cinfo* initCinfo() {
    static const Cinfo* c = ClassBuilder<CursorRude>("TestCursorRude", "breaks the bulk rule")
                                .value("x", &CursorRude::x_)
                                .value("nosy", &CursorRude::nosy_)
                                .value("failAt", &CursorRude::failAt_)
                                .src(out)
                                .src(other)
                                .add(proc_sending<&CursorRude::process, &CursorRude::reinit>(out))
                                .build();
    return c;
  }
  double x_ = 0;
  int nosy_ = 0;
  int failAt_ = -1;
};

[[maybe_unused]] const Cinfo* reg[] = {CursorBulk::initCinfo(), CursorEach::initCinfo(),
                                       CursorPair::initCinfo(), CursorRude::initCinfo()};

/// Receiver j's inputs per step, in delivery order (source index order): rows[j] = sources.
using Inputs = std::vector<std::vector<Index>>;

/// TestAdder's fold over `steps` steps, each step adding x_of(i) + s for every source i in order.
std::vector<double> reference(const Inputs& in, int steps) {
  std::vector<double> sum(in.size(), 0.0);
  for (int s = 0; s < steps; ++s)
    for (std::size_t j = 0; j < in.size(); ++j)
      for (Index i : in[j]) sum[j] = 0.5 * sum[j] + (x_of(i) + s);
  return sum;
}

ObjId senders(Model& m, const char* cls, const std::string& path, Index n) {
  Shell& s = m.s;
  const ObjId o = m.s.create(cls, path, n);
  std::vector<double> x(n, 0.0);
  for (Index i = 0; i < n; ++i) x[i] = x_of(i);
  Field<double>::setVec(s, o.id, "x", x);
  m.s.useClock(0, path);
  return o;
}

/// Receivers (TestAdder), scheduled after the senders so that reinit zeroes their sums (they send
/// nothing anyone hears).
ObjId receivers(Model& m, const std::string& path, Index n) {
  const ObjId o = m.s.create("TestAdder", path, n);
  m.s.useClock(0, path);
  return o;
}

void check_sums(Id receivers, const std::vector<double>& want) {
  Shell& s = antler::test::runtime().shell();
  const std::vector<double> got = Field<double>::getVec(s, receivers, "sum");
  REQUIRE(got.size() == want.size());
  std::size_t bad = 0;
  for (std::size_t j = 0; j < want.size(); ++j)
    if (got[j] != want[j]) ++bad;
  CHECK_MESSAGE(bad == 0, antler::test::path(ObjId(receivers))
                              << ": " << bad << " receivers differ");
}

}  // namespace

TEST_CASE("bulk send and send cursor: every path, bit for bit against a serial reference") {
  Model m;
  Shell& s = m.s;
  const Index n = 3001;  // odd: uneven slices; 3001 x 8 bytes outgrows a 4 KiB reservation
  const int steps = 4;
  m.s.setClock(0, 1.0);
  const Index nm = 301;  // the multi-message senders (each reaches every one of nm + 7 receivers)
  Inputs oneToOne(n), sparse(n / 3), multi(nm);
  for (Index i = 0; i < n; ++i) oneToOne[i] = {i};

  for (const char* cls : {"TestCursorBulk", "TestCursorEach"}) {
    const std::string c(cls);
    // Fast path: OneToOne between data elements.
    const ObjId a = senders(m, cls, "/" + c + "_a", n);
    const ObjId ra = receivers(m, "/" + c + "_ra", n);
    m.s.addMsg("OneToOne", a, "out", ra, "add");
    // Per-record path: Sparse.
    const ObjId b = senders(m, cls, "/" + c + "_b", n);
    const ObjId rb = receivers(m, "/" + c + "_rb", n / 3);
    const std::uint32_t sp = m.s.addMsg("Sparse", b, "out", rb, "add");
    m.s.setRandomConnectivity(sp, 0.002, 77);
    // Multi-message path: OneToOne and OneToAll on one port.
    const ObjId d = senders(m, cls, "/" + c + "_d", nm);
    const ObjId rd = receivers(m, "/" + c + "_rd", nm);
    m.s.addMsg("OneToOne", d, "out", rd, "add");
    m.s.addMsg("OneToAll", d, "out", rd, "add");
    // Receivers that hear nothing still see every sender's process run (k counts the calls).
    const ObjId lone = senders(m, cls, "/" + c + "_lone", 17);

    if (c == "TestCursorBulk") {
      // Sparse inputs in delivery order, from the message's own matrix.
      const auto* msg = static_cast<const SparseMsg*>(m.s.msg(sp));
      for (Index i = 0; i < msg->numRows(); ++i) {
        auto [lo, hi] = msg->row(i);
        for (const Index* t = lo; t != hi; ++t) sparse[*t].push_back(i);
      }
      // OneToOne (one value from i) then OneToAll (every sender) per sender, sender by sender.
      for (Index i = 0; i < nm; ++i)
        for (Index j = 0; j < nm; ++j) {
          if (j == i) multi[j].push_back(i);
          multi[j].push_back(i);
        }
    }
    for (unsigned threads : {1u, 2u, 3u}) {
      CAPTURE(c);
      CAPTURE(threads);
      m.s.setNumThreads(threads);
      m.s.reinit();
      m.s.start(steps);
      check_sums(ra.id, reference(oneToOne, steps));
      check_sums(rb.id, reference(sparse, steps));
      check_sums(rd.id, reference(multi, steps));
      if (c == "TestCursorBulk")
        for (double k : Field<double>::getVec(s, lone.id, "k")) CHECK(k == steps);
    }
  }
}

TEST_CASE("bulk send with two arguments, and sends that continue a bulk batch") {
  Model m;
  const Index n = 1000;
  m.s.setClock(0, 1.0);
  const ObjId p = senders(m, "TestCursorPair", "/p", n);
  const ObjId r = receivers(m, "/r", n);
  m.s.addMsg("OneToOne", p, "pair", r, "addPair");  // sum += v * i
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    m.s.setNumThreads(threads);
    m.s.reinit();
    m.s.start(3);
    std::vector<double> want(n, 0.0);
    for (int s = 0; s < 3; ++s)
      for (Index i = 0; i < n; ++i) want[i] += (x_of(i) + s) * i;
    check_sums(r.id, want);
  }
}

TEST_CASE(
    "bulk send: a process that sends itself is an error naming the port; a throw keeps order") {
  Model m;
  Shell& s = m.s;
  const Index n = 40;
  m.s.setClock(0, 1.0);
  const ObjId o = senders(m, "TestCursorRude", "/rude", n);
  const ObjId r = receivers(m, "/r", n);
  const ObjId q = receivers(m, "/q", n);
  m.s.addMsg("OneToOne", o, "out", r, "add");
  m.s.addMsg("OneToOne", o, "other", q, "add");
  Field<int>::set(s, ObjId(o.id, 25), "nosy", 1);
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    m.s.setNumThreads(threads);
    m.s.reinit();
    try {
      m.s.start(2);
      FAIL("no error");
    } catch (const Error& e) {
      const std::string what = e.what();
      CHECK_MESSAGE(what.find("'out'") != std::string::npos, what);
      CHECK_MESSAGE(what.find("sent a message itself") != std::string::npos, what);
    }
  }
  // A process that throws part-way through the bulk loop: the run fails cleanly, and the next
  // run (nothing thrown) delivers exactly what a fresh run would.
  Field<int>::set(s, ObjId(o.id, 25), "nosy", 0);
  Field<int>::set(s, ObjId(o.id, 31), "failAt", 31);
  m.s.reinit();
  CHECK_THROWS_AS(m.s.start(2), ValueError);
  Field<int>::set(s, ObjId(o.id, 31), "failAt", -1);
  m.s.reinit();
  m.s.start(3);
  std::vector<double> want(n, 0.0);
  for (int s = 0; s < 3; ++s)
    for (Index i = 0; i < n; ++i) want[i] = 0.5 * want[i] + x_of(i);
  check_sums(r.id, want);
  for (double v : Field<double>::getVec(s, q.id, "sum")) CHECK(v == 0.0);
}
