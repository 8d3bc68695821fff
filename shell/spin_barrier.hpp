#pragma once
/// SpinBarrier: the barrier the clock's threads meet at, several times per step.
///
/// libgomp's barrier makes a futex system call each time it releases the team, even when nobody
/// sleeps; at a few barriers per step that alone costs more than the MPI collective of a small
/// model. This one spins on a generation counter (with a pause), then yields, so on an
/// oversubscribed node a waiting thread still gives its core away.
#include <atomic>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace antler::detail {

class SpinBarrier {
 public:
  explicit SpinBarrier(unsigned n) : n_(n) {}
  /// Waits until all n threads have arrived. Also a full memory fence between the phases.
  void wait() {
    if (n_ == 1) return;
    const unsigned gen = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_) {
      arrived_.store(0, std::memory_order_relaxed);
      generation_.store(gen + 1, std::memory_order_release);
      return;
    }
    for (unsigned spins = 0; generation_.load(std::memory_order_acquire) == gen; ++spins) {
      if (spins < 256) {
#if defined(__x86_64__) || defined(__i386__)
        _mm_pause();
#endif
      } else {
        std::this_thread::yield();
      }
    }
  }

 private:
  const unsigned n_;
  alignas(64) std::atomic<unsigned> arrived_{0};
  alignas(64) std::atomic<unsigned> generation_{0};
};

}  // namespace antler::detail
