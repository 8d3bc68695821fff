#pragma once
#include "core/comm/comm.hpp"
/// The reduce queue: which reductions are pending, their per-thread partials, and the three folds.
///
/// Life of a reduction inside one clock round (see shell/clock.cpp for the barriers):
///  1. Process phase: a requesting object calls ReduceFinfo::send; the request (the ReduceMsg id)
///     goes into the calling thread's request list. Nothing is read yet.
///  2. Barrier 1: the master thread merges the threads' requests and sends them along with the
///     message exchange (no extra collective); every node then holds the same pending set, sorted
///     by id (a ReduceBase per pending id, found through its message: no search).
///  3. Deliver phase, before any message is delivered: each thread runs primaryReduce over the
///     targets in its own slice into its own partial. Values are thus read as process left them.
///  4. Barrier 2: the master folds the thread partials in thread order (secondaryReduce), makes
///     ONE allgather of the serialized partials of every pending reduction (with each node's count
///     and id checksum, so a disagreement is an error naming the ranks, never a hang), folds them
///     in node order (tertiaryReduce; every node folds the same bytes in the same order, so every
///     node gets the same bits), and calls each digest on the node(s) holding the requester.
///
/// The steady state takes one collective, not two: a tick's requests are usually the same every
/// round (a Stats object asks every step), so each tick remembers the set the nodes last agreed
/// on. Right after Barrier 1 the threads fold that predicted set (step 3, early), and the partials
/// ride in the Barrier 1 exchange next to the requests. If the requests every node sent equal the
/// prediction — which every node checks on the same bytes — the reductions are finished there and
/// then; otherwise the partials are dropped, the actual set becomes the prediction, and steps 3-4
/// run as above. Either way the values reduced are those process left, and the digest runs
/// before the next process phase.
#include <array>
#include <cstdint>
#include <vector>

#include "core/buffer.hpp"
#include "reduce/reduce_base.hpp"

namespace antler {

class ReduceQueue {
 public:
  static constexpr unsigned kMaxTicks = 32;
  static ReduceQueue& instance();
  /// The communicator the node stage goes through (the Runtime sets it).
  void setComm(comm::Comm c) { comm_ = std::move(c); }

  /// Before a run's parallel region: sizes the per-thread request lists, forgets predictions
  /// (messages may have changed since the last run).
  void prepare(unsigned T);
  /// Records a request by the calling thread (process phase).
  void request(std::uint32_t msgId);

  /// True if tick has a predicted set: then every thread calls predictPrimary after Barrier 1.
  bool predicted(unsigned tick) const { return tick < kMaxTicks && !predicted_[tick].empty(); }
  /// Thread t folds its slice of every predicted reduction of tick.
  void predictPrimary(unsigned tick, unsigned t, unsigned T);
  /// Master, before the exchange: this node's requests and its predicted partials, serialized.
  const ByteBuffer& attachment(unsigned tick);
  /// Master, after the exchange: finishes the predicted reductions if every node's requests
  /// match the prediction; otherwise sets the pending reductions for steps 3-4.
  void afterExchange(unsigned tick, const std::vector<std::pair<const char*, std::size_t>>& nodes,
                     unsigned T);

  /// True if reductions are pending for steps 3-4 this round (the same answer on every node).
  bool pending() const { return !pending_.empty(); }
  /// Thread t: primary folds of every pending reduction over t's slices.
  void primary(unsigned t, unsigned T);
  /// Master: secondary folds, the node exchange, tertiary folds and digests of the pending
  /// reductions. Returns the union of every node's flags (carried in the same collective).
  std::uint32_t finish(std::uint32_t flags);
  /// Runs the given reductions to completion now, on every node (called by Shell commands, which
  /// every node executes in lockstep; the clock must not be running).
  void runNow(const std::vector<ReduceBase*>& jobs, unsigned T);
  /// Forgets requests, predictions and pending reductions.
  void clear();

 private:
  comm::Comm comm_;
  ReduceQueue() = default;
  std::uint32_t fold(std::uint32_t flags);
  std::vector<std::vector<std::uint32_t>> requests_;  // per thread
  std::array<std::vector<ReduceBase*>, kMaxTicks> predicted_{};
  std::vector<ReduceBase*> pending_;
  // Scratch reused between rounds (only the master thread folds).
  ByteBuffer attachment_;
  std::vector<std::uint32_t> scratchIds_;
  std::vector<std::uint64_t> scratchIds64_;
  ByteBuffer scratchBytes_;
  std::vector<std::size_t> scratchCounts_;
  std::vector<char> scratchGathered_;
  std::vector<std::vector<Reader>> scratchReaders_;
  std::vector<Reader> nodeReaders_;
};

}  // namespace antler
