#include "reduce/reduce_queue.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/comm/algorithms.hpp"
#include "core/context.hpp"
#include "core/error.hpp"
#include "msg/post_office.hpp"
#include "reduce/reduce_msg.hpp"

namespace antler {

namespace {
constexpr std::size_t kInlineBytes = 120;

std::uint64_t checksum(const std::vector<ReduceBase*>& jobs) {
  std::uint64_t h = 1469598103934665603ull;
  for (auto* j : jobs) h = (h ^ j->id()) * 1099511628211ull;
  return h;
}

std::string ids(const std::vector<std::uint64_t>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size() && i < 20; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  if (v.size() > 20) s += ", ...";
  return s.empty() ? "none" : s;
}

// A partial that cannot be folded any further travels on marked, so that no node stops midway.
enum FoldStatus : std::uint32_t { kFoldOk = 0, kFoldFailed = 1, kFoldDisagree = 2 };
// Header of a tree-stage partial: {flags u32, status u32, id checksum u64}.
constexpr std::size_t kTreeHeader = 16;

// Partials of at most this many bytes in all when no bound is declared ("assume the worst").
constexpr std::size_t kUnknownBound = std::size_t{1} << 30;

// Who needs the results of jobs: one node, kEveryNode or kSeveralNodes.
int result_node(const std::vector<ReduceBase*>& jobs) {
  int node = kSeveralNodes - 1;  // none yet
  for (ReduceBase* j : jobs) {
    const int n = j->resultNode();
    if (n < 0) return kEveryNode;
    if (node == kSeveralNodes - 1)
      node = n;
    else if (node != n)
      node = kSeveralNodes;
  }
  return node == kSeveralNodes - 1 ? kEveryNode : node;
}

std::size_t total_bound(const std::vector<ReduceBase*>& jobs) {
  std::size_t sum = kTreeHeader;
  for (ReduceBase* j : jobs) {
    const std::size_t b = j->sizeBound();
    if (b == 0) return 0;
    sum += 8 + b;
  }
  return sum;
}

NodeStage env_node_stage() {
  static const NodeStage s = [] {
    const char* v = std::getenv("ANTLER_REDUCE_NODE_STAGE");
    return v && *v ? parse_node_stage(v) : NodeStage::automatic;
  }();
  return s;
}
}  // namespace

const char* to_string(NodeStage s) {
  switch (s) {
    case NodeStage::automatic:
      return "automatic";
    case NodeStage::allgather:
      return "allgather";
    case NodeStage::tree:
      return "tree";
    case NodeStage::recursive_doubling:
      return "recursive_doubling";
  }
  return "?";
}

NodeStage parse_node_stage(std::string_view s) {
  for (NodeStage n :
       {NodeStage::automatic, NodeStage::allgather, NodeStage::tree, NodeStage::recursive_doubling})
    if (s == to_string(n)) return n;
  throw ValueError("unknown reduction node stage " + quoted(s) +
                   " (valid: automatic, allgather, tree, recursive_doubling)");
}

NodeStage choose_node_stage(int P, std::size_t bound, int resultNode, bool piggyback,
                            const comm::CostModel& m) {
  using comm::Algorithm;
  using comm::Collective;
  if (P <= 1) return NodeStage::allgather;
  const std::size_t S = bound ? bound : kUnknownBound;
  // Riding in the exchange adds only bytes (its rounds are paid anyway); on its own, the
  // allgather is the vendor call the exchange uses. Either way every node then packs, reads and
  // folds all P partials (the trees' copies and folds are in modelled_cost).
  const double folds = 3.0 * P * static_cast<double>(S) * m.perByte;
  const double gather =
      folds + (piggyback ? m.beta * static_cast<double>(P - 1) * static_cast<double>(S)
                         : comm::modelled_cost(Collective::allgather, Algorithm::vendor, P, S, m));
  // The canonical tree is rooted at node 0: another node gets the result one hop later.
  double tree = resultNode == kEveryNode
                    ? comm::modelled_cost(Collective::allreduce, Algorithm::binomial, P, S, m)
                    : comm::modelled_cost(Collective::reduce, Algorithm::binomial, P, S, m);
  if (resultNode != kEveryNode && resultNode != 0) tree += m.alpha + m.beta * S;
  const double doubling =
      comm::modelled_cost(Collective::allreduce, Algorithm::recursive_doubling, P, S, m);
  // Ties go to the simpler exchange, then to the tree (less traffic in all).
  if (gather <= tree && gather <= doubling) return NodeStage::allgather;
  return tree <= doubling ? NodeStage::tree : NodeStage::recursive_doubling;
}

void ReduceQueue::prepare(unsigned T) {
  threads_ = T;
  if (requests_.size() < T) requests_.resize(T);
  for (auto& p : predicted_) p.clear();
  subsetPending_.clear();
  // Which jobs reduce over a subset of the nodes: worked out again when messages or the layout
  // changed since the last run (every node alike: the same jobs, the same layout).
  if (subsetsTopology_ == context_.topology() && subsetsComputed_) return;
  subsets_.clear();
  const int P = context_.layout().numNodes;
  std::vector<int> nodes;
  for (const auto& [id, job] : jobs_) {
    job->nodes(P, nodes);
    if (static_cast<int>(nodes.size()) < P) subsets_.emplace(id, nodes);
  }
  subsetsTopology_ = context_.topology();
  subsetsComputed_ = true;
}

void ReduceQueue::add(ReduceBase* job) {
  jobs_[job->id()] = job;
  subsetsComputed_ = false;
}

void ReduceQueue::remove(std::uint64_t id) {
  jobs_.erase(id);
  subsetsComputed_ = false;
}

void ReduceQueue::request(ReduceBase* job) {
  const auto t = static_cast<std::size_t>(PostOffice::thread());
  if (requests_.size() <= t) {
    // Only reached outside a run (requests_ is sized before each run's parallel region).
#pragma omp critical(antler_reduce_requests)
    if (requests_.size() <= t) requests_.resize(t + 1);
  }
  requests_[t].push_back(job);
}

void ReduceQueue::predictPrimary(unsigned tick, unsigned t, unsigned T) {
  for (ReduceBase* j : predicted_[tick]) j->primary(t, T);
}

namespace {
// Appends job's partial 0 with its length in front: {length u64, bytes}.
void put_partial(Writer& w, const ReduceBase& job) {
  ByteBuffer& b = w.buffer();
  const std::size_t at = b.size();
  w.put<std::uint64_t>(0);
  job.save(w);
  const std::uint64_t len = b.size() - at - 8;
  std::memcpy(b.data() + at, &len, 8);
}

// Serialized partials of jobs: {count u64, checksum u64, then per job {length u64, bytes}}.
void save_partials(Writer& w, const std::vector<ReduceBase*>& jobs) {
  w.put<std::uint64_t>(jobs.size()).put<std::uint64_t>(checksum(jobs));
  for (ReduceBase* j : jobs) put_partial(w, *j);
}
}  // namespace

const ByteBuffer& ReduceQueue::pack(unsigned tick) {
  std::vector<std::uint64_t>& all = requestIds_;
  all.clear();
  for (auto& r : requests_) {
    for (const ReduceBase* j : r) all.push_back(j->id());
    r.clear();
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  attachment_.clear();
  const auto& pred = predicted_[tick];
  // Nothing asked and nothing predicted: no bytes (the exchange can then skip its allgather).
  if (all.empty() && (pred.empty() || context_.layout().numNodes == 1)) return attachment_;
  Writer w(attachment_);
  w.put(all);
  if (!pred.empty() && context_.layout().numNodes > 1) {
    for (ReduceBase* j : pred) j->secondary();
    // Chosen when the prediction was set (below), alike on every node.
    if (predictedStage_[tick] == NodeStage::allgather) save_partials(w, pred);
  }
  return attachment_;
}

void ReduceQueue::unpack(unsigned tick,
                         const std::vector<std::pair<const char*, std::size_t>>& nodes) {
  const unsigned T = threads_;
  std::vector<std::uint64_t>& all = requestIds_;
  all.clear();
  auto& nodeReaders = nodeReaders_;
  nodeReaders.clear();
  for (auto [p, n] : nodes) {
    nodeReaders.emplace_back(p, n);
    Reader& r = nodeReaders.back();
    const auto count = n ? r.get<std::uint64_t>() : 0;  // no bytes: nothing asked
    if (count > r.left() / 8) throw CommError("corrupted reduction requests");
    for (std::uint64_t i = 0; i < count; ++i) all.push_back(r.get<std::uint64_t>());
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  if (!subsets_.empty()) {
    // Jobs over a subset of the nodes leave the all-node path (and its prediction): their
    // members fold them in steps 3-4 and reduce over themselves; the other nodes drop them.
    const int me = context_.layout().node;
    std::erase_if(all, [&](std::uint64_t id) {
      const auto s = subsets_.find(id);
      if (s == subsets_.end()) return false;
      if (std::binary_search(s->second.begin(), s->second.end(), me)) {
        const auto it = jobs_.find(id);
        if (it == jobs_.end())
          throw CommError("reduction request for job " + std::to_string(id) +
                          ", which is no Reduce message's on node " + std::to_string(me));
        it->second->reset(T);
        subsetPending_.push_back(it->second);
      }
      return true;
    });
  }

  auto& pred = predicted_[tick];
  bool hit = !pred.empty() && pred.size() == all.size();
  for (std::size_t i = 0; hit && i < all.size(); ++i) hit = pred[i]->id() == all[i];
  if (hit) {
    foldsRun_ += pred.size();
    // Every node computed the same verdict from the same bytes; the partials are in the readers.
    if (context_.layout().numNodes == 1) {
      for (ReduceBase* j : pred) {
        j->secondary();
        j->finishLocal();
        j->digest();
      }
      return;
    }
    if (predictedStage_[tick] != NodeStage::allgather) {
      // Every node reached this verdict: every node makes the tree's collective now.
      foldByTree(pred, predictedStage_[tick], 0);
      return;
    }
    last_ = NodeStage::allgather;
    const std::uint64_t sum = checksum(pred);
    auto& perJob = scratchReaders_;
    if (perJob.size() < pred.size()) perJob.resize(pred.size());
    for (auto& v : perJob) v.clear();
    for (std::size_t r = 0; r < nodeReaders.size(); ++r) {
      Reader& rd = nodeReaders[r];
      const auto count = rd.get<std::uint64_t>();
      const auto theirSum = rd.get<std::uint64_t>();
      if (count != pred.size() || theirSum != sum)
        throw CommError("nodes disagree on the predicted reductions: node " + std::to_string(r) +
                        " sent " + std::to_string(count) + " partials, node " +
                        std::to_string(context_.layout().node) + " expected " +
                        std::to_string(pred.size()));
      for (std::size_t k = 0; k < pred.size(); ++k) {
        const auto len = rd.get<std::uint64_t>();
        perJob[k].emplace_back(rd.take(len), len);
      }
    }
    for (std::size_t k = 0; k < pred.size(); ++k) {
      pred[k]->tertiary(perJob[k]);
      pred[k]->digest();
    }
    return;
  }
  // A miss: the actual set becomes this tick's prediction and runs the long way this round.
  pending_.clear();
  for (std::uint64_t id : all) {
    const auto it = jobs_.find(id);
    if (it == jobs_.end())
      throw CommError("reduction request for job " + std::to_string(id) +
                      ", which is no Reduce message's on node " +
                      std::to_string(context_.layout().node));
    it->second->reset(T);
    pending_.push_back(it->second);
  }
  pred = pending_;
  // The same choice on every node (the set the nodes agreed on), made once per prediction rather
  // than every round: the model reads the environment.
  predictedStage_[tick] =
      context_.layout().numNodes > 1 ? stageFor(pred, true) : NodeStage::allgather;
}

void ReduceQueue::primary(unsigned t, unsigned T) {
  for (ReduceBase* j : pending_) j->primary(t, T);
  for (ReduceBase* j : subsetPending_) j->primary(t, T);
}

std::uint32_t ReduceQueue::finish(std::uint32_t flags) {
  std::uint32_t out = flags;
  if (!pending_.empty()) {
    out = fold(flags);
    pending_.clear();
  }
  if (!subsetPending_.empty()) {
    // Over each job's own nodes (this node is a member of every one here; ids in order, the
    // same order on every member).
    for (ReduceBase* j : subsetPending_) j->secondary();
    groupByNodes(subsetPending_, scratchGroups_, true);
    subsetPending_.clear();
    foldGroups(scratchGroups_);
  }
  return out;
}

std::uint32_t ReduceQueue::fold(std::uint32_t flags) {
  foldsRun_ += pending_.size();
  for (ReduceBase* j : pending_) j->secondary();
  const NodeLayout& l = context_.layout();
  if (l.numNodes == 1) {
    if (flags & kFlagError) return flags;
    for (ReduceBase* j : pending_) {
      j->finishLocal();
      j->digest();
    }
    return flags;
  }
  const NodeStage stage = stageFor(pending_, false);
  if (stage != NodeStage::allgather) return foldByTree(pending_, stage, flags);
  last_ = NodeStage::allgather;
  // One collective for every pending reduction: {flags, count, id checksum, ids, partials}.
  ByteBuffer& b = scratchBytes_;
  b.clear();
  Writer w(b);
  std::vector<std::uint64_t>& myIds = scratchIds64_;
  myIds.clear();
  for (ReduceBase* j : pending_) myIds.push_back(j->id());
  const std::uint64_t mySum = checksum(pending_);
  w.put<std::uint32_t>(flags).put<std::uint64_t>(mySum).put(myIds);
  for (ReduceBase* j : pending_) put_partial(w, *j);
  std::vector<std::size_t>& counts = scratchCounts_;
  std::vector<char>& all = scratchGathered_;
  comm::algo::allgather_inline(comm_, {b.data(), b.size()}, kInlineBytes, counts, all);

  std::uint32_t any = 0;
  auto& perJob = scratchReaders_;
  if (perJob.size() < pending_.size()) perJob.resize(pending_.size());
  for (auto& v : perJob) v.clear();
  std::size_t off = 0;
  std::string disagreement;
  for (int r = 0; r < l.numNodes; ++r) {
    Reader rd(all.data() + off, counts[r]);
    off += counts[r];
    any |= rd.get<std::uint32_t>();
    const auto sum = rd.get<std::uint64_t>();
    const auto nIds = rd.get<std::uint64_t>();
    bool same = sum == mySum && nIds == myIds.size();
    for (std::uint64_t i = 0; same && i < nIds; ++i) same = rd.get<std::uint64_t>() == myIds[i];
    if (!same) {
      Reader again(all.data() + off - counts[r], counts[r]);
      again.take(12);
      const auto theirs = again.get<std::vector<std::uint64_t>>();
      disagreement = "nodes disagree on the pending reductions: node " + std::to_string(r) +
                     " has [" + ids(theirs) + "], node " + std::to_string(l.node) + " has [" +
                     ids(myIds) + "]";
      continue;
    }
    for (std::size_t k = 0; k < pending_.size(); ++k) {
      const auto len = rd.get<std::uint64_t>();
      perJob[k].emplace_back(rd.take(len), len);
    }
  }
  // Every node saw the same bytes, so every node reaches the same verdict here.
  if (!disagreement.empty()) throw CommError(disagreement);
  if (any & kFlagError) return any | flags;
  for (std::size_t k = 0; k < pending_.size(); ++k) {
    pending_[k]->tertiary(perJob[k]);
    pending_[k]->digest();
  }
  return any | flags;
}

NodeStage ReduceQueue::stageFor(const std::vector<ReduceBase*>& jobs, bool piggyback) const {
  if (forced_ != NodeStage::automatic) return forced_;
  if (const NodeStage e = env_node_stage(); e != NodeStage::automatic) return e;
  return choose_node_stage(comm_.size(), total_bound(jobs), result_node(jobs), piggyback,
                           comm::cost_model());
}

namespace {
// acc becomes the fold of two tree-stage partials of jobs (acc . other, or other . acc). Never
// throws: a failure marks the result, and the first failure's text stays in `error` on the node
// where it happened.
void fold_partials(const std::vector<ReduceBase*>& jobs, ByteBuffer& acc,
                   std::span<const char> other, bool otherOnLeft, int node, std::string& error) {
  ByteBuffer out;
  Writer w(out);
  std::uint32_t flags = 0, status = kFoldOk;
  std::uint64_t sum = 0;
  try {
    Reader ra(acc.data(), acc.size()), ro(other.data(), other.size());
    flags = ra.get<std::uint32_t>();
    flags |= ro.get<std::uint32_t>();
    status = std::max(ra.get<std::uint32_t>(), ro.get<std::uint32_t>());
    sum = ra.get<std::uint64_t>();
    if (ro.get<std::uint64_t>() != sum) status = std::max<std::uint32_t>(status, kFoldDisagree);
    w.put<std::uint32_t>(flags).put<std::uint32_t>(status).put<std::uint64_t>(sum);
    if (status == kFoldOk) {
      ByteBuffer part;
      for (ReduceBase* j : jobs) {
        const auto la = ra.get<std::uint64_t>();
        const char* pa = ra.take(la);
        const auto lo = ro.get<std::uint64_t>();
        const char* po = ro.take(lo);
        part.clear();
        part.append(pa, la);
        j->foldSerialized(part, {po, lo}, otherOnLeft);
        w.put<std::uint64_t>(part.size());
        out.append(part.data(), part.size());
      }
    }
  } catch (const std::exception& e) {
    if (error.empty())
      error = "reduction node stage: folding the partials of node " + std::to_string(node) +
              " failed: " + e.what();
    out.clear();
    Writer(out).put<std::uint32_t>(flags).put<std::uint32_t>(kFoldFailed).put<std::uint64_t>(sum);
  }
  acc = std::move(out);
}
}  // namespace

std::uint32_t ReduceQueue::foldByTree(const std::vector<ReduceBase*>& jobs, NodeStage stage,
                                      std::uint32_t flags) {
  last_ = stage;
  ByteBuffer& b = scratchBytes_;
  b.clear();
  Writer w(b);
  w.put<std::uint32_t>(flags).put<std::uint32_t>(kFoldOk).put<std::uint64_t>(checksum(jobs));
  for (ReduceBase* j : jobs) put_partial(w, *j);
  std::string error;
  comm::Fold f;
  f.fold = [&](ByteBuffer& acc, std::span<const char> other, bool otherOnLeft) {
    fold_partials(jobs, acc, other, otherOnLeft, comm_.rank(), error);
  };
  f.commutative = false;
  comm::Options o;
  const std::size_t bound = total_bound(jobs);
  o.sizeBound = bound ? bound : kUnknownBound;
  const int me = comm_.rank(), who = result_node(jobs);
  bool have = true;
  if (who == kEveryNode || stage == NodeStage::recursive_doubling) {
    o.algorithm =
        stage == NodeStage::tree ? comm::Algorithm::binomial : comm::Algorithm::recursive_doubling;
    comm::algo::allreduce(comm_, b, f, o);
  } else if (who >= 0) {
    o.algorithm = comm::Algorithm::binomial;
    comm::algo::reduce(comm_, b, who, f, o);
    have = me == who;
  } else {
    // Requesters on several nodes: to node 0, then on to each of them.
    o.algorithm = comm::Algorithm::binomial;
    comm::algo::reduce(comm_, b, 0, f, o);
    std::vector<int> roots;
    for (ReduceBase* j : jobs) roots.push_back(j->resultNode());
    std::sort(roots.begin(), roots.end());
    roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
    constexpr int kTagForward = 1;
    if (me == 0) {
      std::vector<comm::Request> sends;
      for (int r : roots)
        if (r != 0) sends.push_back(comm_.isend(r, kTagForward, {b.data(), b.size()}));
      for (auto& q : sends) comm_.wait(q);
    } else {
      have = std::binary_search(roots.begin(), roots.end(), me);
      if (have) b = comm_.recv(0, kTagForward);
    }
  }
  if (!error.empty()) throw CommError(error);
  if (!have) return flags;
  return applyFolded(jobs, b, flags);
}

std::uint32_t ReduceQueue::applyFolded(const std::vector<ReduceBase*>& jobs, const ByteBuffer& b,
                                       std::uint32_t flags) {
  Reader rd(b.data(), b.size());
  const auto all = rd.get<std::uint32_t>();
  const auto status = rd.get<std::uint32_t>();
  if (status == kFoldDisagree) {
    std::vector<std::uint64_t> mine;
    for (ReduceBase* j : jobs) mine.push_back(j->id());
    throw CommError("nodes disagree on the pending reductions (their id checksums differ); node " +
                    std::to_string(context_.layout().node) + " has [" + ids(mine) + "]");
  }
  if (status != kFoldOk)
    throw CommError("reduction node stage: folding the partials failed on another node");
  if (all & kFlagError) return all | flags;
  rd.get<std::uint64_t>();
  for (ReduceBase* j : jobs) {
    const auto len = rd.get<std::uint64_t>();
    Reader one(rd.take(len), len);
    j->setResult(one);
  }
  for (ReduceBase* j : jobs) j->digest();
  return all | flags;
}

void ReduceQueue::setComm(comm::Comm c) {
  reductions_.reset();
  comm_ = std::move(c);
  if (comm_.valid()) reductions_ = std::make_unique<comm::Reductions>(comm_);
}

void ReduceQueue::groupByNodes(const std::vector<ReduceBase*>& jobs, std::vector<NodeGroup>& out,
                               bool cached) const {
  out.clear();
  std::vector<int> scratch;
  for (ReduceBase* j : jobs) {
    const std::vector<int>* nodes = &scratch;
    if (cached)
      nodes = &subsets_.at(j->id());
    else
      j->nodes(context_.layout().numNodes, scratch);
    auto g =
        std::find_if(out.begin(), out.end(), [&](const NodeGroup& x) { return x.nodes == *nodes; });
    if (g == out.end()) {
      out.push_back({*nodes, {}});
      g = out.end() - 1;
    }
    g->jobs.push_back(j);
  }
}

void ReduceQueue::foldGroups(const std::vector<NodeGroup>& groups) {
  if (!reductions_) throw StateError("reductions: the reduce queue has no communicator");
  const int me = context_.layout().node;
  // What a group's merge reads and writes, shared with it: a reduction still in flight when this
  // function leaves by an exception (another group's wait threw) may merge later.
  struct Fold {
    std::vector<ReduceBase*> jobs;
    std::string error;  // a fold that failed on this node
  };
  struct Run {
    std::shared_ptr<Fold> fold;
    comm::Reduction handle;
  };
  std::vector<Run> runs(groups.size());
  // The groups' first messages to each node go together (one message per node, not per group).
  auto batch = reductions_->batch();
  for (std::size_t k = 0; k < groups.size(); ++k) {
    const NodeGroup& g = groups[k];
    foldsRun_ += g.jobs.size();
    ByteBuffer b;
    Writer w(b);
    w.put<std::uint32_t>(0).put<std::uint32_t>(kFoldOk).put<std::uint64_t>(checksum(g.jobs));
    for (ReduceBase* j : g.jobs) put_partial(w, *j);
    auto fold = std::make_shared<Fold>(Fold{g.jobs, {}});
    auto merge = [fold, me](ByteBuffer mine, std::span<const comm::Bytes> kids) {
      for (comm::Bytes c : kids) fold_partials(fold->jobs, mine, c, false, me, fold->error);
      return mine;
    };
    runs[k].fold = fold;
    runs[k].handle =
        reductions_->listReduce(g.nodes, std::move(b), merge, {}, {.id = {}, .toAll = true});
  }
  batch.end();
  for (Run& r : runs) r.handle.wait();
  for (std::size_t k = 0; k < groups.size(); ++k) {
    if (!runs[k].fold->error.empty()) throw CommError(runs[k].fold->error);
    ByteBuffer folded = runs[k].handle.takeResult();
    applyFolded(groups[k].jobs, folded, 0);
  }
}

void ReduceQueue::runNow(const std::vector<ReduceBase*>& jobs, unsigned T) {
  // Grouped in the order of each group's first job (the same on every node, which runs the same
  // command); this node's groups only, each with its partials.
  std::vector<NodeGroup> groups;
  groupByNodes(jobs, groups, false);
  const int me = context_.layout().node;
  std::erase_if(groups, [me](const NodeGroup& g) {
    return !std::binary_search(g.nodes.begin(), g.nodes.end(), me);
  });
  for (const NodeGroup& g : groups)
    for (ReduceBase* j : g.jobs) {
      j->reset(T);
      // The same slices, in the same order, as T threads would fold: the same bits.
      for (unsigned t = 0; t < T; ++t) j->primary(t, T);
      j->secondary();
    }
  foldGroups(groups);
}

void ReduceQueue::clear() {
  for (auto& r : requests_) r.clear();
  pending_.clear();
  subsetPending_.clear();
}

}  // namespace antler
