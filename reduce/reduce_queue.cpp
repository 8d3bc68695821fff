#include "reduce/reduce_queue.hpp"

#include <omp.h>

#include <algorithm>

#include "core/comm/algorithms.hpp"
#include "core/error.hpp"
#include "core/layout.hpp"
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
}  // namespace

ReduceQueue& ReduceQueue::instance() {
  static ReduceQueue q;
  return q;
}

void ReduceQueue::prepare(unsigned T) {
  if (requests_.size() < T) requests_.resize(T);
  for (auto& p : predicted_) p.clear();
}

void ReduceQueue::request(std::uint32_t msgId) {
  const auto t = static_cast<std::size_t>(omp_get_thread_num());
  if (requests_.size() <= t) {
    // Only reached outside a run (requests_ is sized before each run's parallel region).
#pragma omp critical(antler_reduce_requests)
    if (requests_.size() <= t) requests_.resize(t + 1);
  }
  requests_[t].push_back(msgId);
}

void ReduceQueue::predictPrimary(unsigned tick, unsigned t, unsigned T) {
  for (ReduceBase* j : predicted_[tick]) j->primary(t, T);
}

namespace {
// Serialized partials of jobs: {count u64, checksum u64, then per job {length u64, bytes}}.
void save_partials(Writer& w, const std::vector<ReduceBase*>& jobs) {
  w.put<std::uint64_t>(jobs.size()).put<std::uint64_t>(checksum(jobs));
  ByteBuffer& b = w.buffer();
  for (ReduceBase* j : jobs) {
    const std::size_t at = b.size();
    w.put<std::uint64_t>(0);
    j->save(w);
    const std::uint64_t len = b.size() - at - 8;
    std::memcpy(b.data() + at, &len, 8);
  }
}
}  // namespace

const ByteBuffer& ReduceQueue::attachment(unsigned tick) {
  std::vector<std::uint32_t>& all = scratchIds_;
  all.clear();
  for (auto& r : requests_) {
    all.insert(all.end(), r.begin(), r.end());
    r.clear();
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  attachment_.clear();
  Writer w(attachment_);
  w.put(all);
  const auto& pred = predicted_[tick];
  if (!pred.empty() && node_layout().numNodes > 1) {
    for (ReduceBase* j : pred) j->secondary();
    save_partials(w, pred);
  }
  return attachment_;
}

void ReduceQueue::afterExchange(unsigned tick,
                                const std::vector<std::pair<const char*, std::size_t>>& nodes,
                                unsigned T) {
  std::vector<std::uint32_t>& all = scratchIds_;
  all.clear();
  auto& nodeReaders = nodeReaders_;
  nodeReaders.clear();
  for (auto [p, n] : nodes) {
    nodeReaders.emplace_back(p, n);
    Reader& r = nodeReaders.back();
    const auto count = r.get<std::uint64_t>();
    if (count > r.left() / 4) throw CommError("corrupted reduction requests");
    for (std::uint64_t i = 0; i < count; ++i) all.push_back(r.get<std::uint32_t>());
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());

  auto& pred = predicted_[tick];
  bool hit = !pred.empty() && pred.size() == all.size();
  for (std::size_t i = 0; hit && i < all.size(); ++i) hit = pred[i]->id() == all[i];
  if (hit) {
    // Every node computed the same verdict from the same bytes; the partials are in the readers.
    if (node_layout().numNodes == 1) {
      for (ReduceBase* j : pred) {
        j->secondary();
        j->finishLocal();
        j->digest();
      }
      return;
    }
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
                        std::to_string(node_layout().node) + " expected " +
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
  for (std::uint32_t id : all) {
    const Msg* m = MsgTable::instance().get(id);
    if (!m || m->kind() != MsgKind::reduce)
      throw CommError("reduction request for message " + std::to_string(id) +
                      ", which is not a Reduce message");
    ReduceBase* job = static_cast<const ReduceMsg*>(m)->job();
    job->reset(T);
    pending_.push_back(job);
  }
  pred = pending_;
}

void ReduceQueue::primary(unsigned t, unsigned T) {
  for (ReduceBase* j : pending_) j->primary(t, T);
}

std::uint32_t ReduceQueue::finish(std::uint32_t flags) {
  if (pending_.empty()) return flags;
  const std::uint32_t out = fold(flags);
  pending_.clear();
  return out;
}

std::uint32_t ReduceQueue::fold(std::uint32_t flags) {
  for (ReduceBase* j : pending_) j->secondary();
  const NodeLayout& l = node_layout();
  if (l.numNodes == 1) {
    if (flags & kFlagError) return flags;
    for (ReduceBase* j : pending_) {
      j->finishLocal();
      j->digest();
    }
    return flags;
  }
  // One collective for every pending reduction: {flags, count, id checksum, ids, partials}.
  ByteBuffer& b = scratchBytes_;
  b.clear();
  Writer w(b);
  std::vector<std::uint64_t>& myIds = scratchIds64_;
  myIds.clear();
  for (ReduceBase* j : pending_) myIds.push_back(j->id());
  w.put<std::uint32_t>(flags).put<std::uint64_t>(checksum(pending_)).put(myIds);
  for (ReduceBase* j : pending_) {
    const std::size_t at = b.size();
    w.put<std::uint64_t>(0);
    j->save(w);
    const std::uint64_t len = b.size() - at - 8;
    std::memcpy(b.data() + at, &len, 8);
  }
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
    bool same = sum == checksum(pending_) && nIds == myIds.size();
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

void ReduceQueue::runNow(const std::vector<ReduceBase*>& jobs, unsigned T) {
  pending_ = jobs;
  try {
    for (ReduceBase* j : pending_) {
      j->reset(T);
      // The same slices, in the same order, as T threads would fold: the same bits.
      for (unsigned t = 0; t < T; ++t) j->primary(t, T);
    }
    fold(0);
  } catch (...) {
    pending_.clear();
    throw;
  }
  pending_.clear();
}

void ReduceQueue::clear() {
  for (auto& r : requests_) r.clear();
  pending_.clear();
}

}  // namespace antler
