#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// The Clock: numbered ticks, each with its own dt and the Elements it processes, and the
/// three-barrier step that runs them on OpenMP threads and MPI nodes.
#include <array>
#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/id.hpp"

namespace antler {

class Simulation;

/// Where a clock's runs spent their time, phase by phase (Clock::setPhaseTimers): wall seconds
/// summed over the rounds of the runs since the timers were turned on. The phases are those of a
/// round (clock.cpp's top comment); a reinit's round is not counted.
struct PhaseTimes {
  struct Phases {
    double process = 0;    ///< the classes' process calls, every Element of the tick
    double predicted = 0;  ///< folding the targets of the reductions predicted for the tick
    double exchange = 0;   ///< the master's exchange with the other nodes and its unpacking
    double primary = 0;    ///< folding the targets of the pending reductions (deliver phase)
    double deliver = 0;    ///< calling destination functions for the round's messages
    double reduce = 0;     ///< the master's reduce: queues cleared, partials folded, digests
    double wait = 0;       ///< waiting at the round's barriers for the other threads
    double total() const {
      return process + predicted + exchange + primary + deliver + reduce + wait;
    }
  };
  /// One entry per OS thread of the runs (thread 0, the master, first).
  std::vector<Phases> threads;
  /// Each scheduled Element's time in its process (and init) calls, summed over the OS
  /// threads, in the order the runs first met them (an Element deleted since is dropped; its
  /// time stays in the threads' totals).
  std::vector<std::pair<Id, double>> elements;
  /// Rounds run (one per due tick per stride).
  std::uint64_t rounds = 0;
};

/// The scheduler of one Simulation; every node runs the same steps in lockstep.
///
/// Time, as in MOOSE 3/4: the clock has a base step `dt` (50 us until a smaller tick dt is set)
/// and each of its 32 ticks runs every `tickStep` base steps (0: never), so a tick's dt is
/// tickStep x dt. Ticks start with MOOSE's default dts (defaultDts(): 50 us for ticks 0-7,
/// 100 us for tick 8, ...). setTickDt(i, v) follows MOOSE's rule: a v smaller than the base dt
/// becomes the base dt (every tick's step rescaled to keep its dt, rounded to whole steps);
/// otherwise tick i's step is round(v / dt). A run advances in strides of the smallest step of
/// the ticks in use; at the end of each stride (base step `endStep`) the time is dt x endStep
/// and every tick in use whose step divides endStep runs, in tick order.
///
/// Objects are on ticks in two phases: `process` (the class's proc field) and `init` (its init
/// field, for classes that have one, such as Compartment: run on the tick before process). An
/// Element is on at most one tick per phase: schedule() moves it, as MOOSE's useClock does. A new
/// Element goes on its class's default tick (Cinfo::defaultTick; init on the tick before), so a
/// MOOSE script that never calls useClock runs what MOOSE would run.
class Clock {
 public:
  static constexpr unsigned kNumTicks = 32;
  /// The base dt a clock starts with (MOOSE's).
  static constexpr double kDefaultBaseDt = 50e-6;
  /// No dt may be smaller (MOOSE's minimumDt).
  static constexpr double kMinimumDt = 1e-7;
  /// MOOSE's default dt of each tick (0: unused), from which the ticks' steps start.
  static const std::array<double, kNumTicks>& defaultDts();
  /// The clock of `sim` (its Simulation owns it): MOOSE's default ticks, time 0.
  explicit Clock(Simulation& sim);
  Clock(const Clock&) = delete;
  Clock& operator=(const Clock&) = delete;

  /// Which proc field of a scheduled Element the clock calls.
  enum class Phase : std::uint8_t { process, init };
  struct Entry {
    Id id;
    Phase phase;
  };

