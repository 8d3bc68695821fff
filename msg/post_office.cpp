#include "msg/post_office.hpp"

#include <algorithm>

#include "core/element.hpp"
#include "core/layout.hpp"
#include "core/mpi.hpp"
#include "msg/msg.hpp"

namespace antler {

namespace {

/// Bytes per node that travel in the exchange's single fixed-size collective; more costs a second.
constexpr std::size_t kInlineBytes = 512;

/// A validated view of one batch.
struct BatchView {
  const Element* src;
  std::uint32_t bind, count, recBytes;
  const char* recs;
};

template <class T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

[[noreturn]] void corrupt(const std::string& why) { throw CommError("corrupted message buffer: " + why); }

/// Reads the batch at p and advances p past it. The header alone says how long the batch is, so a
/// batch whose source was deleted after sending is skipped (src == nullptr); otherwise the record
/// size is checked against the source class.
BatchView parse_batch(const char*& p, const char* end) {
  if (static_cast<std::size_t>(end - p) < sizeof(BatchHeader)) corrupt("truncated batch header");
  const auto h = load<BatchHeader>(p);
  p += sizeof(BatchHeader);
  BatchView b{Id(h.src).element(), h.bind, h.count, h.recBytes, p};
  if (h.recBytes) {
    if (h.recBytes < 2 * sizeof(Index) || h.recBytes % 4) corrupt("record size " + std::to_string(h.recBytes));
    if (static_cast<std::size_t>(end - p) / h.recBytes < h.count) corrupt("truncated batch");
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
  const std::uint32_t want = fixed >= 0 ? padded(2 * sizeof(Index) + static_cast<std::size_t>(fixed)) : 0;
  if (h.recBytes != want)
    corrupt("record size " + std::to_string(h.recBytes) + " for " + b.src->path() + "." + srcs[h.bind]->name() +
            ", expected " + std::to_string(want));
  return b;
}

/// Calls fn(d, f, args, argBytes) for every record of b.
template <class Fn>
void for_each_record(const BatchView& b, Fn&& fn) {
  const char* p = b.recs;
  for (std::uint32_t i = 0; i < b.count; ++i) {
    const auto d = load<Index>(p);
    const auto f = load<Index>(p + sizeof(Index));
    if (b.recBytes) {
      fn(d, f, p + 2 * sizeof(Index), b.recBytes - 2 * sizeof(Index));
      p += b.recBytes;
    } else {
      const auto len = load<std::uint32_t>(p + 2 * sizeof(Index));
      fn(d, f, p + 2 * sizeof(Index) + 4, len);
      p += 2 * sizeof(Index) + 4 + padded(len);
    }
  }
}

}  // namespace

PostOffice& PostOffice::instance() {
  static PostOffice p;
  return p;
}

PostOffice::PostOffice() { setNumThreads(1); }

void PostOffice::setNumThreads(unsigned n) {
  if (n == 0) n = 1;
  // Keep what is queued: deferred sends from Shell calls survive a thread-count change.
  std::vector<Outbox> keep(std::make_move_iterator(deferredOut_.begin()), std::make_move_iterator(deferredOut_.end()));
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
  inProcess_ = false;
}

std::uint32_t PostOffice::exchange(std::uint32_t flags, const ByteBuffer& attachment) {
  inProcess_ = false;
  const unsigned T = numThreads();
  for (unsigned t = 0; t < T; ++t) {
    std::swap(deferredIn_[t], deferredOut_[t]);
    deferredOut_[t].clear();
  }
  const std::size_t nseg = process_[0].segmentEnds().size();
  auto segment = [&](const Outbox& o, std::size_t j) {
    const auto& ends = o.segmentEnds();
    const std::size_t b = j == 0 ? 0 : ends[j - 1];
    return Span{o.bytes().data() + b, o.bytes().data() + ends[j]};
  };
  std::vector<Span> deferred;
  std::vector<std::vector<Span>> segs(nseg);
  const NodeLayout& l = node_layout();

  attachments_.clear();
  if (l.numNodes == 1) {
    attachments_.emplace_back(attachment.data(), attachment.size());
    if (flags & kFlagError) return flags;
    for (unsigned t = 0; t < T; ++t) {
      if (process_[t].segmentEnds().size() != nseg)
        throw InternalError("threads processed different numbers of elements");
      const auto& b = deferredIn_[t].bytes();
      deferred.push_back({b.data(), b.data() + b.size()});
    }
    for (std::size_t j = 0; j < nseg; ++j)
      for (unsigned t = 0; t < T; ++t) segs[j].push_back(segment(process_[t], j));
    plan(deferred, segs);
    return flags;
  }

  // Pack: {flags u32, nseg u32, attachment bytes u64, deferred bytes u64, segment bytes u64 x
  // nseg} then the bytes: attachment, deferred, then segment by segment with threads in order.
  packed_.clear();
  Writer w(packed_);
  w.put<std::uint32_t>(flags).put<std::uint32_t>(static_cast<std::uint32_t>(nseg));
  w.put<std::uint64_t>(attachment.size());
  std::uint64_t dbytes = 0;
  for (unsigned t = 0; t < T; ++t) dbytes += deferredIn_[t].bytes().size();
  w.put<std::uint64_t>(dbytes);
  for (std::size_t j = 0; j < nseg; ++j) {
    std::uint64_t n = 0;
    for (unsigned t = 0; t < T; ++t)
      if (j < process_[t].segmentEnds().size()) {
        const Span s = segment(process_[t], j);
        n += static_cast<std::uint64_t>(s.end - s.begin);
      }
    w.put<std::uint64_t>(n);
  }
  packed_.append(attachment.data(), attachment.size());
  for (unsigned t = 0; t < T; ++t) packed_.append(deferredIn_[t].bytes().data(), deferredIn_[t].bytes().size());
  for (std::size_t j = 0; j < nseg; ++j)
    for (unsigned t = 0; t < T; ++t)
      if (j < process_[t].segmentEnds().size()) {
        const Span s = segment(process_[t], j);
        packed_.append(s.begin, static_cast<std::size_t>(s.end - s.begin));
      }

  std::vector<std::size_t> counts;
  mpi::allgather_inline(packed_.data(), packed_.size(), kInlineBytes, counts, gathered_);

  std::uint32_t all = 0;
  std::vector<std::vector<Span>> nodeSegs;
  const char* base = gathered_.data();
  std::size_t off = 0;
  std::vector<std::uint32_t> nsegs;
  for (int r = 0; r < l.numNodes; ++r) {
    Reader rd(base + off, counts[r]);
    const auto f = rd.get<std::uint32_t>();
    const auto ns = rd.get<std::uint32_t>();
    all |= f;
    nsegs.push_back(ns);
    const auto ab = rd.get<std::uint64_t>();
    const auto db = rd.get<std::uint64_t>();
    std::vector<std::uint64_t> sb(ns);
    for (auto& x : sb) x = rd.get<std::uint64_t>();
    attachments_.emplace_back(rd.take(ab), ab);
    const char* p = rd.take(db);
    deferred.push_back({p, p + db});
    std::vector<Span> mine;
    for (auto x : sb) {
      const char* q = rd.take(x);
      mine.push_back({q, q + x});
    }
    nodeSegs.push_back(std::move(mine));
    off += counts[r];
  }
  if (all & kFlagError) return all;
  for (int r = 0; r < l.numNodes; ++r)
    if (nsegs[r] != nseg)
      throw CommError("nodes disagree on the elements processed this tick: node " + std::to_string(r) + " sent " +
                      std::to_string(nsegs[r]) + " segments, node " + std::to_string(l.node) + " has " +
                      std::to_string(nseg));
  for (std::size_t j = 0; j < nseg; ++j)
    for (int r = 0; r < l.numNodes; ++r) segs[j].push_back(nodeSegs[r][j]);
  plan(deferred, segs);
  return all;
}

void PostOffice::plan(const std::vector<Span>& deferred, const std::vector<std::vector<Span>>& segments) {
  deferredPlan_.clear();
  for (const Span& s : deferred) {
    const char* p = s.begin;
    while (p < s.end) {
      const BatchView b = parse_batch(p, s.end);
      if (!b.src) continue;
      for_each_record(b, [&](Index d, Index f, const char* args, std::size_t n) {
        deferredPlan_.push_back(Record{b.src->id().value, b.bind, d, f, args, static_cast<std::uint32_t>(n)});
      });
    }
  }
  std::stable_sort(deferredPlan_.begin(), deferredPlan_.end(), [](const Record& a, const Record& b) {
    if (a.src != b.src) return a.src < b.src;
    if (a.d != b.d) return a.d < b.d;
    return a.f < b.f;
  });
  spans_.clear();
  for (const auto& seg : segments)
    for (const Span& s : seg)
      if (s.end != s.begin) spans_.push_back(s);
}

void PostOffice::deliver(unsigned t) const {
  const unsigned T = numThreads();
  for (const Record& r : deferredPlan_) {
    const Element* src = Id(r.src).element();
    if (!src) continue;
    for (const Conn& c : src->conns(r.bind)) {
      auto [lo, hi] = thread_slice(c.msg->dest(), t, T);
      c.msg->deliver(c.func, r.d, r.f, r.args, r.argBytes, lo, hi);
    }
  }
  for (const Span& s : spans_) deliverSpan(s, t);
}

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
    const BatchView b = parse_batch(p, s.end);
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
