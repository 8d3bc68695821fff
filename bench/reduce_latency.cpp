// bench/reduce_latency: what does one step cost when its only work is one Stats reduction?
//
// A near-empty model (one Stats object reducing the Vm of 2 objects per node) runs many steps;
// the time per step includes the clock round (three barriers, the message exchange that carries
// the reduction request) and the reduce path (primary, secondary, one allgather of the partials,
// tertiary, digest). The baseline, timed in the same program on the same ranks, is a raw
// MPI_Allreduce of 3 doubles (what a hand-written code would do for count/sum/sum of squares).
// The goal is a ratio <= 1.3 (issue 23; 1.5 before it). Run it at -n 2: `mpirun -n 2 reduce_latency
// [steps]`.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench/machine.hpp"
#include "core/comm/mpi.hpp"
#include "models/stats.hpp"
#include "msg/post_office.hpp"
#include "reduce/reduce_queue.hpp"
#include "shell/field.hpp"
#include "shell/runtime.hpp"

using namespace antler;

namespace {

using WallClock = std::chrono::steady_clock;

class Dot {
 public:
  void process(const Eref&, ProcPtr) {}
  void reinit(const Eref&, ProcPtr) {}
  static const Cinfo* initCinfo() {
    static const Cinfo* c =
        ClassBuilder<Dot>("LatencyDot", "one value").value("Vm", &Dot::Vm_).build();
    return c;
  }
  double Vm_ = 1;
};
const Cinfo* registered = Dot::initCinfo();

// Runs on every node (a Shell extension command, so all ranks take part): `iters` raw
// MPI_Allreduce calls of 3 doubles; replies with this node's seconds per call.
void allreduce_loop(Simulation& sim, Reader& r, Writer& w) {
  const auto iters = r.get<int>();
  // The raw baseline runs on a duplicate of antler's own communicator.
  antler::comm::Comm dup = sim.shell().comm().dup();
  MPI_Comm world = antler::comm::mpi_handle(dup);
  double in[3] = {1, 2, 3}, out[3];
  MPI_Barrier(world);
  const auto t = WallClock::now();
  for (int i = 0; i < iters; ++i) {
    in[0] += out[0] * 1e-300;  // keep the loop honest
    MPI_Allreduce(in, out, 3, MPI_DOUBLE, MPI_SUM, world);
  }
  w.put<double>(std::chrono::duration<double>(WallClock::now() - t).count() / iters);
  // For context: the one collective antler's step makes, an MPI_Allgather of 128-byte blocks.
  int P = 1;
  MPI_Comm_size(world, &P);
  std::vector<char> mine(128, 1), all(128 * static_cast<std::size_t>(P));
  MPI_Barrier(world);
  const auto t2 = WallClock::now();
  for (int i = 0; i < iters; ++i)
    MPI_Allgather(mine.data(), 128, MPI_BYTE, all.data(), 128, MPI_BYTE, world);
  w.put<double>(std::chrono::duration<double>(WallClock::now() - t2).count() / iters);
}
const bool reg = (Shell::registerCommand("bench.allreduce", &allreduce_loop), true);

}  // namespace

int main(int argc, char** argv) {
  bench::print_machine();
  Runtime rt(argc, argv);
  Shell& s = rt.shell();
  const int steps = argc > 1 ? std::atoi(argv[1]) : 20000;
  s.setNumThreads(1);
  const ObjId dots = s.create("LatencyDot", "/dots", static_cast<Index>(2 * s.numNodes()));
  const ObjId stats = s.create("Stats", "/stats");
  s.addMsg("Reduce", stats, "reduce", dots, "getVm");
  s.setClock(0, 1e-3);
  s.useClock(0, "/stats");
  s.reinit();

  std::printf(
      "Question: time per step of a model whose only work is one Stats reduction, at %d node(s),\n"
      "next to a raw MPI_Allreduce of 3 doubles in the same program.\n\n",
      s.numNodes());
  double bestA = 1e300, bestB = 1e300, bestC = 1e300;
  // Calls into the communicators of the exchange and of the reduce queue (a vendor collective
  // counts as one message on the MPI backend), per step: the one-collective steady state.
  const PostOffice& po = rt.simulation().post();
  comm::Comm& rq = rt.simulation().reduces().comm();
  double callsPerStep = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const auto calls0 = po.messagesSent() + rq.stats().messagesSent;
    const auto t = WallClock::now();
    s.start(steps * 1e-3);
    bestA = std::min(bestA, std::chrono::duration<double>(WallClock::now() - t).count() / steps);
    callsPerStep =
        static_cast<double>(po.messagesSent() + rq.stats().messagesSent - calls0) / steps;
    ByteBuffer a;
    Writer(a).put<int>(steps);
    const auto replies = s.dispatchExtension("bench.allreduce", a);
    Reader r(replies[0]);
    bestB = std::min(bestB, r.get<double>());
    bestC = std::min(bestC, r.get<double>());
  }
  const bool ok = Field<unsigned>::get(s, stats, "num") == 2u * s.numNodes() &&
                  Field<double>::get(s, stats, "mean") == 1.0;
  std::printf("%-40s %10.2f us\n", "antler step with one Stats reduction", bestA * 1e6);
  std::printf("%-40s %10.2f us\n", "raw MPI_Allreduce (3 doubles)", bestB * 1e6);
  std::printf("%-40s %10.2f   (goal <= 1.3)\n", "ratio", bestA / bestB);
  std::printf("%-40s %10.3f   (per node; 1 = the exchange only)\n", "communication calls per step",
              callsPerStep);
  std::printf("%-40s %10.2f us  (context: the one collective a step makes)\n",
              "raw MPI_Allgather (128-byte blocks)", bestC * 1e6);
  const ExchangeStats& xs = rt.simulation().post().exchangeStats();
  std::printf("%-40s %10s   (point-to-point rounds: %llu run, %llu skipped)\n", "exchange mode",
              to_string(rt.simulation().post().exchangeMode()),
              static_cast<unsigned long long>(xs.forestRounds),
              static_cast<unsigned long long>(xs.forestRoundsSkipped));
  std::printf("Stats result correct (num=%u, mean=1): %s\n", 2u * s.numNodes(), ok ? "yes" : "NO");
  return rt.finish(ok ? 0 : 1);
}