  /// Sets tick's dt (MOOSE's rule, see the class comment). v must be finite and >= kMinimumDt.
  void setTickDt(unsigned tick, double dt);
  /// Tick's dt: its step times the base dt (0 if the tick is off).
  double tickDt(unsigned tick) const { return static_cast<double>(steps_[tick]) * dt_; }
  /// Sets tick's step in base dts (0 turns it off).
  void setTickStep(unsigned tick, std::uint64_t steps);
  std::uint64_t tickStep(unsigned tick) const { return steps_[tick]; }
  /// The base dt, and setting it (every tick keeps its step, so every tick dt scales).
  double dt() const { return dt_; }
  void setDt(double dt);
  /// Every tick's dt (0 for ticks that are off).
  std::vector<double> dts() const;

  /// Puts e on tick in `phase`, taking it off the tick it was on in that phase (MOOSE's
  /// useClock); e goes after the Elements already on the tick.
  void schedule(unsigned tick, Id e, Phase phase = Phase::process);
  /// Adds e to the tick in `phase` (kept for C++ code: same as schedule).
  void addElement(unsigned tick, Id e, Phase phase = Phase::process) { schedule(tick, e, phase); }
  /// Takes e off its tick in `phase`.
  void unschedule(Id e, Phase phase);
  /// The tick e is on in `phase`, or -1.
  int tickOf(Id e, Phase phase = Phase::process) const;
  /// Removes e from every tick (when it is deleted).
  void dropElement(Id e);
  /// Elements scheduled on a tick, in the order they run.
  const std::vector<Entry>& elements(unsigned tick) const { return elements_[tick]; }
  /// Unschedules everything, restores the default dts, resets time to 0 and zeroes the phase
  /// timers' totals.
  void clear();

  /// Drops sends still queued from the previous run, calls reinit on every scheduled Element
  /// (tick order), delivers what reinit sent, and resets time to 0.
  void reinit();
  /// Runs round(runtime / (stride x dt)) strides (MOOSE's step count).
  void start(double runtime);
  /// Asks a running clock to stop at the end of the current step (callable from process).
  void requestStop() { stopRequested_.store(true, std::memory_order_relaxed); }
  bool running() const { return running_; }
  /// Model time reached so far (dt x currentStep).
  double currentTime() const { return currentTime_; }
  /// Base steps taken since reinit.
  std::uint64_t currentStep() const { return step_; }
  /// The step of a run: the smallest step of the ticks in use (1 if none).
  std::uint64_t stride() const;
  /// The time of one stride, the smallest dt in use (0 if no tick is used).
  double baseDt() const;
  /// Base steps since reinit once the last run ends, and their time (MOOSE's nsteps, runTime).
  std::uint64_t nsteps() const { return nsteps_; }
  double runTime() const { return static_cast<double>(nsteps_) * dt_; }

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

  /// Phase timers (as NEST's detailed timers): while on, every OS thread of a run reads a
  /// steady clock between the phases of each round (a few reads a round per thread; off, a
  /// branch). Turning them on zeroes the totals; they then add up across runs until turned off
  /// or on again. The results do not change.
  void setPhaseTimers(bool on);
  bool phaseTimers() const { return phaseTimers_; }
  /// The totals so far (see PhaseTimes).
  const PhaseTimes& phaseTimes() const { return phaseTimes_; }

 private:
  /// nsteps strides of the run (or one reinit round): for each, one process / deliver / reduce
  /// round per due tick. Runs inside the parallel region on every thread.
  void runSteps(std::uint64_t nsteps, bool reinit);
  class Run;  // one run's shared state and its phases (clock.cpp)
  void checkTick(unsigned tick, const char* op) const;
  void checkIdle(const char* op) const;

  Simulation& sim_;
  double dt_ = kDefaultBaseDt;
  std::array<std::uint64_t, kNumTicks> steps_{};
  std::array<std::vector<Entry>, kNumTicks> elements_{};
  double currentTime_ = 0;
  std::uint64_t step_ = 0;
  std::uint64_t nsteps_ = 0;
  unsigned numThreads_ = 1;
  unsigned yieldDecidedFor_ = 0;  // the thread count the comms' yielding was agreed for
  bool running_ = false;
  bool phaseTimers_ = false;
  PhaseTimes phaseTimes_;
  std::atomic<bool> stopRequested_{false};
};

}  // namespace antler
#pragma GCC visibility pop
