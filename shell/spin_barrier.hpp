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
/// So a waiter spins (with a pause instruction) for at most a budget, then sleeps on the
/// generation word (a futex on Linux; std::atomic::wait elsewhere). The last thread to arrive flips
/// the generation and makes the wake-up system call only if someone sleeps (a count of sleepers):
/// when every thread has a core, a barrier costs no system call at all.
///
/// The budget. A sleep and its wake-up cost about one futex hand-off between two threads: 5-8 us
/// on the 2-core KVM guest this project is measured on (a ping-pong test, one way), 2-4 us on bare
/// metal. Spinning at most that long before sleeping is the classic 2-competitive choice: whatever
/// the wait turns out to be, the waiter never loses more than twice what the best choice made in
/// hindsight (spin to the end, or sleep at once) would have cost (Karlin, Li, Manasse, Owicki,
/// "Empirical studies of competitive spinning", 1991). Hence kMaxSpin = 10 us. But the rule is
/// only about the waiter's own time; when threads outnumber cores, the spin itself delays the
/// thread it waits for, and the best choice is to sleep at once. A thread cannot see that
/// directly (two ranks of two threads on two cores each see two cores), so each thread adapts its
/// own budget: a wait that ended while spinning doubles it (up to kMaxSpin), one that ended in a
/// sleep halves it (down to kMinSpin, a short probe that lets the budget grow again once the
/// cores are free). On free cores the barriers of a small model end within a microsecond or two,
/// every spin succeeds and the budget stays at kMaxSpin; oversubscribed, spins fail and waiters
/// sleep almost at once. A thread keeps its budget for the life of the barrier (one run).
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
#include <memory>

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
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected,
          nullptr, nullptr, 0);
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
  /// Longest spin before sleeping (see the top of this file).
  static constexpr ns kMaxSpin{10'000};
  /// Shortest: the probe an oversubscribed thread still makes.
  static constexpr ns kMinSpin{250};

  /// A barrier for n threads, numbered 0..n-1. maxSpin caps the spin (ns{0}: always sleep; tests
  /// use it to exercise the sleeping path).
  explicit SpinBarrier(unsigned n, ns maxSpin = kMaxSpin)
      : n_(n),
        maxSpin_(maxSpin.count()),
        minSpin_(std::min(kMinSpin.count(), maxSpin.count())),
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
      arrived_.store(0, std::memory_order_relaxed);   // before the release below: reused next
      generation_.fetch_add(1, std::memory_order_seq_cst);
      if (sleepers_.load(std::memory_order_seq_cst) != 0) wake_all(generation_);
      return;
    }
    std::int64_t& budget = budget_[t].ns;
    if (spin(gen, budget)) {
      budget = std::min(maxSpin_, 2 * budget);
      return;
    }
    budget = std::max(minSpin_, budget / 2);
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

  struct alignas(64) Budget {
    std::int64_t ns = 0;  // written by its own thread only
  };

  const unsigned n_;
  const std::int64_t maxSpin_, minSpin_;
  std::unique_ptr<Budget[]> budget_;
  alignas(64) std::atomic<unsigned> arrived_{0};
  alignas(64) std::atomic<std::uint32_t> generation_{0};  // the futex word
  alignas(64) std::atomic<unsigned> sleepers_{0};
};

}  // namespace antler::detail
