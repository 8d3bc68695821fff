#pragma once
/// Per-step event queues (internal to the models): what IntFire and SimpleSynHandler keep their
/// pending events in.
///
/// An event is appended to the queue of the step it is due in (a sequential write), and the step
/// adds its queue up into one sum per object of the node (the array written at random, 8 bytes an
/// object, which stays in cache). Per step, one queue per clock thread: during a run the thread
/// that delivers to an object is the one that processes it (its slice), so an object's events are
/// all in one thread's queue, in arrival order, and a step's threads each add the events of their
/// slice, queue by queue, in queue order. Outside a run (a Shell call) the queues are first merged
/// into thread 0's, in thread order, and events go there.
///
/// Row step % rows.size() holds the queues of `step`: at least two more rows than the steps an
/// event may be ahead, so that the row of step s - 1 can be emptied during step s (by the thread
/// whose slice begins the Element), when no thread reads it and none can add to it (events then
/// fall due in s + 1 onwards); a power of two, so that an event finds its row with a mask, not a
/// division (an empty row is a few words).
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <vector>

#include "core/fwd.hpp"
#include "msg/post_office.hpp"

namespace antler::detail {

class StepQueues {
 public:
  // 12 bytes: an event that stands for c > 1 events (an aside event's weights summed) is
  // followed by c - 1 entries of weight -0.0 for the same object, which leave any sum as it was
  // (x + -0.0 == x, bit for bit), so that counting entries counts events.
  struct [[gnu::packed, gnu::aligned(4)]] Pending {
    std::uint32_t col;  // the object (data index - the node's first)
    double weight;
  };
  static_assert(sizeof(Pending) == 12);
  // One clock thread's queue of a step, a cache line of its own: the threads append to theirs
  // at the same time, and queue headers sharing a line made every append a coherence miss on
  // the other cores (2 threads ran a step's delivery slower than 1, on a 16-core Xeon).
  struct alignas(64) ThreadQueue : std::vector<Pending> {};
  using Queues = std::vector<ThreadQueue>;  // one per clock thread
  std::vector<Queues> rows;
  std::atomic<bool> ran{false};  // the threads' queues may hold events since the last merge

  Queues& row(std::uint64_t step) { return rows[step & (rows.size() - 1)]; }
  const Queues& row(std::uint64_t step) const { return rows[step & (rows.size() - 1)]; }
  /// The queue an event goes to now: the calling clock thread's during a run, else thread 0's
  /// (the threads' queues merged into it first).
  unsigned queueThread() {
    if (PostOffice::inRun()) return static_cast<unsigned>(PostOffice::thread());
    if (ran.load(std::memory_order_relaxed)) merge();
    return 0;
  }
  /// Queues event (col, weight, count) for step `due` (within the rows) on queue t (from
  /// queueThread, asked once for a run of events).
  void addOn(unsigned t, std::uint64_t due, Index col, double weight, unsigned count) {
    ThreadQueue& q = row(due)[t];
    if (q.size() == q.capacity()) [[unlikely]]
      grow(q);
    q.push_back({static_cast<std::uint32_t>(col), weight});
    if (count > 1) [[unlikely]]
      q.insert(q.end(), count - 1, Pending{static_cast<std::uint32_t>(col), -0.0});
  }
  /// A full queue grows by a quarter, not double: a row keeps its capacity from step to step
  /// (the largest step it has held), so the growth factor is what every row holds beyond that
  /// (1.44x on average doubling, 1.12x here).
  [[gnu::noinline]] static void grow(ThreadQueue& q) { q.reserve(q.size() + q.size() / 4 + 64); }
  /// addOn on the queue asked now.
  void add(std::uint64_t due, Index col, double weight, unsigned count) {
    addOn(queueThread(), due, col, weight, count);
  }
  /// In a step, on the thread of columns first .. first + n - 1: empties the previous step's row if
  /// this slice begins the Element, and adds this step's events of the slice into sums[col], queue
  /// by queue, each in the order it was filled.
  void addUp(std::uint64_t step, Index first, Index n, double* sums) {
    if (first == 0 && step > 0)
      for (auto& q : row(step - 1)) q.clear();
    for (const auto& q : row(step))
      for (const Pending& ev : q)
        if (ev.col - first < n) sums[ev.col] += ev.weight;
  }
  /// Outside a run: every row's queues into thread 0's, in thread order (an object's events keep
  /// their order: those queued before the run come first in queue 0, and its run's are in one
  /// queue).
  void merge() {
    for (Queues& qs : rows)
      for (std::size_t t = 1; t < qs.size(); ++t) {
        qs[0].insert(qs[0].end(), qs[t].begin(), qs[t].end());
        qs[t].clear();
      }
    ran.store(false, std::memory_order_relaxed);
  }
  /// Before a run of `threads` clock threads (one thread, between runs): queues merged, the row
  /// of step `last` (already added up) emptied, a queue per thread.
  void prepareQueues(unsigned threads, std::uint64_t last) {
    merge();  // (a run may have queued events on threads 1.. without processing the Element)
    for (auto& q : row(last)) q.clear();
    for (Queues& qs : rows) qs.resize(std::max(1u, threads));
    // A run of several threads may fill their queues: merged again before a Shell call adds.
    ran.store(threads > 1, std::memory_order_relaxed);
  }
  /// Empty rows for events up to `ahead` steps ahead (the queues keep their capacity: a run
  /// after reinit does not grow them again, page by page).
  void resetRows(std::size_t ahead, unsigned threads) {
    rows.resize(std::bit_ceil(ahead + 2));
    for (Queues& qs : rows) {
      qs.resize(std::max(1u, threads));
      for (auto& q : qs) q.clear();
    }
    ran.store(threads > 1, std::memory_order_relaxed);  // as prepareQueues
  }
  /// How many events (their counts) of column col are due in steps from .. to.
  unsigned pending(Index col, std::uint64_t from, std::uint64_t to) const {
    unsigned n = 0;
    for (std::uint64_t s = from; !rows.empty() && s <= to; ++s)
      for (const auto& q : row(s))
        for (const Pending& ev : q) n += ev.col == col;
    return n;
  }
  /// True if no event is due in steps from .. to.
  bool empty(std::uint64_t from, std::uint64_t to) const {
    for (std::uint64_t s = from; !rows.empty() && s <= to; ++s)
      for (const auto& q : row(s))
        if (!q.empty()) return false;
    return true;
  }
};

}  // namespace antler::detail
