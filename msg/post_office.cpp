#include "msg/post_office.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdlib>

#include "core/comm/algorithms.hpp"
#include "core/comm/collectives.hpp"
#include "core/comm/detail/backend.hpp"
#include "core/comm/star_forest.hpp"
#include "core/context.hpp"
#include "msg/context.hpp"
#include "msg/detail/routes.hpp"
#include "msg/msg.hpp"

namespace antler {

namespace {

/// Bytes per node that travel in the exchange's single fixed-size collective (more costs a
/// second): at least kMinInline, else what the largest node sent last round (every node saw the
/// same counts, so every node picks the same size), at most kMaxInline (every node receives P
/// blocks of it, full or not).
constexpr std::size_t kMinInline = 120, kMaxInline = 4096;
/// On the targeted path the allgather carries no records: its parts are the header (24 bytes)
/// and the contributors' framed bytes, so its blocks start smaller.
constexpr std::size_t kMinInlineTargeted = 40;

/// An exchange part's flag (beside ExchangeFlags): the node has contributors' bytes or deferred
/// sends this round.
constexpr std::uint32_t kHasParts = 1u << 31;
/// Another (targeted path): the node has records for another node this round.
constexpr std::uint32_t kHasTargeted = 1u << 30;

/// A validated view of one batch.
struct BatchView {
  const Element* src;
  std::uint32_t bind, count, recBytes, first;
  bool dense;
  const char* recs;
  bool uniform = false;  // one argument record (recBytes), then a u32 data index per record
};

/// The batch kind (BatchHeader::dense) the targeted exchange writes for records from data
/// indices with field 0 and identical arguments — a step's spikes, all at the step's time: the
/// arguments once, then 4 bytes per record. Only between nodes; queues never hold it.
constexpr std::uint32_t kUniformBatch = 2;

template <class T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

[[noreturn]] void corrupt(const std::string& why) {
  throw CommError("corrupted message buffer: " + why);
}

/// Reads the batch at p and advances p past it. The header alone says how long the batch is, so a
/// batch whose source was deleted after sending is skipped (src == nullptr); otherwise the record
/// size is checked against the source class.
BatchView parse_batch(const ElementTable& table, const char*& p, const char* end) {
  if (static_cast<std::size_t>(end - p) < sizeof(BatchHeader)) corrupt("truncated batch header");
  const auto h = load<BatchHeader>(p);
  p += sizeof(BatchHeader);
  if (h.dense > kUniformBatch) corrupt("bad batch flags " + std::to_string(h.dense));
  BatchView b{table.get(Id(h.src)),    h.bind, h.count, h.recBytes, h.first, h.dense == 1, p,
              h.dense == kUniformBatch};
  if (h.recBytes % 4) corrupt("record size " + std::to_string(h.recBytes));
  if (b.uniform) {
    if (static_cast<std::size_t>(end - p) < h.recBytes ||
        (static_cast<std::size_t>(end - p) - h.recBytes) / 4 < h.count)
      corrupt("truncated batch");
    p += h.recBytes + 4 * static_cast<std::size_t>(h.count);
  } else if (b.dense || h.recBytes) {
    if (!b.dense && h.recBytes < 2 * sizeof(Index))
      corrupt("record size " + std::to_string(h.recBytes));
    if (h.recBytes && static_cast<std::size_t>(end - p) / h.recBytes < h.count)
      corrupt("truncated batch");
    p += static_cast<std::size_t>(h.count) * h.recBytes;
  } else {
    for (std::uint32_t i = 0; i < h.count; ++i) {
      if (static_cast<std::size_t>(end - p) < 2 * sizeof(Index) + 4) corrupt("truncated record");
      const auto len = load<std::uint32_t>(p + 2 * sizeof(Index));
      const std::size_t step = 2 * sizeof(Index) + 4 + padded(len);
      if (static_cast<std::size_t>(end - p) < step) corrupt("truncated record arguments");
      p += step;
    }
  }
  if (!b.src) return b;
  const auto& srcs = b.src->cinfo()->srcFinfos();
  if (h.bind >= srcs.size())
    corrupt("source port " + std::to_string(h.bind) + " of " + b.src->path() + " does not exist");
  const std::ptrdiff_t fixed = srcs[h.bind]->fixedArgBytes();
  std::uint32_t want = 0;
  if (fixed >= 0)
    want = b.dense || b.uniform ? padded(static_cast<std::size_t>(fixed))
                                : padded(2 * sizeof(Index) + static_cast<std::size_t>(fixed));
  if (h.recBytes != want || ((b.dense || b.uniform) && fixed < 0))
    corrupt("record size " + std::to_string(h.recBytes) + " for " + b.src->path() + "." +
            srcs[h.bind]->name() + ", expected " + std::to_string(want));
  if (b.dense && (h.first > b.src->numData() || h.count > b.src->numData() - h.first))
    corrupt("dense batch [" + std::to_string(h.first) + ", +" + std::to_string(h.count) +
            ") outside " + b.src->path());
  return b;
}

/// Calls fn(d, f, args, argBytes) for every record of b.
template <class Fn>
void for_each_record(const BatchView& b, Fn&& fn) {
  const char* p = b.recs;
  if (b.dense) {
    for (std::uint32_t i = 0; i < b.count; ++i, p += b.recBytes)
      fn(b.first + i, Index{0}, p, std::size_t{b.recBytes});
    return;
  }
  if (b.uniform) {
    const char* idx = p + b.recBytes;
    for (std::uint32_t i = 0; i < b.count; ++i)
      fn(load<Index>(idx + 4 * static_cast<std::size_t>(i)), Index{0}, p, std::size_t{b.recBytes});
    return;
  }
  for (std::uint32_t i = 0; i < b.count; ++i) {
    const auto d = load<Index>(p);
    const auto f = load<Index>(p + sizeof(Index));
    if (b.recBytes) {
      fn(d, f, p + 2 * sizeof(Index), std::size_t{b.recBytes - 2 * sizeof(Index)});
      p += b.recBytes;
    } else {
      const auto len = load<std::uint32_t>(p + 2 * sizeof(Index));
      fn(d, f, p + 2 * sizeof(Index) + 4, std::size_t{len});
      p += 2 * sizeof(Index) + 4 + padded(len);
    }
  }
}

}  // namespace

void PostOffice::sendInBulk() {
  throw MsgError(std::string("send: a function that returns what it sends on '") + bulkPort_ +
                 "' (a bulk send: proc_sending / SrcFinfo::sendEach) sent a message itself; it "
                 "may only compute and return the value, or use the ordinary proc with send()");
}

thread_local constinit Outbox* PostOffice::current_ = nullptr;
thread_local constinit int PostOffice::thread_ = -1;
thread_local constinit const char* PostOffice::bulkPort_ = nullptr;

const char* to_string(ExchangeMode m) {
  return m == ExchangeMode::targeted ? "targeted" : "allgather";
}

PostOffice::PostOffice(Context& context)
    : context_(context),
      routes_(std::make_unique<detail::Routes>()),
      outPayloads_(std::make_unique<comm::Payloads>()),
      inPayloads_(std::make_unique<comm::Payloads>()) {
  setNumThreads(1);
}

PostOffice::~PostOffice() = default;

std::uint64_t PostOffice::bytesReceived() const {
  std::uint64_t n = comm_.valid() ? comm_.stats().bytesReceived : 0;
  if (forest_) n += forest_->comm().stats().bytesReceived;
  return n;
}

std::uint64_t PostOffice::messagesSent() const {
  std::uint64_t n = comm_.valid() ? comm_.stats().messagesSent : 0;
  if (forest_) n += forest_->comm().stats().messagesSent;
  return n;
}

std::size_t PostOffice::routeEntries() const {
  return routes_->size();
}

void PostOffice::prepareRun() {
  const int P = context_.layout().numNodes;
  if (P == 1) {
    mode_ = ExchangeMode::allgather;
    return;
  }
  // One collective per run: did the topology change on any node?
  if (!comm::algo::any(comm_, routesTopology_ != context_.topology())) {
    runStartBytes_ = bytesReceived();
    return;
  }
  routes_->build(context_);
  // The choice, from agreed values: the environment's (every node must say the same) and the
  // routes' counts summed over the nodes. Until this succeeds on every node, the next run tries
  // again and this one takes the allgather.
  mode_ = ExchangeMode::allgather;
  forest_.reset();
  routesTopology_ = ~std::uint64_t{0};
  int want = 0;  // 0 automatic, 1 allgather, 2 targeted, -1 not a valid name
  std::string env;
  if (const char* e = std::getenv("ANTLER_EXCHANGE"); e && *e) {
    env = e;
    want = env == "allgather" ? 1 : env == "targeted" ? 2 : env == "automatic" ? 0 : -1;
  }
  const int lo = comm::allreduce(comm_, want, comm::ops::min{});
  const int hi = comm::allreduce(comm_, want, comm::ops::max{});
  if (lo < 0)
    throw ValueError("ANTLER_EXCHANGE=" + quoted(env) +
                     " on some node (valid: automatic, allgather, targeted)");
  if (lo != hi) throw ValueError("ANTLER_EXCHANGE differs between nodes");
  // Automatic: the allgather delivers every record to P - 1 nodes, the targeted path to the
  // nodes its source reaches. Targeted when that is at most half (bench/exchange: at -n 2 the
  // local network's targeted step takes 0.84x the allgather's, the random demo network's 1.01x;
  // oversubscribed at -n 4 and 8 the forced targeted path is 1.14-1.24x on the demo network).
  // A model without messages between nodes keeps the allgather (nothing to gain).
  const std::uint64_t both[2] = {routes_->rows(), routes_->reach()};
  std::uint64_t sums[2] = {0, 0};
  comm_.backend().vendorAllreduce(both, sums, 2, comm::Prim::u64, comm::OpKind::sum);
  const bool targeted = want == 2 || (want == 0 && sums[0] > 0 &&
                                      2 * sums[1] <= sums[0] * static_cast<std::uint64_t>(P - 1));
  if (!targeted) {
    routesTopology_ = context_.topology();
    runStartBytes_ = bytesReceived();
    return;
  }
  const auto& targets = routes_->targets();
  std::vector<comm::SfNode> roots;
  for (int n : targets) roots.push_back({n, 0});
  forest_ = std::make_unique<comm::StarForest>(comm_);
  // Point-to-point along the forest's edges: a payload per target node, nothing to the others
  // (ANTLER_SF_BACKEND still forces another).
  if (const char* sf = std::getenv("ANTLER_SF_BACKEND"); !sf || !*sf)
    forest_->setBackend(comm::SfBackend::p2p);
  const auto leaves = static_cast<std::int64_t>(roots.size());
  forest_->setGraph(1, leaves, {}, std::move(roots));
  forest_->setUp();
  mode_ = ExchangeMode::targeted;
  forestExpected_ = true;
  slotOf_.assign(static_cast<std::size_t>(P), -1);
  for (std::size_t k = 0; k < targets.size(); ++k)
    slotOf_[static_cast<std::size_t>(targets[k])] = static_cast<int>(k);
  outTargeted_.resize(targets.size());
  routesTopology_ = context_.topology();
  runStartBytes_ = bytesReceived();
}

Outbox& PostOffice::deferredOutbox(const Element& sender) {
  return msg_context(sender).post().deferredOutbox();
}

void PostOffice::setNumThreads(unsigned n) {
  if (n == 0) n = 1;
  // Keep what is queued: deferred sends from Shell calls survive a thread-count change.
  std::vector<Outbox> keep(std::make_move_iterator(deferredOut_.begin()),
                           std::make_move_iterator(deferredOut_.end()));
  process_.assign(n, Outbox{});
  deferredIn_.assign(n, Outbox{});
  deferredOut_.assign(n, Outbox{});
  for (auto& o : deferredIn_) o.setUnbatched(true);
  for (auto& o : deferredOut_) o.setUnbatched(true);
  // Old deferred sends move to queue 0 (their relative order is restored by the sort anyway).
  for (auto& o : keep) deferredOut_[0].appendRaw(o);
}

bool PostOffice::pending() const {
  for (auto& o : deferredOut_)
    if (!o.empty()) return true;
  for (auto& o : process_)
    if (!o.empty()) return true;
  return false;
}

void PostOffice::clear() {
  for (auto* v : {&process_, &deferredIn_, &deferredOut_})
    for (auto& o : *v) o.clear();
  deferredPlan_.clear();
  spans_.clear();
}

PostOffice::Span PostOffice::segment(const Outbox& o, std::size_t j) {
  const auto& ends = o.segmentEnds();
  const std::size_t b = j == 0 ? 0 : ends[j - 1];
  return Span{o.bytes().data() + b, o.bytes().data() + ends[j]};
}

const ByteBuffer& PostOffice::contributions(unsigned tick) {
  contributions_.clear();
  Writer w(contributions_);
  for (ExchangeContributor* c : contributors_) {
    const ByteBuffer& b = c->pack(tick);
    w.put<std::uint64_t>(b.size());
    contributions_.append(b.data(), b.size());
  }
  return contributions_;
}

void PostOffice::unpackContributions(unsigned tick) {
  std::vector<Reader>& nodes = contributionReaders_;  // scratch: a round allocates nothing
  nodes.clear();
  for (auto [p, n] : attachments_) nodes.emplace_back(p, n);
  for (ExchangeContributor* c : contributors_) {
    perNode_.clear();
    for (Reader& r : nodes) {
      const auto n = r.get<std::uint64_t>();
      perNode_.emplace_back(r.take(n), n);
    }
    c->unpack(tick, perNode_);
  }
}

std::uint32_t PostOffice::exchange(std::uint32_t flags, unsigned tick) {
  const ByteBuffer& attachment = contributions(tick);
  const unsigned T = numThreads();
  for (unsigned t = 0; t < T; ++t) {
    std::swap(deferredIn_[t], deferredOut_[t]);
    deferredOut_[t].clear();
  }
  const std::size_t nseg = process_[0].segmentEnds().size();
  // Scratch kept between rounds: a round allocates nothing once the sizes have settled.
  deferredSpans_.clear();
  if (segSpans_.size() < nseg) segSpans_.resize(nseg);
  for (auto& v : segSpans_) v.clear();
  attachments_.clear();

  if (context_.layout().numNodes == 1) {
    attachments_.emplace_back(attachment.data(), attachment.size());
    if (flags & kFlagError) return flags;
    for (unsigned t = 0; t < T; ++t) {
      if (process_[t].segmentEnds().size() != nseg)
        throw InternalError("threads processed different numbers of elements");
      const auto& b = deferredIn_[t].bytes();
      deferredSpans_.push_back({b.data(), b.data() + b.size()});
    }
    for (std::size_t j = 0; j < nseg; ++j)
      for (unsigned t = 0; t < T; ++t) segSpans_[j].push_back(segment(process_[t], j));
    plan(nseg);
    return flags;
  }
  const bool targeted = mode_ == ExchangeMode::targeted;
  if (targeted) {
    // The records leave first and travel while the small allgather runs. What goes wrong here
    // is this node's alone (the others parse other bytes): it rides in this round's flags, so
    // that every node stops at this round, and the clock takes it (takeError).
    try {
      packTargeted(nseg);
    } catch (...) {
      targetedError_ = std::current_exception();
      for (auto& b : outTargeted_) b.clear();
      outPayloads_->clear();
      for (std::size_t k = 0; k < outTargeted_.size(); ++k) outPayloads_->push_back("");
    }
    if (targetedError_) flags |= kFlagError;
    for (const auto& b : outTargeted_)
      if (!b.empty()) flags |= kHasTargeted;
    inPayloads_->clear();  // (a reducev merges into what the roots hold)
    // The forest's round runs beside the collective when last round's agreed answer says some
    // node had records for another; otherwise (a model that only reduces between nodes) it runs
    // after the collective, and only where this round's agreed flags say a node has records.
    if (forestExpected_) forest_->reducevBegin(*outPayloads_, *inPayloads_);
  }
  // On the targeted path, a round where no node has contributors' bytes or deferred sends needs
  // only the flags: one all-reduce of three words (flags, and the segment count both ways, so
  // that a disagreement shows), no P-sized buffer. Whether to expect parts is last round's
  // agreed answer: a model that reduces every step goes straight to the allgather.
  bool quick = false;
  std::uint32_t quickFlags = 0;
  std::string disagreement;
  try {
    std::uint64_t dbytes = 0;
    for (unsigned t = 0; t < T; ++t) dbytes += deferredIn_[t].bytes().size();
    const bool mine = attachment.size() > 8 * contributors_.size() || dbytes > 0;
    if (targeted && !expectParts_) {
      const auto ns = static_cast<std::uint32_t>(nseg);
      std::uint32_t in[3] = {flags | (mine ? kHasParts : 0u), ns, ~ns}, out[3] = {0, 0, 0};
      comm_.backend().vendorAllreduce(in, out, 3, comm::Prim::u32, comm::OpKind::bor);
      quick = !(out[0] & kHasParts);
      quickFlags = out[0];
      if (quick && (out[1] & out[2]))
        disagreement = "nodes disagree on the elements processed this tick (node " +
                       std::to_string(context_.layout().node) + " has " + std::to_string(nseg) +
                       ")";
    }
    if (!quick) {
      pack(flags, attachment, nseg, /*segments=*/!targeted);
      comm::algo::allgather_inline(comm_, {packed_.data(), packed_.size()}, inlineBytes_, counts_,
                                   gathered_);
    }
  } catch (...) {
    if (targeted && forestExpected_) forest_->reducevEnd(*outPayloads_, *inPayloads_);
    throw;
  }
  if (targeted && forestExpected_) forest_->reducevEnd(*outPayloads_, *inPayloads_);
  std::uint32_t all = 0;
  if (quick) {
    // Every node's contributions are empty: each contributor gets P empty parts.
    noParts_.resize(8 * contributors_.size(), 0);
    for (int r = 0; r < context_.layout().numNodes; ++r)
      attachments_.emplace_back(noParts_.data(), noParts_.size());
    all = quickFlags;
    expectParts_ = false;
  } else {
    // The steady state's sizes repeat: next round's block fits this round's largest part.
    const std::size_t largest = *std::max_element(counts_.begin(), counts_.end());
    inlineBytes_ =
        std::clamp((largest + 7) / 8 * 8, targeted ? kMinInlineTargeted : kMinInline, kMaxInline);
    all = unpack(nseg, disagreement);
    expectParts_ = (all & kHasParts) != 0;
  }
  if (targeted) {
    // Every node saw the same flags: the same choice everywhere.
    const bool agreed = (all & kHasTargeted) != 0;
    if (!forestExpected_ && agreed && !(all & kFlagError))
      forest_->reducev(*outPayloads_, *inPayloads_);
    forestExpected_ = agreed;
    ++(agreed ? xstats_.forestRounds : xstats_.forestRoundsSkipped);
  }
  all &= ~(kHasParts | kHasTargeted);
  if (all & kFlagError) return all;
  if (!disagreement.empty()) throw CommError(disagreement);
  if (targeted) {
    try {
      unpackTargeted(nseg);
    } catch (...) {
      // This node's alone: nothing remote is delivered this round; the clock takes the error
      // (takeError) and the next round's flags, or the run's closing agreement, carry it.
      targetedError_ = std::current_exception();
      for (std::size_t j = 0; j < nseg; ++j) segSpans_[j].clear();
    }
  }
  plan(nseg);
  return all;
}

// The targeted payload for one node: {u32 source node, u32 bytes after this header}, then per
// segment with records for it {u32 segment, u32 bytes, batches}. The batches keep the source's
// order; a batch keeps only the records whose source entry has a target on that node (a dense
// batch stays dense over each run of consecutive entries).
void PostOffice::packTargeted(std::size_t nseg) {
  const unsigned T = numThreads();
  const std::uint32_t me = static_cast<std::uint32_t>(context_.layout().node);
  const std::size_t K = outTargeted_.size();
  constexpr std::size_t npos = ~std::size_t{0};
  // Per target node, scratch kept between rounds: where its open segment and sub-batch start,
  // the sub-batch's record count and (dense runs) the data index it continues with.
  auto& segAt = tgtSegAt_;
  auto& batchAt = tgtBatchAt_;
  auto& counts = tgtCount_;
  auto& next = tgtNext_;
  segAt.assign(K, npos);
  batchAt.assign(K, npos);
  counts.assign(K, 0);
  next.assign(K, 0);
  for (auto& b : outTargeted_) {
    b.clear();
    const std::uint32_t head[2] = {me, 0};
    b.append(head, sizeof head);
  }
  auto openSegment = [&](std::size_t k, std::size_t j) {
    if (segAt[k] != npos) return;
    segAt[k] = outTargeted_[k].size();
    const std::uint32_t head[2] = {static_cast<std::uint32_t>(j), 0};
    outTargeted_[k].append(head, sizeof head);
  };
  // Writes the open sub-batch's record count into its header.
  auto close = [&](std::size_t k) {
    if (batchAt[k] == npos) return;
    std::memcpy(outTargeted_[k].data() + batchAt[k] + offsetof(BatchHeader, count), &counts[k],
                sizeof counts[k]);
    batchAt[k] = npos;
  };
  for (std::size_t j = 0; j < nseg; ++j) {
    std::fill(segAt.begin(), segAt.end(), npos);
    for (unsigned t = 0; t < T; ++t) {
      if (j >= process_[t].segmentEnds().size()) continue;
      const Span s = segment(process_[t], j);
      const char* p = s.begin;
      while (p < s.end) {
        const char* batchBegin = p;
        const BatchView b = parse_batch(context_.elements(), p, s.end);
        if (!b.src) continue;
        const detail::Routes::Port* port = routes_->port(b.src->id().value, b.bind);
        if (!port) continue;
        if (port->toAll) {  // every node: the batch as it is
          for (std::size_t k = 0; k < K; ++k) {
            openSegment(k, j);
            outTargeted_[k].append(batchBegin, static_cast<std::size_t>(p - batchBegin));
          }
          xstats_.recordsSent += static_cast<std::uint64_t>(b.count) * K;
          continue;
        }
        // Indexed records of fixed size, all of field 0 with the same arguments (a step's
        // spikes): sent as a uniform batch, the arguments once and 4 bytes per record.
        bool uniform = !b.dense && b.recBytes > 2 * sizeof(Index) && b.count > 1;
        const std::size_t argBytes = uniform ? b.recBytes - 2 * sizeof(Index) : 0;
        for (std::uint32_t i = 0; uniform && i < b.count; ++i) {
          const char* r = b.recs + static_cast<std::size_t>(i) * b.recBytes;
          uniform = load<Index>(r + sizeof(Index)) == 0 &&
                    std::memcmp(r + 2 * sizeof(Index), b.recs + 2 * sizeof(Index), argBytes) == 0;
        }
        const char* rec = b.recs;
        for (std::uint32_t i = 0; i < b.count; ++i) {
          Index d;
          std::size_t size;
          if (b.dense) {
            d = b.first + i;
            size = b.recBytes;
          } else {
            d = load<Index>(rec);
            size = b.recBytes ? b.recBytes
                              : 2 * sizeof(Index) + 4 + padded(load<std::uint32_t>(rec + 8));
          }
          auto [n0, n1] = port->row(d);
          for (const std::int32_t* n = n0; n != n1; ++n) {
            const auto k = static_cast<std::size_t>(slotOf_[static_cast<std::size_t>(*n)]);
            ByteBuffer& out = outTargeted_[k];
            openSegment(k, j);
            if (batchAt[k] == npos || (b.dense && next[k] != d)) {
              close(k);
              batchAt[k] = out.size();
              counts[k] = 0;
              if (uniform) {
                const BatchHeader h{
                    b.src->id().value, b.bind, 0, static_cast<std::uint32_t>(argBytes), 0,
                    kUniformBatch};
                out.append(&h, sizeof h);
                out.append(b.recs + 2 * sizeof(Index), argBytes);
              } else {
                const BatchHeader h{b.src->id().value, b.bind,          0,
                                    b.recBytes,        b.dense ? d : 0, b.dense ? 1u : 0u};
                out.append(&h, sizeof h);
              }
            }
            ++counts[k];
            next[k] = d + 1;
            if (uniform)
              out.append(&d, sizeof d);
            else
              out.append(rec, size);
            ++xstats_.recordsSent;
          }
          rec += size;
        }
        for (std::size_t k = 0; k < K; ++k) close(k);  // the source batch ends
      }
    }
    for (std::size_t k = 0; k < K; ++k)
      if (segAt[k] != npos) {
        const auto bytes = static_cast<std::uint32_t>(outTargeted_[k].size() - segAt[k] - 8);
        std::memcpy(outTargeted_[k].data() + segAt[k] + 4, &bytes, 4);
      }
  }
  outPayloads_->clear();
  for (ByteBuffer& b : outTargeted_) {
    if (b.size() == 8) b.clear();  // nothing for this node: an empty payload
    if (!b.empty()) {
      const auto bytes = static_cast<std::uint32_t>(b.size() - 8);
      std::memcpy(b.data() + 4, &bytes, 4);
    }
    outPayloads_->push_back(std::span<const char>(b.data(), b.size()));
    xstats_.bytesSent += b.size();
  }
  ++xstats_.steps;
}

void PostOffice::unpackTargeted(std::size_t nseg) {
  // Every node's part arrived in node order (the forest's documented order); this node's own
  // segments go between those of lower and higher nodes.
  const unsigned T = numThreads();
  const int me = context_.layout().node;
  for (std::size_t j = 0; j < nseg; ++j) segSpans_[j].clear();
  const std::span<const char> all =
      inPayloads_->size() ? (*inPayloads_)[0] : std::span<const char>{};
  xstats_.bytesReceived += all.size();
  Reader r(all.data(), all.size());
  bool mineDone = false;
  auto mine = [&] {
    for (std::size_t j = 0; j < nseg; ++j)
      for (unsigned t = 0; t < T; ++t)
        if (j < process_[t].segmentEnds().size()) segSpans_[j].push_back(segment(process_[t], j));
    mineDone = true;
  };
  int last = -1;
  while (r.left()) {
    const auto from = r.get<std::uint32_t>();
    const auto bytes = r.get<std::uint32_t>();
    if (static_cast<int>(from) <= last || static_cast<int>(from) == me ||
        static_cast<int>(from) >= context_.layout().numNodes)
      throw CommError("corrupted targeted exchange: a part from node " + std::to_string(from) +
                      " after node " + std::to_string(last));
    last = static_cast<int>(from);
    if (!mineDone && static_cast<int>(from) > me) mine();
    Reader part(r.take(bytes), bytes);
    while (part.left()) {
      const auto j = part.get<std::uint32_t>();
      const auto n = part.get<std::uint32_t>();
      if (j >= nseg)
        throw CommError("corrupted targeted exchange: segment " + std::to_string(j) + " of " +
                        std::to_string(nseg) + " from node " + std::to_string(from));
      const char* q = part.take(n);
      segSpans_[j].push_back({q, q + n});
      // Records, for the counters.
      const char* p = q;
      while (p < q + n) xstats_.recordsReceived += parse_batch(context_.elements(), p, q + n).count;
    }
  }
  if (!mineDone) mine();
}

void PostOffice::pack(std::uint32_t flags, const ByteBuffer& attachment, std::size_t nseg,
                      bool segments) {
  // {flags u32, nseg u32, attachment bytes u64, deferred bytes u64, segment bytes u64 x nseg},
  // then the bytes: attachment, deferred, then segment by segment with threads in order. The
  // targeted path (segments = false) leaves out the segments and their sizes.
  const unsigned T = numThreads();
  packed_.clear();
  Writer w(packed_);
  std::uint64_t deferredBytes = 0;
  for (unsigned t = 0; t < T; ++t) deferredBytes += deferredIn_[t].bytes().size();
  if (attachment.size() > 8 * contributors_.size() || deferredBytes > 0) flags |= kHasParts;
  w.put<std::uint32_t>(flags).put<std::uint32_t>(static_cast<std::uint32_t>(nseg));
  w.put<std::uint64_t>(attachment.size());
  std::uint64_t dbytes = 0;
  for (unsigned t = 0; t < T; ++t) dbytes += deferredIn_[t].bytes().size();
  w.put<std::uint64_t>(dbytes);
  for (std::size_t j = 0; j < nseg && segments; ++j) {
    std::uint64_t n = 0;
    for (unsigned t = 0; t < T; ++t)
      if (j < process_[t].segmentEnds().size()) {
        const Span s = segment(process_[t], j);
        n += static_cast<std::uint64_t>(s.end - s.begin);
      }
    w.put<std::uint64_t>(n);
  }
  packed_.append(attachment.data(), attachment.size());
  for (unsigned t = 0; t < T; ++t)
    packed_.append(deferredIn_[t].bytes().data(), deferredIn_[t].bytes().size());
  for (std::size_t j = 0; j < nseg && segments; ++j)
    for (unsigned t = 0; t < T; ++t)
      if (j < process_[t].segmentEnds().size()) {
        const Span s = segment(process_[t], j);
        packed_.append(s.begin, static_cast<std::size_t>(s.end - s.begin));
      }
}

std::uint32_t PostOffice::unpack(std::size_t nseg, std::string& disagreement) {
  // Bounds-checked: a corrupted buffer is a CommError, and every node parses the same bytes, so
  // every node reaches the same verdict.
  const NodeLayout& l = context_.layout();
  std::uint32_t all = 0;
  std::size_t off = 0;
  for (int r = 0; r < l.numNodes; ++r) {
    Reader rd(gathered_.data() + off, counts_[r]);
    off += counts_[r];
    all |= rd.get<std::uint32_t>();
    const auto ns = rd.get<std::uint32_t>();
    const auto ab = rd.get<std::uint64_t>();
    const auto db = rd.get<std::uint64_t>();
    if (ns != nseg && disagreement.empty())
      disagreement = "nodes disagree on the elements processed this tick: node " +
                     std::to_string(r) + " sent " + std::to_string(ns) + " segments, node " +
                     std::to_string(l.node) + " has " + std::to_string(nseg);
    // The targeted path sends no segments here (and so no sizes): they travel by the forest.
    const std::uint32_t nsizes = mode_ == ExchangeMode::targeted ? 0 : ns;
    const char* sizes = rd.take(static_cast<std::size_t>(nsizes) * 8);
    attachments_.emplace_back(rd.take(ab), ab);
    const char* p = rd.take(db);
    deferredSpans_.push_back({p, p + db});
    for (std::uint32_t j = 0; j < nsizes; ++j) {
      std::uint64_t x;
      std::memcpy(&x, sizes + 8 * j, 8);
      const char* q = rd.take(x);
      if (j < nseg) segSpans_[j].push_back({q, q + x});
    }
  }
  return all;
}

void PostOffice::plan(std::size_t nseg) {
  deferredPlan_.clear();
  for (const Span& s : deferredSpans_) {
    const char* p = s.begin;
    while (p < s.end) {
      const BatchView b = parse_batch(context_.elements(), p, s.end);
      if (!b.src) continue;
      for_each_record(b, [&](Index d, Index f, const char* args, std::size_t n) {
        deferredPlan_.push_back(
            Record{b.src->id().value, b.bind, d, f, args, static_cast<std::uint32_t>(n)});
      });
    }
  }
  std::stable_sort(deferredPlan_.begin(), deferredPlan_.end(),
                   [](const Record& a, const Record& b) {
                     if (a.src != b.src) return a.src < b.src;
                     if (a.d != b.d) return a.d < b.d;
                     return a.f < b.f;
                   });
  spans_.clear();
  for (std::size_t j = 0; j < nseg; ++j)
    for (const Span& s : segSpans_[j])
      if (s.end != s.begin) spans_.push_back(s);
}

void PostOffice::deliver(unsigned t) const {
  const unsigned T = numThreads();
  for (const Record& r : deferredPlan_) {
    const Element* src = context_.elements().get(Id(r.src));
    if (!src) continue;
    for (const Conn& c : src->conns(r.bind)) {
      auto [lo, hi] = thread_slice(c.msg->dest(), t, T);
      c.msg->deliver(c.func, r.d, r.f, r.args, r.argBytes, lo, hi);
    }
  }
  for (const Span& s : spans_) deliverSpan(s, t);
}

namespace {
/// One record of a batch, as for_each_record gives it.
struct RecordRef {
  Index d, f;
  const char* args;
  std::size_t n;
};
}  // namespace

void PostOffice::deliverSpan(Span s, unsigned t) const {
  const unsigned T = numThreads();
  const char* p = s.begin;
  struct Slice {
    const Msg* msg;
    const DestFinfoBase* func;
    Index lo, hi;
  };
  std::vector<Slice> slices;
  while (p < s.end) {
    const BatchView b = parse_batch(context_.elements(), p, s.end);
    if (!b.src) continue;
    const auto& conns = b.src->conns(b.bind);
    if (conns.empty()) continue;
    slices.clear();
    for (const Conn& c : conns) {
      auto [lo, hi] = thread_slice(c.msg->dest(), t, T);
      slices.push_back({c.msg, c.func, lo, hi});
    }
    if (slices.size() == 1) {
      const Slice& sl = slices[0];
      // The fast path: a dense run of sends through a OneToOne or Diagonal message is a contiguous
      // run of destination entries: one virtual call for the whole run.
      const MsgKind k = sl.msg->kind();
      if (b.dense && !b.src->isField() && !sl.msg->dest()->isField() &&
          (k == MsgKind::oneToOne || k == MsgKind::diagonal)) {
        const long shift =
            k == MsgKind::diagonal ? static_cast<const DiagonalMsg*>(sl.msg)->stride() : 0;
        // Destination data index of record i is first + i + shift; keep those in [lo, hi).
        const long d0 = static_cast<long>(b.first) + shift;
        const long a = std::max<long>(d0, sl.lo), e = std::min<long>(d0 + b.count, sl.hi);
        if (a < e)
          sl.func->callDense(sl.msg->dest(), b.recs + static_cast<std::size_t>(a - d0) * b.recBytes,
                             b.recBytes, static_cast<Index>(a), static_cast<std::size_t>(e - a));
        continue;
      }
      if (k == MsgKind::sparse && !b.dense && b.count > 1) {
        // Each row of a Sparse message starts cold (its starts, first indices and slots lie
        // where no earlier row left them): the rows a few records ahead are fetched while this
        // one is delivered. (A dense batch walks the rows in order, as the hardware fetches.)
        auto* sm = static_cast<const SparseMsg*>(sl.msg);
        thread_local std::vector<RecordRef> recs;
        recs.clear();
        for_each_record(b, [&](Index d, Index f, const char* args, std::size_t n) {
          recs.push_back({d, f, args, n});
        });
        constexpr std::size_t kFar = 4, kNear = 2;
        const std::size_t K = recs.size();
        for (std::size_t i = 0; i < std::min(K, kFar); ++i)
          if (recs[i].d < sm->numRows()) sm->fetchRow(recs[i].d);
        for (std::size_t i = 0; i < K; ++i) {
          if (i + kFar < K && recs[i + kFar].d < sm->numRows()) sm->fetchRow(recs[i + kFar].d);
          if (i + kNear < K && recs[i + kNear].d < sm->numRows())
            sm->fetchEntries(recs[i + kNear].d);
          const RecordRef& r = recs[i];
          sm->deliver(sl.func, r.d, r.f, r.args, r.n, sl.lo, sl.hi);
        }
        continue;
      }
      for_each_record(b, [&](Index d, Index f, const char* args, std::size_t n) {
        sl.msg->deliver(sl.func, d, f, args, n, sl.lo, sl.hi);
      });
    } else {
      // Record by record, then message by message: the order a target sees does not depend on
      // where the batch was cut by thread or node boundaries.
      for_each_record(b, [&](Index d, Index f, const char* args, std::size_t n) {
        for (const Slice& sl : slices) sl.msg->deliver(sl.func, d, f, args, n, sl.lo, sl.hi);
      });
    }
  }
}

void PostOffice::finishDelivery() {
  for (auto& o : process_) o.clear();
  for (auto& o : deferredIn_) o.clear();
  deferredPlan_.clear();
  spans_.clear();
}

}  // namespace antler
