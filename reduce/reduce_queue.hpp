#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// The reduce queue: which reductions are pending, their per-thread partials, and the three folds.
///
/// Life of a reduction inside one clock round (see shell/clock.cpp for the barriers):
///  1. Process phase: a requesting object calls ReduceFinfo::send; the request — the message's
///     job (a ReduceBase) itself — goes into the calling thread's request list. Nothing is read
///     yet. A job keeps its form from here to its digest.
///  2. Barrier 1: the master thread merges the threads' requests and sends their ids along with
///     the message exchange (no extra collective); every node then holds the same pending set,
///     sorted by id (a node finds the jobs other nodes asked for in the queue's own table of its
///     simulation's jobs, which each Reduce message registers: no search, and no message lookup).
///  3. Deliver phase, before any message is delivered: each thread runs primaryReduce over the
///     targets in its own slice into its own partial. Values are thus read as process left them.
///  4. Barrier 2: the master folds the thread partials in thread order (secondaryReduce), runs
///     the node stage (below) for every pending reduction at once, and calls each digest on the
///     node(s) holding the requester.
///
/// The steady state takes one collective, not two: a tick's requests are usually the same every
/// round (a Stats object asks every step), so each tick remembers the set the nodes last agreed
/// on. Right after Barrier 1 the threads fold that predicted set (step 3, early); when the stage
/// chosen for it is allgather, its partials ride in the Barrier 1 exchange next to the requests
/// (the round's flags travel there too). If the requests every node sent equal the prediction —
/// which every node checks on the same bytes — the reductions are finished there and then (for a
/// tree or recursive-doubling stage, by that one collective right after the exchange); otherwise
/// the partials are dropped, the actual set becomes the prediction, and steps 3-4 run as above.
/// Either way the values reduced are those process left, and the digest runs before the next
/// process phase.
///
/// A class whose process sweep writes a member out as it goes may feed the jobs that fold that
/// member from the sweep itself, each chunk while it is in cache (core/element.hpp: SweepSink,
/// ElementState::sweepStamp; IntFire's Vm). The sweep of thread t's slice fills thread t's
/// partial in the same blocks primary would fold, and step 3 (or the early fold) keeps that
/// partial instead of reading the objects when the state's stamp says the member is still as
/// the sweep left it; otherwise it folds as above. Either way the partial holds the same values
/// folded in the same blocks, so the same bits.
///
/// The node stage is one of three strategies, chosen per round (NodeStage):
///   allgather           every node's serialized partials go to every node, and every node folds
///                       them: O(P x partial) bytes per node, but no round of its own when the
///                       partials ride in the message exchange.
///   tree                a binomial reduce to the node that holds the requester (forwarded from
///                       node 0 when that is another node; requesters on several nodes each get
///                       theirs); a global requester needs every node: reduce, then broadcast.
///   recursive_doubling  an all-reduce in ceil(log2 P) rounds (any P).
/// Every strategy folds the node partials in the canonical order of core/comm/algorithms.hpp (the
/// binomial tree over node order), so the digest sees the same bits whichever ran. `automatic`
/// chooses from core/comm's alpha-beta cost model with only what every node agrees on: P, the
/// pending set, and the size bound each reduce class declares (ReduceBase::sizeBound: sizeof a
/// trivially copyable class, or its kSerializedSizeBound; a class without one is assumed large).
/// Small partials ride in the exchange; large ones at P >= 4 take a tree. Forced with
/// setNodeStage or ANTLER_REDUCE_NODE_STAGE=allgather|tree|recursive_doubling.
///
/// Reductions over some of the nodes. A job whose targets and requester live on fewer than every
/// node (ReduceBase::nodes; worked out in prepare() when messages or the layout changed) leaves
/// this path once the round's requests are known (unpack): its members reset it, fold it in step
/// 3 and, in step 4, reduce it among themselves with one comm::Reductions per distinct node set
/// (toAll over the members in node order; the canonical fold over them); every other node drops
/// the request and does nothing for it. Such jobs are never predicted, so the all-node steady
/// state above is unchanged (one check per round that no job is a subset job).
///
/// A node stage never throws midway (a node that stopped would leave others waiting): a fold that
/// fails, or nodes whose pending sets differ (their id checksums travel with the partials), mark
/// the partial; the mark travels on, and every node that receives it raises a CommError after
/// the collective.
#include <array>
#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/buffer.hpp"
#include "core/comm/algorithms.hpp"
#include "core/comm/reductions.hpp"
#include "msg/post_office.hpp"
#include "reduce/reduce_base.hpp"

