#pragma once
/// SpinBarrier: the barrier the clock's threads meet at, several times per step. It spins briefly,
/// then sleeps until the last thread arrives.
///
/// Why not OpenMP's barrier: libgomp's makes a futex system call each time it releases the team,
/// even when nobody sleeps; at a few barriers per step that alone costs more than the MPI
/// collective of a small model. Why not a pure spin (or spin-then-yield) barrier, which this was:
/// with more threads than free cores, a waiting thread that keeps its core keeps the thread it
/// waits for off it, until the scheduler preempts it a time slice later (milliseconds). A
/// 200-neuron model went from 3 us to 140-560 us per step that way. sched_yield does not fix it:
/// under Linux's CFS it gives the core only to a task queued on the same core, it does not make the
/// core idle for the load balancer to move the late thread there, and on a machine loaded with
/// other work it hands the core to someone else's process for a whole slice.
///
/// So a waiter goes through three stages, each for a bounded time:
///
///   spin   up to kMaxSpin = 2 us, re-reading the generation between pause instructions. On free
///          cores a small model's barrier ends within about a microsecond (a step of a 200-neuron
///          model with its 9 barriers costs 2.8 us at 2 threads with a pure spin), and a spin
///          notices the release within ~50 ns, where a system call would add ~0.5 us.
///   yield  sched_yield until kYieldFor = 20 us have passed. When no other thread wants the core,
///          the call returns at once and the stage is a coarser spin; when a thread of this team
///          waits for this core (more threads than cores), it gets the core now instead of after
///          a time slice.
///   sleep  on the generation word (a futex on Linux; std::atomic::wait elsewhere) until the last
///          thread arrives, which makes the wake-up call only if someone sleeps (a count of
///          sleepers): when every thread has a core, a barrier makes no system call at all.
///
/// Why 20 us of busy waiting in all: a sleep costs its wake-up, about 20 us per barrier on the
/// 2-core KVM guest the project is measured on (a team that always sleeps takes 180 us per step of
/// 9 barriers where spinning takes 3; a futex hand-off between two running threads is 5-8 us, a
/// halted virtual CPU is slower to wake), 2-5 us on bare metal. Waiting busily for at most what a
/// sleep would cost, then sleeping, is the classic 2-competitive rule: whatever the wait turns out
/// to be, it never costs more than twice what the best choice made in hindsight (busy to the end,
/// or sleep at once) would have (Karlin, Li, Manasse, Owicki, "Empirical studies of competitive
/// spinning", 1991). The rule only counts the waiter's own time, though: when threads outnumber
/// cores, a spinning waiter also delays the thread it waits for. Yielding does not (it gives the
/// core away), spinning does, so the spin budget adapts, per thread: a wait that ended while
/// spinning resets it to kMaxSpin, one that did not halves it (down to kMinSpin = 250 ns), and
/// every 8th wait below kMaxSpin spins the full 2 us as a probe, so that the budget recovers once
/// the cores are free again. Measured (bench/oversubscription, bench/README.md): on free cores
/// as fast as the pure spin; 4 threads on 2 cores 3-4x faster than the pure spin.
///
/// No lost wake-ups: a waiter counts itself in sleepers_ and then asks the kernel to sleep only
/// if the generation is still the one it arrived in (the futex compares and sleeps atomically);
/// the last arriver changes the generation and then reads sleepers_. Both the waiter's increment
/// and the last arriver's change are sequentially consistent read-modify-writes, so either the
/// last arriver sees the waiter counted (and wakes it), or the waiter's compare sees the new
/// generation (and does not sleep). Spurious wake-ups are harmless: a waiter sleeps in a loop
/// until the generation changes.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace antler::detail {

/// One pause of a spin loop: tells the core this is a spin (saves power, frees the sibling
/// hyper-thread, avoids the memory-order flush when the loop exits).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

/// Sleeps while `word` holds `expected` (may return spuriously).
inline void wait_on(std::atomic<std::uint32_t>& word, std::uint32_t expected) {
#if defined(__linux__)
  static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr,
          nullptr, 0);
#else
  word.wait(expected, std::memory_order_acquire);
#endif
}

/// Wakes every thread sleeping in wait_on(word, ...).
inline void wake_all(std::atomic<std::uint32_t>& word) {
#if defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
          nullptr, 0);
