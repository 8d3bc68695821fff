#pragma once
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
#include <cstdint>
#include <vector>

#include "core/buffer.hpp"
#include "reduce/reduce_base.hpp"

namespace antler {

class ReduceQueue {
 public:
  static ReduceQueue& instance();

  /// Sizes the per-thread request lists before a run's parallel region.
  void prepare(unsigned T) {
    if (requests_.size() < T) requests_.resize(T);
  }
  /// Records a request by the calling thread (process phase).
  void request(std::uint32_t msgId);
  /// Master, before the exchange: this node's requests, serialized (attach to the exchange).
  const ByteBuffer& localRequests();
  /// Master, after the exchange: sets the pending reductions from every node's request bytes.
  void setPending(const std::vector<std::pair<const char*, std::size_t>>& nodeRequests, unsigned T);
  /// True if reductions are pending this round (the same answer on every node).
  bool pending() const { return !pending_.empty(); }
  /// Thread t: primary folds of every pending reduction over t's slices.
  void primary(unsigned t, unsigned T);
  /// Master: secondary folds, the node exchange, tertiary folds and digests. Returns the union of
  /// every node's flags (carried in the same collective).
  std::uint32_t finish(std::uint32_t flags);
  /// Runs the given reductions to completion now, on every node (called by Shell commands, which
  /// every node executes in lockstep; the clock must not be running).
  void runNow(const std::vector<ReduceBase*>& jobs, unsigned T);
  /// Forgets requests and pending reductions (after a failed run or when the model is cleared).
  void clear();

 private:
  ReduceQueue() = default;
  std::uint32_t fold(std::uint32_t flags);
  std::vector<std::vector<std::uint32_t>> requests_;  // per thread
  ByteBuffer requestBytes_;
  std::vector<ReduceBase*> pending_;
  unsigned threads_ = 1;
};

}  // namespace antler