namespace antler {

/// How the node stage of a round's reductions runs (see the top of this file).
enum class NodeStage : std::uint8_t { automatic, allgather, tree, recursive_doubling };
const char* to_string(NodeStage s);
/// The stage named s ("automatic", "allgather", "tree", "recursive_doubling"); ValueError
/// naming the valid names otherwise.
NodeStage parse_node_stage(std::string_view s);

/// Who needs a round's results: one node (>= 0), every node, or several.
constexpr int kEveryNode = -1, kSeveralNodes = -2;
/// The stage automatic picks for P nodes and partials of at most `bound` bytes in all (0:
/// unknown, assumed large), given who needs the result (a node, kEveryNode or kSeveralNodes)
/// and whether the partials could ride in an exchange that happens anyway (piggyback).
NodeStage choose_node_stage(int P, std::size_t bound, int resultNode, bool piggyback,
                            const comm::CostModel& m);

class Context;

class ReduceQueue final : public ExchangeContributor {
 public:
  static constexpr unsigned kMaxTicks = 32;
  /// The reduce queue of `context`'s simulation (its ReduceContext owns it).
  explicit ReduceQueue(const Context& context) : context_(context) {}
  ReduceQueue(const ReduceQueue&) = delete;
  ReduceQueue& operator=(const ReduceQueue&) = delete;
  /// The communicator the node stage goes through (the Simulation sets it, on every node at
  /// once: the Reductions of runNow are built on it, collectively).
  void setComm(comm::Comm c);
  comm::Comm& comm() { return comm_; }
  /// The reductions by member list that runNow uses (null before setComm).
  comm::Reductions* reductions() { return reductions_.get(); }
  /// Reductions this node has folded (primary passes of runNow and of clock rounds): a node
  /// outside a reduction's members folds nothing for it.
  std::uint64_t foldsRun() const { return foldsRun_; }

  /// Before a run's parallel region: sizes the per-thread request lists, forgets predictions
  /// (messages may have changed since the last run).
  void prepare(unsigned T);
  /// Records a request for `job` by the calling thread (process phase).
  void request(ReduceBase* job);
  /// Registers a job of this simulation (a Reduce message's, when it is made), so that a request
  /// another node sends by id finds it; remove() when it goes.
  void add(ReduceBase* job);
  void remove(std::uint64_t id);

  /// True if tick has a predicted set: then every thread calls predictPrimary after Barrier 1.
  bool predicted(unsigned tick) const { return tick < kMaxTicks && !predicted_[tick].empty(); }
  /// Thread t folds its slice of every predicted reduction of tick.
  void predictPrimary(unsigned tick, unsigned t, unsigned T);
  /// Its part of the round's exchange (the post office calls both; ExchangeContributor). pack:
  /// this node's requests and its predicted partials, serialized. unpack: finishes the predicted
  /// reductions if every node's requests match the prediction; otherwise sets the pending
  /// reductions for steps 3-4.
  const ByteBuffer& pack(unsigned tick) override;
  void unpack(unsigned tick,
              const std::vector<std::pair<const char*, std::size_t>>& nodes) override;

