// A small spiking network, written as if serial; run it with `mpirun -n 2 network`.
//
// 400 leaky integrate-and-fire cells, driven by one Drive element (OneToAll) and connected to
// each other at random (Sparse, 5%). Each spike adds a fixed weight to the targets' input.
// The program prints the spike count, the mean membrane potential and a checksum of every cell's
// spike count; the numbers are the same at any node and thread count.
#include <cmath>
#include <cstdio>
#include <numeric>

#include "core/class_builder.hpp"
#include "msg/src_finfo.hpp"
#include "shell/field.hpp"
#include "shell/runtime.hpp"

using namespace antler;

// ---- two element classes, one line per field ----

class Cell {
 public:
  inline static SrcFinfo<double> spikeOut{"spikeOut", "sends the spike time"};
  void process(const Eref& e, ProcPtr p) {
    Vm_ += input_ - p->dt * Vm_ / tau_;
    input_ = 0;
    if (Vm_ > thresh_) {
      spikeOut.send(e, p->currTime);
      Vm_ = 0;
      ++spikes_;
    }
  }
  void reinit(const Eref& e, ProcPtr) {
    Vm_ = 0.01 * (e.dataIndex() % 7);
    input_ = 0;
    spikes_ = 0;
  }
  void addInput(double w) { input_ += w; }
  void spike(double) { input_ += weight_; }
  static const Cinfo* initCinfo() {
    static const Cinfo* c = ClassBuilder<Cell>("Cell", "leaky integrate-and-fire cell")
                                .value("Vm", &Cell::Vm_, "membrane potential")
                                .value("tau", &Cell::tau_, "membrane time constant (s)")
                                .value("thresh", &Cell::thresh_, "spike threshold")
                                .value("weight", &Cell::weight_, "input added per incoming spike")
                                .readOnly("spikes", &Cell::spikes_, "spikes since reinit")
                                .dest<&Cell::addInput>("addInput", "adds to the next step's input")
                                .dest<&Cell::spike>("spike", "an incoming spike")
                                .src(spikeOut)
                                .proc<&Cell::process, &Cell::reinit>()
                                .build();
    return c;
  }

 private:
  double Vm_ = 0, tau_ = 0.02, thresh_ = 1.0, weight_ = 0.02, input_ = 0;
  unsigned spikes_ = 0;
};

class Drive {
 public:
  inline static SrcFinfo<double> output{"output", "the drive, each step"};
  void process(const Eref& e, ProcPtr p) {
    output.send(e, level_ * (1.0 + std::sin(40.0 * p->currTime)));
  }
  void reinit(const Eref&, ProcPtr) {}
  static const Cinfo* initCinfo() {
    static const Cinfo* c = ClassBuilder<Drive>("Drive", "a sinusoidally modulated drive")
                                .value("level", &Drive::level_, "mean drive per step")
                                .src(output)
                                .proc<&Drive::process, &Drive::reinit>()
                                .build();
    return c;
  }

 private:
  double level_ = 0.05;
};

static const Cinfo* registered[] = {Cell::initCinfo(), Drive::initCinfo()};

int main(int argc, char** argv) {
  Runtime rt(argc, argv);  // on ranks > 0 this serves the driver's commands and never returns
  Shell& s = rt.shell();

  const Index n = 400;
  s.create("Neutral", "/net");
  const ObjId cells = s.create("Cell", "/net/cells", n);
  const ObjId drive = s.create("Drive", "/net/drive");
  s.addMsg("OneToAll", drive, "output", cells, "addInput");
  const auto rec = s.addMsg("Sparse", cells, "spikeOut", cells, "spike");
  s.setRandomConnectivity(rec, 0.05, 42);

  std::vector<double> tau(n);
  for (Index i = 0; i < n; ++i) tau[i] = 0.01 + 0.02 * i / n;  // a spread of time constants
  Field<double>::setVec(s, cells.id, "tau", tau);

  s.setClock(0, 1e-3);
  s.useClock(0, "/net/drive");
  s.useClock(0, "/net/cells");
  s.reinit();
  s.start(0.2);

  const auto spikes = Field<unsigned>::getVec(s, cells.id, "spikes");
  const auto vm = Field<double>::getVec(s, cells.id, "Vm");
  const unsigned long total = std::accumulate(spikes.begin(), spikes.end(), 0ul);
  unsigned long checksum = 0;
  for (Index i = 0; i < n; ++i) checksum = checksum * 31 + spikes[i];
  std::printf("antler network example: %u cells, %d node(s), %u thread(s) per node\n", n,
              s.numNodes(), s.numThreads());
  std::printf("simulated %.3f s in steps of 1 ms\n", s.currentTime());
  std::printf("result: spikes=%lu mean_Vm=%.12f checksum=%lu\n", total,
              std::accumulate(vm.begin(), vm.end(), 0.0) / n, checksum);
  std::printf("most active cell: %ld with %u spikes\n",
              std::max_element(spikes.begin(), spikes.end()) - spikes.begin(),
              *std::max_element(spikes.begin(), spikes.end()));
  return rt.finish(0);
}
