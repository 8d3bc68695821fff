// Ranks that disagree on the sequence of collectives: rank 1 broadcasts from another root, or
// reduces where the others broadcast, then every rank runs one all-reduce. The disagreement must
// be a CommError naming both collectives (kind, root, sequence), on the Local backend at
// P = 3, 8, 64 and on MPI at every rank count of the comm.np* runs, never a hang (the watchdog
// of tests/comm/main.cpp ends a stuck run) and never Local's deadlock verdict.
#include <doctest/doctest.h>

#include <mutex>
#include <string>
#include <vector>

#include "core/comm/collectives.hpp"
#include "core/comm/local.hpp"
#include "core/comm/mpi.hpp"
#include "core/error.hpp"

using namespace antler;
using namespace antler::comm;

namespace {

enum class Odd { root, reduce };

struct Outcome {
  bool threw = false, mismatch = false;
  std::string what;
};

// Every rank but 1 broadcasts 40 bytes from root 0 by `a`; rank 1 broadcasts from root 1, or
// reduces to root 0; then all run a recursive-doubling all-reduce.
Outcome run_odd(Comm& c, Odd odd, Algorithm a) {
  Outcome out;
  try {
    std::vector<char> data(40, static_cast<char>(c.rank()));
    if (c.rank() == 1 && odd == Odd::root)
      algo::broadcast(c, data, 1, Options{a, 2});
    else if (c.rank() == 1 && odd == Odd::reduce)
      (void)reduce(c, static_cast<long>(c.rank()), ops::sum{}, 0, {Algorithm::binomial});
    else
      algo::broadcast(c, data, 0, Options{a, 2});
    (void)allreduce(c, static_cast<long>(c.rank()), ops::sum{}, {Algorithm::recursive_doubling});
  } catch (const CollectiveMismatch& e) {
    out = {true, true, e.what()};
  } catch (const CommError& e) {
    out = {true, false, e.what()};
  }
  return out;
}

// The two calls that disagree, as the error text names them.
std::pair<std::string, std::string> names(Odd odd, Algorithm a) {
  const std::string others = "broadcast #0 (root 0, " + std::string(to_string(a)) + ")";
  if (odd == Odd::root) return {others, "broadcast #0 (root 1, " + std::string(to_string(a)) + ")"};
  return {others, "reduce #0 (root 0, binomial)"};
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("Local: a rank that runs another collective is a named CommError, not a deadlock") {
  if (Comm::world().size() != 1) return;
  for (int P : {3, 8, 64}) {
    for (Odd odd : {Odd::root, Odd::reduce}) {
      for (Algorithm a : {Algorithm::binomial, Algorithm::linear_pipeline, Algorithm::fibonacci,
                          Algorithm::scatter_allgather}) {
        CAPTURE(P);
        CAPTURE(odd == Odd::root ? "another root" : "a reduce");
        CAPTURE(to_string(a));
        std::vector<Outcome> out(static_cast<std::size_t>(P));
        run_local(P,
                  [&](Comm& c) { out[static_cast<std::size_t>(c.rank())] = run_odd(c, odd, a); });
        const auto [ours, theirs] = names(odd, a);
        bool named = false;
        int threw = 0;
        for (auto& o : out) {
          CHECK_FALSE(contains(o.what, "deadlock"));
          threw += o.threw;
          named = named || (o.mismatch && contains(o.what, ours) && contains(o.what, theirs) &&
                            contains(o.what, "rank 1"));
        }
        CHECK(named);  // some rank names both calls and the odd rank
        CHECK(threw >= 1);
        // Whoever stopped says why: a mismatch, or a notice that quotes one.
        for (auto& o : out)
          if (o.threw) CHECK(contains(o.what, "collective mismatch"));
      }
    }
  }
}

TEST_CASE("Local: the mismatch error carries both calls as fields") {
  if (Comm::world().size() != 1) return;
  std::mutex mu;
  std::vector<CollectiveMismatch> seen;
  run_local(2, [&](Comm& c) {
    try {
      // Rank 0 all-reduces while rank 1 gathers to rank 0: rank 0 receives rank 1's gather
      // message in its all-reduce.
      if (c.rank() == 0)
        (void)allreduce(c, 1L, ops::sum{}, {Algorithm::recursive_doubling});
      else
        (void)gather(c, 1L, 0, {Algorithm::binomial});
      (void)allreduce(c, 1L, ops::sum{}, {Algorithm::recursive_doubling});
    } catch (const CollectiveMismatch& e) {
      std::lock_guard<std::mutex> g(mu);
      if (e.rank == 0) seen.push_back(e);
    } catch (const CommError&) {
    }
  });
  REQUIRE(seen.size() == 1);
  const CollectiveMismatch& e = seen.front();
  CHECK(e.peer == 1);
  CHECK(e.mine == CallInfo{Collective::allreduce, Algorithm::recursive_doubling, -1, 0});
  CHECK(e.theirs == CallInfo{Collective::gather, Algorithm::binomial, 0, 0});
  CHECK(std::string(e.what()) ==
        "collective mismatch: rank 1 sent rank 0 a message of gather #0 (root 0, binomial), but "
        "rank 0 is in allreduce #0 (recursive_doubling): the ranks called different collectives");
}

TEST_CASE("MPI: a rank that runs another collective is a named CommError on a real MPI, no hang") {
  Comm world = Comm::world();
  const int P = world.size();
  if (P < 2) return;
  auto any = [&](bool mine) {
    int in = mine, out = 0;
    MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LOR, mpi_handle(world));
    return out != 0;
  };
  for (Odd odd : {Odd::root, Odd::reduce}) {
    for (Algorithm a : {Algorithm::binomial, Algorithm::linear_pipeline, Algorithm::fibonacci}) {
      CAPTURE(odd == Odd::root ? "another root" : "a reduce");
      CAPTURE(to_string(a));
      // Stray messages stay on this communicator: it is never used again, nor freed.
      static std::vector<Comm> spoilt;
      spoilt.push_back(world.dup());
      const Outcome o = run_odd(spoilt.back(), odd, a);
      const auto [ours, theirs] = names(odd, a);
      const bool named = o.mismatch && contains(o.what, ours) && contains(o.what, theirs) &&
                         contains(o.what, "rank 1");
      // Reaching here on every rank means no rank hung; some rank names both calls.
      CHECK(any(named));
      CHECK(!any(o.threw && !contains(o.what, "collective mismatch")));
    }
  }
}