  /// True if reductions are pending for steps 3-4 this round (the same answer on every node).
  bool pending() const { return !pending_.empty(); }
  /// Thread t: primary folds of every pending reduction over t's slices.
  void primary(unsigned t, unsigned T);
  /// Master: secondary folds, the node exchange, tertiary folds and digests of the pending
  /// reductions. Returns the union of every node's flags (carried in the same collective).
  std::uint32_t finish(std::uint32_t flags);
  /// Runs the given reductions to completion now (called by Shell commands, which every node
  /// executes in lockstep; the clock must not be running). Jobs are grouped by the nodes that
  /// take part (ReduceBase::nodes: those holding targets, and those needing the result); each
  /// group is one comm::Reductions reduction over those nodes only, every group in flight at
  /// once, merged in the canonical order over the members (node order). A node outside a group
  /// neither folds nor receives anything for it. The fold equals the all-node fold of the clock's
  /// node stage when the members are the first m nodes (targets block-distributed, requester
  /// among them); with a requester further out it may differ in the last bits of a
  /// floating-point statistic. Nodes that disagree on a group's jobs get a CommError; nodes
  /// that disagree on which groups exist cannot be told from a group's own messages.
  void runNow(const std::vector<ReduceBase*>& jobs, unsigned T);
  /// Forgets requests, predictions and pending reductions.
  void clear();
  /// Forces a node stage (automatic: chosen per round). Every node must set the same.
  void setNodeStage(NodeStage s) { forced_ = s; }
  /// The stage the last multi-node round ran (automatic before any ran): for tests and benches.
  NodeStage lastNodeStage() const { return last_; }

 private:
  const Context& context_;
  unsigned threads_ = 1;  // the run's threads (prepare)
  std::unique_ptr<comm::Reductions> reductions_;
  std::uint64_t foldsRun_ = 0;
  // Reductions over a subset of the nodes (ReduceBase::nodes: fewer than every node): their
  // member nodes by job id, worked out in prepare() when the topology changed; this round's
  // that this node is a member of (by id).
  std::unordered_map<std::uint64_t, std::vector<int>> subsets_;
  std::uint64_t subsetsTopology_ = 0;
  bool subsetsComputed_ = false;
  std::vector<ReduceBase*> subsetPending_;
  struct NodeGroup {
    std::vector<int> nodes;
    std::vector<ReduceBase*> jobs;
  };
  std::vector<NodeGroup> scratchGroups_;
  /// Jobs grouped by their nodes (cached: from subsets_; else asked), in first-job order.
  void groupByNodes(const std::vector<ReduceBase*>& jobs, std::vector<NodeGroup>& out,
                    bool cached) const;
  /// One toAll comm::Reductions per group over its nodes (this node a member of each, partials
  /// ready), all in flight at once; then each group's results and digests.
  void foldGroups(const std::vector<NodeGroup>& groups);
  /// Reads a folded result ({flags, status, checksum, partials}) into jobs and digests them.
  std::uint32_t applyFolded(const std::vector<ReduceBase*>& jobs, const ByteBuffer& b,
                            std::uint32_t flags);
  std::unordered_map<std::uint64_t, ReduceBase*> jobs_;  // every registered job, by id
  comm::Comm comm_;
  std::uint32_t fold(std::uint32_t flags);
  /// The stage for jobs (the same on every node: P, the agreed set and declared bounds only).
  NodeStage stageFor(const std::vector<ReduceBase*>& jobs, bool piggyback) const;
  /// The tree and recursive-doubling stages: folds jobs' partials (secondary done) across nodes
  /// and runs the digests where the result arrived. Returns the union of the flags it carried.
  std::uint32_t foldByTree(const std::vector<ReduceBase*>& jobs, NodeStage stage,
                           std::uint32_t flags);
  NodeStage forced_ = NodeStage::automatic;
  NodeStage last_ = NodeStage::automatic;
  std::array<NodeStage, kMaxTicks> predictedStage_{};
  struct alignas(64) Requests : std::vector<ReduceBase*> {};  // a cache line each: threads
  std::vector<Requests> requests_;                            // append at once; per thread
  std::array<std::vector<ReduceBase*>, kMaxTicks> predicted_{};
  std::vector<ReduceBase*> pending_;
  // Scratch reused between rounds (only the master thread folds).
  ByteBuffer attachment_;
  std::vector<std::uint64_t> scratchIds64_;
  std::vector<std::uint64_t> requestIds_;  // a round's requests, every node's
  ByteBuffer scratchBytes_;
  std::vector<std::size_t> scratchCounts_;
  std::vector<char> scratchGathered_;
  std::vector<std::vector<Reader>> scratchReaders_;
  std::vector<Reader> nodeReaders_;
};

}  // namespace antler
#pragma GCC visibility pop