#else
  word.notify_all();
#endif
}

class SpinBarrier {
 public:
  using ns = std::chrono::nanoseconds;
  /// Longest spin before yielding (see the top of this file).
  static constexpr ns kMaxSpin{2'000};
  /// Shortest: what a thread that keeps failing to spin through a wait still spins.
  static constexpr ns kMinSpin{250};
  /// Every kProbeEvery-th wait of a thread whose budget is below the maximum spins the maximum.
  static constexpr unsigned kProbeEvery = 8;
  /// How long a waiter yields before it sleeps.
  static constexpr ns kYieldFor{20'000};

  /// A barrier for n threads, numbered 0..n-1. Tests pass maxSpin = yieldFor = ns{0} to send
  /// (almost) every wait to sleep.
  explicit SpinBarrier(unsigned n, ns maxSpin = kMaxSpin, ns yieldFor = kYieldFor)
      : n_(n),
        maxSpin_(maxSpin.count()),
        minSpin_(std::min(kMinSpin.count(), maxSpin.count())),
        yieldFor_(yieldFor),
        budget_(std::make_unique<Budget[]>(n)) {
    for (unsigned t = 0; t < n; ++t) budget_[t].ns = maxSpin_;
  }

  /// Thread t (0 <= t < n) waits until all n threads have arrived. Everything a thread wrote
  /// before its wait is visible to every thread after theirs.
  void wait(unsigned t) {
    if (n_ == 1) return;
    // This thread passed the previous barrier, and this one cannot end without it: gen is this
    // barrier's generation.
    const std::uint32_t gen = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_) {
      arrived_.store(0, std::memory_order_relaxed);  // before the release below: reused next
      generation_.fetch_add(1, std::memory_order_seq_cst);
      if (sleepers_.load(std::memory_order_seq_cst) != 0) wake_all(generation_);
      return;
    }
    Budget& b = budget_[t];
    const bool probe = b.ns < maxSpin_ && ++b.sinceProbe >= kProbeEvery;
    if (probe) b.sinceProbe = 0;
    if (spin(gen, probe ? maxSpin_ : b.ns)) {
      b.ns = maxSpin_;
      return;
    }
    b.ns = std::max(minSpin_, b.ns / 2);
    for (const auto start = std::chrono::steady_clock::now();
         std::chrono::steady_clock::now() - start < yieldFor_;) {
      std::this_thread::yield();
      if (generation_.load(std::memory_order_acquire) != gen) return;
    }
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    while (generation_.load(std::memory_order_acquire) == gen) wait_on(generation_, gen);
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
  }

  /// Thread t's current spin budget (for tests).
  ns budget(unsigned t) const { return ns{budget_[t].ns}; }
  /// How many threads sleep in the barrier now (for tests).
  unsigned sleeping() const { return sleepers_.load(std::memory_order_acquire); }

 private:
  /// Spins until the generation moves on (true) or budgetNs have passed (false).
  bool spin(std::uint32_t gen, std::int64_t budgetNs) const {
    using clock = std::chrono::steady_clock;
    const ns budget{budgetNs};
    clock::time_point start{};
    for (bool first = true;; first = false) {
      // Reading the clock costs about as much as a few pauses: look at it every 8th turn, and
      // not at all when the barrier ends within the first 8 (the common case on free cores).
      for (int i = 0; i < 8; ++i) {
        if (generation_.load(std::memory_order_acquire) != gen) return true;
        cpu_relax();
      }
      const auto now = clock::now();
      if (first)
        start = now;
      else if (now - start >= budget)
        return generation_.load(std::memory_order_acquire) != gen;
    }
  }

  struct alignas(64) Budget {  // written by its own thread only
    std::int64_t ns = 0;
    unsigned sinceProbe = 0;
  };

  const unsigned n_;
  const std::int64_t maxSpin_, minSpin_;
  const ns yieldFor_;
  std::unique_ptr<Budget[]> budget_;
  alignas(64) std::atomic<unsigned> arrived_{0};
  alignas(64) std::atomic<std::uint32_t> generation_{0};  // the futex word
  alignas(64) std::atomic<unsigned> sleepers_{0};
};

}  // namespace antler::detail
