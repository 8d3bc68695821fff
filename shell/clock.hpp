#pragma once
/// The Clock: numbered ticks, each with its own dt and the Elements it processes, and the
/// three-barrier step that runs them on OpenMP threads and MPI nodes.
#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

#include "core/id.hpp"

namespace antler {

/// The scheduler. One per process; every node runs the same steps in lockstep.
class Clock {
 public:
  static constexpr unsigned kNumTicks = 32;
  static Clock& instance();

  /// Sets tick's dt (> 0). Ticks with dt 0 are unused.
  void setTickDt(unsigned tick, double dt);
  double tickDt(unsigned tick) const { return dt_[tick]; }
  /// Adds e to the tick (in call order; no duplicates).
  void addElement(unsigned tick, Id e);
  /// Removes e from every tick (when it is deleted).
  void dropElement(Id e);
  /// Elements scheduled on a tick.
  const std::vector<Id>& elements(unsigned tick) const { return elements_[tick]; }
  /// Unschedules everything and resets dts to 0 and time to 0.
  void clear();

  /// Drops sends still queued from the previous run, calls reinit on every scheduled Element
  /// (tick order), delivers what reinit sent, and resets time to 0.
  void reinit();
  /// Runs round(runtime / base dt) steps, where base dt is the smallest dt in use.
  void start(double runtime);
  /// Asks a running clock to stop at the end of the current step (callable from process).
  void requestStop() { stopRequested_.store(true, std::memory_order_relaxed); }
  bool running() const { return running_; }
  /// Model time reached so far.
  double currentTime() const { return currentTime_; }
  /// Steps of the base dt taken since reinit.
  std::uint64_t currentStep() const { return step_; }
  /// Smallest dt in use (0 if no tick is used).
  double baseDt() const;

  /// The comms were replaced (Runtime): agree on their waits again at the next run.
  void commsChanged() { yieldDecidedFor_ = 0; }
  /// Threads per node used by the next run (default: OpenMP's max threads: OMP_NUM_THREADS, or
  /// the cores shared among the ranks on this machine, see Runtime). A run cuts every Element
  /// into that many slices, whatever the cores: results do not depend on the cores.
  void setNumThreads(unsigned n);
  /// The OS threads a run of T threads uses on this node: T, or the cores this rank may count as
  /// its own (comm::cores_per_rank; ANTLER_CORES_PER_RANK=n sets it) if fewer. Each OS thread
  /// then runs several threads' slices in turn: T threads on fewer cores would make every one of
  /// a step's barriers a context switch.
  static unsigned workers(unsigned T);
  /// Most threads per node (a run makes one queue and one slice per thread).
  static constexpr unsigned kMaxThreads = 1024;
  /// Throws the error setNumThreads(n) would throw, without changing anything.
  static void checkNumThreads(unsigned n);
  /// Most base-dt steps since reinit: step counts and times stay exact in a double up to 2^53.
  static constexpr std::uint64_t kMaxSteps = std::uint64_t{1} << 53;
  unsigned numThreads() const { return numThreads_; }

 private:
  Clock();
  /// One process / deliver / reduce round over the elements of `ticks` (the due ticks of a step),
  /// or a reinit round when reinit is true. Runs inside the parallel region on every thread.
  void runSteps(std::uint64_t nsteps, bool reinit);

  std::array<double, kNumTicks> dt_{};
  std::array<std::vector<Id>, kNumTicks> elements_{};
  double currentTime_ = 0;
  std::uint64_t step_ = 0;
  unsigned numThreads_ = 1;
  unsigned yieldDecidedFor_ = 0;  // the thread count the comms' yielding was agreed for
  bool running_ = false;
  std::atomic<bool> stopRequested_{false};
};

}  // namespace antler
