// StarForest: the graph, setUp (the two-sided graph by non-blocking consensus), the transport
// of the three backends, and the forests built from others. The typed packing and the
// documented order of application are in the header's templates.
#include "core/comm/star_forest.hpp"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <limits>
#include <string>
#include <tuple>

#include "core/comm/consensus.hpp"
#include "core/comm/detail/backend.hpp"
#include "core/error.hpp"
#include "core/type_name.hpp"

namespace antler::comm {

const char* to_string(SfBackend b) {
  switch (b) {
    case SfBackend::automatic:
      return "automatic";
    case SfBackend::p2p:
      return "p2p";
    case SfBackend::neighbour:
      return "neighbour";
    case SfBackend::allgatherv:
      return "allgatherv";
  }
  return "?";
}

SfBackend parse_sf_backend(std::string_view s) {
  for (SfBackend b :
       {SfBackend::automatic, SfBackend::p2p, SfBackend::neighbour, SfBackend::allgatherv})
    if (s == to_string(b)) return b;
  throw ValueError("StarForest: no backend '" + std::string(s) +
                   "' (valid: automatic, p2p, neighbour, allgatherv)");
}

/// The bytes of one operation on their way, in one direction. Fixed units: every peer's
/// segment size is known from the graph. Variable: a segment is a run of [u64 length][bytes],
/// one per edge, whose sizes only the sender knows.
struct StarForest::Transfer {
  Dir dir = Dir::rootToLeaf;
  bool variable = false;
  std::size_t unit = 0;
  int tag = 0;
  ByteBuffer send, recv;
  std::vector<std::size_t> sendCount, sendDispl, recvCount, recvDispl;  // bytes, per peer
  std::vector<std::size_t> sizes;  // variable + neighbour: the segment sizes exchanged first
  std::vector<std::shared_ptr<void>> reqs;
  bool started = false;
};

StarForest::Pending::~Pending() = default;

StarForest::StarForest(const Comm& c) : comm_(c.dup()) {}

StarForest::~StarForest() {
  // Operations still in flight: complete them where that is safe; while an exception unwinds,
  // the other ranks may never send what they wait for, so their buffers are left to MPI (kept
  // alive on purpose) rather than waited on.
  for (auto& p : pending_) {
    if (!p->transfer) continue;
    if (std::uncaught_exceptions() == 0) {
      try {
        for (auto& r : p->transfer->reqs) comm_.backend().wait(r);
      } catch (...) {
      }
    } else {
      (void)p->transfer.release();
    }
  }
}

StarForest::StarForest(StarForest&&) noexcept = default;
StarForest& StarForest::operator=(StarForest&&) noexcept = default;

namespace {

/// Raises, on every rank, the error of the lowest rank that found one (a rank with none passes
/// an empty text). Collective.
void agree(Comm& c, const std::string& where, ErrorKind kind, const std::string& text) {
  const int P = c.size(), me = c.rank();
  const int first = allreduce(c, text.empty() ? P : me, ops::min{});
  if (first == P) return;
  ByteBuffer b;
  if (me == first) {
    const auto k = static_cast<char>(kind);
    b.append(&k, 1);
    b.append(text.data(), text.size());
  }
  algo::broadcast_any(c, b, first);
  const auto k = static_cast<ErrorKind>(b.data()[0]);
  throw_error(k, where + ": on rank " + std::to_string(first) + ": " +
                     std::string(b.data() + 1, b.size() - 1));
}

constexpr std::int64_t kMaxIndex = std::numeric_limits<std::int32_t>::max();

std::string range(std::int64_t n) {
  return n > 0 ? "0.." + std::to_string(n - 1) : "none";
}

bool overlaps(const void* a, std::size_t na, const void* b, std::size_t nb) {
  if (!a || !b || !na || !nb) return a && a == b;
  auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  return x < y + nb && y < x + na;
}

const char* kind_name(int k) {
  static const char* names[] = {"bcast", "reduce", "fetchAndOp", "bcastv", "reducev"};
  return names[k];
}

}  // namespace

void StarForest::setGraph(std::int64_t nroots, std::int64_t nleaves,
                          std::vector<std::int64_t> ilocal, std::vector<SfNode> iremote) {
  if (!pending_.empty())
    throw StateError("StarForest::setGraph: " + std::to_string(pending_.size()) +
                     " operation(s) in flight (End them first)");
  nroots_ = nroots;
  nleaves_ = nleaves;
  ilocal_ = std::move(ilocal);
  iremote_ = std::move(iremote);
  graphSet_ = true;
  setUp_ = false;
  multi_.reset();
}

void StarForest::setBackend(SfBackend b) {
  forced_ = b;
  setUp_ = false;
}

void StarForest::setUp() {
  if (!graphSet_) throw StateError("StarForest::setUp: no graph (call setGraph first)");
  if (!pending_.empty())
    throw StateError("StarForest::setUp: " + std::to_string(pending_.size()) +
                     " operation(s) in flight (End them first)");
  const int P = comm_.size(), me = comm_.rank();
  setUp_ = false;
  multi_.reset();

  // 1. This rank's own graph.
  std::string err;
  ErrorKind errKind = ErrorKind::value;
  auto fail = [&](ErrorKind k, std::string t) {
    if (err.empty()) {
      errKind = k;
      err = std::move(t);
    }
  };
  if (nroots_ < 0) fail(ErrorKind::value, std::to_string(nroots_) + " roots (at least 0)");
  if (nleaves_ < 0) fail(ErrorKind::value, std::to_string(nleaves_) + " leaves (at least 0)");
  if (err.empty() && iremote_.size() != static_cast<std::size_t>(nleaves_))
    fail(ErrorKind::value, "iremote has " + std::to_string(iremote_.size()) + " entries for " +
                               std::to_string(nleaves_) + " leaves");
  if (err.empty() && !ilocal_.empty() && ilocal_.size() != static_cast<std::size_t>(nleaves_))
    fail(ErrorKind::value, "ilocal has " + std::to_string(ilocal_.size()) + " entries for " +
                               std::to_string(nleaves_) + " leaves (or none: leaves 0.." +
                               std::to_string(nleaves_ - 1) + ")");
  leafExtent_ = err.empty() ? nleaves_ : 0;
  if (err.empty() && !ilocal_.empty()) {
    std::int64_t hi = -1;
    for (std::size_t i = 0; i < ilocal_.size() && err.empty(); ++i) {
      if (ilocal_[i] < 0)
        fail(ErrorKind::index, "ilocal[" + std::to_string(i) + "] is leaf " +
                                   std::to_string(ilocal_[i]) + " (leaf indices are >= 0)");
      hi = std::max(hi, ilocal_[i]);
    }
    leafExtent_ = hi + 1;
    if (err.empty() && leafExtent_ <= kMaxIndex) {  // duplicates: one pass over a bitmap
      std::vector<bool> seen(static_cast<std::size_t>(leafExtent_), false);
      for (std::int64_t l : ilocal_) {
        if (seen[static_cast<std::size_t>(l)]) {
          fail(ErrorKind::value,
               "leaf " + std::to_string(l) + " is listed twice in ilocal (each leaf has one root)");
          break;
        }
        seen[static_cast<std::size_t>(l)] = true;
      }
    }
  }
  if (err.empty() && (nroots_ > kMaxIndex || leafExtent_ > kMaxIndex))
    fail(ErrorKind::value, std::to_string(std::max(nroots_, leafExtent_)) +
                               " roots or leaves on one rank (at most " +
                               std::to_string(kMaxIndex) + ")");
  for (std::size_t i = 0; i < iremote_.size() && err.empty(); ++i) {
    const SfNode& n = iremote_[i];
    if (n.rank >= 0 && n.rank < P && n.index >= 0 && (n.rank != me || n.index < nroots_))
      continue;  // the common case: no text built
    const std::string leaf = "leaf " + std::to_string(leafIndex(static_cast<std::int64_t>(i)));
    if (n.rank < 0 || n.rank >= P)
      fail(ErrorKind::index,
           leaf + " names rank " + std::to_string(n.rank) + " (ranks " + range(P) + ")");
    else if (n.index < 0)
      fail(ErrorKind::index, leaf + " names root " + std::to_string(n.index) + " of rank " +
                                 std::to_string(n.rank) + " (root indices are >= 0)");
    else if (n.rank == me && n.index >= nroots_)
      fail(ErrorKind::index, leaf + " names root " + std::to_string(n.index) + " of its own rank " +
                                 std::to_string(me) + ", which has " + std::to_string(nroots_) +
                                 " roots (" + range(nroots_) + ")");
  }
  agree(comm_, "StarForest::setUp", errKind, err);

  // 2. The leaf side, by root rank then leaf index (the order every reduction uses): the leaves
  // in ascending leaf index (their given order when ilocal ascends, as it usually does; else
  // sorted), then a stable counting sort by rank.
  const std::size_t nl = iremote_.size();
  std::vector<std::uint32_t> order(nl);
  for (std::size_t i = 0; i < nl; ++i) order[i] = static_cast<std::uint32_t>(i);
  if (!std::is_sorted(ilocal_.begin(), ilocal_.end()))
    std::sort(order.begin(), order.end(),
              [&](std::uint32_t a, std::uint32_t b) { return ilocal_[a] < ilocal_[b]; });
  std::vector<std::uint32_t> perRank;  // ranks named, with their counts (sparse over P)
  std::vector<std::int64_t> count;
  {
    std::vector<std::int64_t> byRank;  // P entries only while building: the setUp's scratch
    byRank.assign(static_cast<std::size_t>(P), 0);
    for (const SfNode& n : iremote_) ++byRank[static_cast<std::size_t>(n.rank)];
    for (int q = 0; q < P; ++q)
      if (byRank[static_cast<std::size_t>(q)]) {
        perRank.push_back(static_cast<std::uint32_t>(q));
        count.push_back(byRank[static_cast<std::size_t>(q)]);
      }
  }
  rranks_.clear();
  roff_.assign(1, 0);
  selfLeaf_.clear();
  selfRoot_.clear();
  std::vector<Parcel> out;
  std::vector<std::int64_t> at(static_cast<std::size_t>(P), -1);  // rank -> its slot in rleaf_
  std::int64_t remoteEdges = 0;
  for (std::size_t g = 0; g < perRank.size(); ++g) {
    const int q = static_cast<int>(perRank[g]);
    if (q == me) {
      selfLeaf_.reserve(static_cast<std::size_t>(count[g]));
      selfRoot_.reserve(static_cast<std::size_t>(count[g]));
      continue;
    }
    at[static_cast<std::size_t>(q)] = remoteEdges;
    remoteEdges += count[g];
    rranks_.push_back(q);
    roff_.push_back(remoteEdges);
    out.push_back(Parcel{q, {}});
    out.back().bytes.resize(static_cast<std::size_t>(count[g]) * 16);
  }
  rleaf_.assign(static_cast<std::size_t>(remoteEdges), 0);
  std::vector<std::int64_t> fill(at);
  std::vector<std::int64_t> parcelOf(static_cast<std::size_t>(P), -1);
  for (std::size_t k = 0; k < rranks_.size(); ++k)
    parcelOf[static_cast<std::size_t>(rranks_[k])] = static_cast<std::int64_t>(k);
  for (std::uint32_t i : order) {
    const SfNode& n = iremote_[i];
    const auto leaf = static_cast<Idx>(leafIndex(i));
    if (n.rank == me) {
      selfLeaf_.push_back(leaf);
      selfRoot_.push_back(static_cast<Idx>(n.index));
      continue;
    }
    const auto q = static_cast<std::size_t>(n.rank);
    const std::int64_t slot = fill[q]++;
    rleaf_[static_cast<std::size_t>(slot)] = leaf;
    const std::int64_t pair[2] = {leaf, n.index};
    const auto k = static_cast<std::size_t>(parcelOf[q]);
    std::memcpy(out[k].bytes.data() + 16 * static_cast<std::size_t>(slot - at[q]), pair, 16);
  }

  // 3. The root side: who references this rank's roots, learnt from what arrives.
  std::vector<Parcel> in = exchange_sparse(comm_, std::move(out));
  lranks_.clear();
  loff_.assign(1, 0);
  lroot_.clear();
  lselfAt_ = 0;
  for (const Parcel& p : in) {
    if (p.bytes.size() % 16)
      fail(ErrorKind::comm, "a graph message of " + std::to_string(p.bytes.size()) +
                                " bytes from rank " + std::to_string(p.rank));
    const std::size_t n = p.bytes.size() / 16;
    lranks_.push_back(p.rank);
    for (std::size_t k = 0; k < n; ++k) {
      std::int64_t pair[2];
      std::memcpy(pair, p.bytes.data() + 16 * k, 16);
      if ((pair[1] < 0 || pair[1] >= nroots_) && err.empty())
        fail(ErrorKind::index,
             "leaf " + std::to_string(pair[0]) + " of rank " + std::to_string(p.rank) +
                 " names root " + std::to_string(pair[1]) + " of rank " + std::to_string(me) +
                 ", which has " + std::to_string(nroots_) + " roots (" + range(nroots_) + ")");
      lroot_.push_back(static_cast<Idx>(pair[1]));
    }
    loff_.push_back(static_cast<std::int64_t>(lroot_.size()));
    if (p.rank < me) lselfAt_ = lroot_.size();
  }
  agree(comm_, "StarForest::setUp", errKind, err);

  rootRanks_.assign(rranks_.begin(), rranks_.end());
  leafRanks_.assign(lranks_.begin(), lranks_.end());
  if (!selfLeaf_.empty()) {
    rootRanks_.insert(std::lower_bound(rootRanks_.begin(), rootRanks_.end(), me), me);
    leafRanks_.insert(std::lower_bound(leafRanks_.begin(), leafRanks_.end(), me), me);
  }

  // 4. The backend, from values every rank agrees on.
  SfBackend want = forced_;
  if (want == SfBackend::automatic)
    if (const char* env = std::getenv("ANTLER_SF_BACKEND"); env && *env)
      want = parse_sf_backend(env);
  const auto code = static_cast<int>(want);
  const int lo = allreduce(comm_, code, ops::min{}), hi = allreduce(comm_, code, ops::max{});
  if (lo != hi)
    throw ValueError("StarForest::setUp: ranks force different backends (" +
                     std::string(to_string(static_cast<SfBackend>(lo))) + " and " +
                     to_string(static_cast<SfBackend>(hi)) + ")");
  if (want == SfBackend::automatic) {
    // Small and dense: one allgatherv beats P - 1 messages per rank when most pairs of ranks
    // talk and the data is small (every rank then receives all of it); else the graph's own
    // messages.
    const long long maxEdges =
        allreduce(comm_, static_cast<long long>(rleaf_.size() + lroot_.size()), ops::max{});
    const long long peers = allreduce(comm_, static_cast<long long>(rranks_.size()), ops::sum{});
    const long long pairs = static_cast<long long>(P) * (P - 1);
    want = (P > 1 && 2 * peers >= pairs && maxEdges * P <= 4096) ? SfBackend::allgatherv
                                                                 : SfBackend::p2p;
  }
  chosen_ = want;
  hoodRootToLeaf_.reset();
  hoodLeafToRoot_.reset();
  if (chosen_ == SfBackend::neighbour) {
    auto& b = comm_.backend();
    hoodRootToLeaf_ = b.neighbourhood(rranks_, lranks_);
    hoodLeafToRoot_ = b.neighbourhood(lranks_, rranks_);
  }
  setUp_ = true;
}

std::vector<std::int64_t> StarForest::computeDegree() const {
  requireSetUp("computeDegree");
  std::vector<std::int64_t> d(static_cast<std::size_t>(nroots_), 0);
  for (Idx r : lroot_) ++d[static_cast<std::size_t>(r)];
  for (Idx r : selfRoot_) ++d[static_cast<std::size_t>(r)];
  return d;
}

void StarForest::requireSetUp(const char* op) const {
  if (!setUp_)
    throw StateError(std::string("StarForest::") + op + ": the forest is not set up (call " +
                     (graphSet_ ? "setUp" : "setGraph, then setUp") + " first)");
}

void StarForest::checkLength(const char* op, const char* what, std::size_t have,
                             std::int64_t vertices, std::size_t bs) const {
  if (bs == 0) throw ValueError(std::string("StarForest::") + op + ": block size 0 (at least 1)");
  const std::size_t need = static_cast<std::size_t>(vertices) * bs;
  if (have < need)
    throw IndexError(std::string("StarForest::") + op + ": " + what + " has " +
                         std::to_string(have) + " units; the forest needs " +
                         std::to_string(vertices) + " x block " + std::to_string(bs) + " = " +
                         std::to_string(need),
                     have, need);
}

StarForest::Pending& StarForest::begin(Kind k, Dir d, const char* name, const void* out,
                                       std::size_t outBytes, const void* out2,
                                       std::size_t out2Bytes, const std::type_info& unit,
                                       const std::type_info& op, std::size_t bs,
                                       std::size_t unitBytes, bool variable) {
  requireSetUp(name);
  for (const auto& q : pending_) {
    const bool clash = overlaps(out, outBytes, q->out, q->outBytes) ||
                       overlaps(out, outBytes, q->out2, q->out2Bytes) ||
                       overlaps(out2, out2Bytes, q->out, q->outBytes) ||
                       overlaps(out2, out2Bytes, q->out2, q->out2Bytes);
    if (clash)
      throw ValueError(std::string("StarForest::") + name +
                       ": its output buffer is the output of a " +
                       kind_name(static_cast<int>(q->kind)) +
                       " already in flight (End that one first, or use another buffer)");
  }
  // A finished operation's buffers, when there is one (no allocation in the steady state).
  std::unique_ptr<Pending> p;
  if (!finished_.empty()) {
    p = std::move(finished_.front());
    finished_.erase(finished_.begin());
  } else {
    p = std::make_unique<Pending>();
    p->transfer = std::make_unique<Transfer>();
  }
  p->kind = k;
  p->out = out;
  p->out2 = out2;
  p->outBytes = outBytes;
  p->out2Bytes = out2Bytes;
  p->unit = &unit;
  p->op = &op;
  p->bs = bs;
  p->variable = variable;
  Transfer& t = *p->transfer;
  t.dir = d;
  t.variable = variable;
  t.unit = unitBytes;
  t.reqs.clear();
  t.started = false;
  if (variable)
    t.send.clear();
  else
    t.send.resize((d == Dir::rootToLeaf ? lroot_.size() : rleaf_.size()) * unitBytes);
  pending_.push_back(std::move(p));
  return *pending_.back();
}

ByteBuffer& StarForest::sendBuffer(Pending& p) {
  return p.transfer->send;
}
const ByteBuffer& StarForest::recvBuffer(const Pending& p) const {
  return p.transfer->recv;
}

namespace {

/// The byte sizes of a variable segment's edges: walks [u64 length][bytes] runs.
std::size_t variable_segment(const char* at, std::size_t left, std::int64_t edges) {
  std::size_t n = 0;
  for (std::int64_t e = 0; e < edges; ++e) {
    std::uint64_t len = 0;
    if (left - n < 8) throw InternalError("StarForest: a variable segment ends early");
    std::memcpy(&len, at + n, 8);
    n += 8 + len;
  }
  return n;
}

}  // namespace

void StarForest::start(Pending& p) {
  Transfer& t = *p.transfer;
  detail::Backend& b = comm_.backend();
  const bool down = t.dir == Dir::rootToLeaf;
  const std::vector<int>& to = down ? lranks_ : rranks_;
  const std::vector<std::int64_t>& toOff = down ? loff_ : roff_;
  const std::vector<int>& from = down ? rranks_ : lranks_;
  const std::vector<std::int64_t>& fromOff = down ? roff_ : loff_;
  // Tags by operation, so that Ends in any order find their own messages.
  t.tag = static_cast<int>(transfers_++ % (1u << 16));
  t.reqs.clear();
  t.recv.clear();
  t.started = true;

  t.sendCount.assign(to.size(), 0);
  t.sendDispl.assign(to.size(), 0);
  std::size_t at = 0;
  for (std::size_t i = 0; i < to.size(); ++i) {
    const std::int64_t edges = toOff[i + 1] - toOff[i];
    t.sendDispl[i] = at;
    t.sendCount[i] = t.variable ? variable_segment(t.send.data() + at, t.send.size() - at, edges)
                                : static_cast<std::size_t>(edges) * t.unit;
    at += t.sendCount[i];
  }
  t.recvCount.assign(from.size(), 0);
  t.recvDispl.assign(from.size(), 0);
  if (!t.variable) {
    std::size_t r = 0;
    for (std::size_t i = 0; i < from.size(); ++i) {
      t.recvDispl[i] = r;
      t.recvCount[i] = static_cast<std::size_t>(fromOff[i + 1] - fromOff[i]) * t.unit;
      r += t.recvCount[i];
    }
    t.recv.resize(r);
  }

  switch (chosen_) {
    case SfBackend::automatic:
    case SfBackend::p2p:
      if (!t.variable)
        for (std::size_t i = 0; i < from.size(); ++i)
          t.reqs.push_back(b.irecv(from[i], t.tag, t.recv.data() + t.recvDispl[i], t.recvCount[i]));
      for (std::size_t i = 0; i < to.size(); ++i)
        t.reqs.push_back(b.isend(to[i], t.tag, {t.send.data() + t.sendDispl[i], t.sendCount[i]}));
      break;
    case SfBackend::neighbour: {
      const auto& hood = down ? hoodRootToLeaf_ : hoodLeafToRoot_;
      if (t.variable) {  // the sizes first (one small all-to-all), then the bytes
        std::vector<std::uint64_t> mine(t.sendCount.begin(), t.sendCount.end()),
            theirs(from.size());
        std::vector<std::size_t> eight(std::max(to.size(), from.size()), 8), sd(to.size()),
            rd(from.size());
        for (std::size_t i = 0; i < sd.size(); ++i) sd[i] = 8 * i;
        for (std::size_t i = 0; i < rd.size(); ++i) rd[i] = 8 * i;
        auto req = b.ineighbourAlltoallv(
            hood, reinterpret_cast<const char*>(mine.data()), {eight.data(), to.size()}, sd,
            reinterpret_cast<char*>(theirs.data()), {eight.data(), from.size()}, rd);
        b.wait(req);
        std::size_t r = 0;
        for (std::size_t i = 0; i < from.size(); ++i) {
          t.recvDispl[i] = r;
          t.recvCount[i] = theirs[i];
          r += theirs[i];
        }
        t.recv.resize(r);
      }
      t.reqs.push_back(b.ineighbourAlltoallv(hood, t.send.data(), t.sendCount, t.sendDispl,
                                             t.recv.data(), t.recvCount, t.recvDispl));
      break;
    }
    case SfBackend::allgatherv: {
      // [u64 segments][(u64 rank, u64 bytes) per segment][segments], every rank's to every rank.
      ByteBuffer blob;
      const std::uint64_t nseg = to.size();
      blob.append(&nseg, 8);
      for (std::size_t i = 0; i < to.size(); ++i) {
        const std::uint64_t entry[2] = {static_cast<std::uint64_t>(to[i]), t.sendCount[i]};
        blob.append(entry, 16);
      }
      blob.append(t.send.data(), at);
      std::vector<std::size_t> counts;
      ByteBuffer all;
      b.vendorAllgatherv({blob.data(), blob.size()}, counts, all);
      std::vector<std::size_t> start(counts.size() + 1, 0);
      for (std::size_t q = 0; q < counts.size(); ++q) start[q + 1] = start[q] + counts[q];
      const int me = comm_.rank();
      ByteBuffer got;
      for (std::size_t i = 0; i < from.size(); ++i) {
        Reader r(all.data() + start[static_cast<std::size_t>(from[i])],
                 counts[static_cast<std::size_t>(from[i])]);
        std::uint64_t n = 0;
        std::memcpy(&n, r.take(8), 8);
        std::size_t skip = 0, mineAt = 0, mineLen = 0;
        bool found = false;
        for (std::uint64_t s = 0; s < n; ++s) {
          std::uint64_t entry[2];
          std::memcpy(entry, r.take(16), 16);
          if (static_cast<int>(entry[0]) == me) {
            found = true;
            mineAt = skip;
            mineLen = entry[1];
          }
          skip += entry[1];
        }
        if (!found)
          throw CommError("StarForest (allgatherv): rank " + std::to_string(from[i]) +
                          " sent nothing for rank " + std::to_string(me));
        r.take(mineAt);
        t.recvDispl[i] = got.size();
        t.recvCount[i] = mineLen;
        got.append(r.take(mineLen), mineLen);
      }
      if (!t.variable && got.size() != t.recv.size())
        throw CommError("StarForest (allgatherv): " + std::to_string(got.size()) +
                        " bytes arrived, " + std::to_string(t.recv.size()) + " expected");
      t.recv = std::move(got);
      break;
    }
  }
}

namespace {

void finish(detail::Backend& b, bool variable, SfBackend backend, const std::vector<int>& from,
            int tag, ByteBuffer& recv, std::vector<std::shared_ptr<void>>& reqs) {
  if (variable && (backend == SfBackend::p2p || backend == SfBackend::automatic)) {
    recv.clear();
    for (int q : from) {
      ByteBuffer got = b.recv(q, tag);
      recv.append(got.data(), got.size());
    }
  }
  for (auto& r : reqs) b.wait(r);
  reqs.clear();
}

}  // namespace

StarForest::Pending* StarForest::end(Kind k, const char* name, const void* out,
                                     const std::type_info& unit, const std::type_info& op,
                                     std::size_t bs, bool wait) {
  requireSetUp(name);
  // The operation of this kind on this output buffer; among several on an empty buffer (a rank
  // with no roots or leaves has nothing to write, and empty buffers share a null address), the
  // first with this unit and op.
  auto it = std::find_if(pending_.begin(), pending_.end(), [&](const auto& q) {
    return q->kind == k && q->out == out && *q->unit == unit && *q->op == op && q->bs == bs;
  });
  if (it == pending_.end())
    it = std::find_if(pending_.begin(), pending_.end(),
                      [&](const auto& q) { return q->kind == k && q->out == out; });
  if (it == pending_.end()) {
    const std::string begin = std::string(kind_name(static_cast<int>(k))) + "Begin";
    throw StateError(std::string("StarForest::") + name + ": no " + begin +
                     " in flight with this output buffer (call " + begin +
                     " first, with the same buffers)");
  }
  Pending& p = **it;
  if (*p.unit != unit || p.bs != bs)
    throw ValueError(std::string("StarForest::") + name + ": units of " + type_name(unit) + " x " +
                     std::to_string(bs) + ", but Begin was given " + type_name(*p.unit) + " x " +
                     std::to_string(p.bs));
  if (*p.op != op)
    throw ValueError(std::string("StarForest::") + name + ": op " + type_name(op) +
                     ", but Begin was given " + type_name(*p.op));
  finished_.push_back(std::move(*it));
  pending_.erase(it);
  Pending* mine = finished_.back().get();
  if (wait) complete(*mine);
  return mine;
}

void StarForest::complete(Pending& p) {
  Transfer& t = *p.transfer;
  const bool down = t.dir == Dir::rootToLeaf;
  finish(comm_.backend(), t.variable, chosen_, down ? rranks_ : lranks_, t.tag, t.recv, t.reqs);
}

void StarForest::reply(Pending& p) {
  Transfer& t = *p.transfer;
  t.dir = Dir::rootToLeaf;
  start(p);
  finish(comm_.backend(), t.variable, chosen_, rranks_, t.tag, t.recv, t.reqs);
}

// ---- variable-size payloads ----

void StarForest::bcastvBegin(const Payloads& root, Payloads& leaf) {
  requireSetUp("bcastvBegin");
  if (root.size() != static_cast<std::size_t>(nroots_))
    throw IndexError("StarForest::bcastvBegin: rootdata has " + std::to_string(root.size()) +
                         " payloads for " + std::to_string(nroots_) + " roots",
                     root.size(), static_cast<std::uint64_t>(nroots_));
  Pending& p = begin(Kind::bcastv, Dir::rootToLeaf, "bcastvBegin", &leaf, sizeof leaf, nullptr, 0,
                     typeid(Payloads), typeid(void), 1, 0, true);
  ByteBuffer& s = sendBuffer(p);
  for (Idx r : lroot_) {
    auto v = root[static_cast<std::size_t>(r)];
    const std::uint64_t n = v.size();
    s.append(&n, 8);
    s.append(v.data(), v.size());
  }
  start(p);
}

void StarForest::bcastvEnd(const Payloads& root, Payloads& leaf) {
  auto p = end(Kind::bcastv, "bcastvEnd", &leaf, typeid(Payloads), typeid(void), 1);
  const auto n = static_cast<std::size_t>(leafExtent_);
  std::vector<std::span<const char>> at(n);
  if (leaf.size() == n)
    for (std::size_t i = 0; i < n; ++i) at[i] = leaf[i];
  for (std::size_t k = 0; k < selfLeaf_.size(); ++k)
    at[static_cast<std::size_t>(selfLeaf_[k])] = root[static_cast<std::size_t>(selfRoot_[k])];
  const ByteBuffer& in = recvBuffer(*p);
  Reader r(in);
  for (Idx l : rleaf_) {
    std::uint64_t len = 0;
    std::memcpy(&len, r.take(8), 8);
    at[static_cast<std::size_t>(l)] = {r.take(len), len};
  }
  Payloads out;
  for (auto& s : at) out.push_back(s);
  leaf = std::move(out);
}

void StarForest::reducevBegin(const Payloads& leaf, Payloads& root) {
  requireSetUp("reducevBegin");
  if (leaf.size() < static_cast<std::size_t>(leafExtent_))
    throw IndexError("StarForest::reducevBegin: leafdata has " + std::to_string(leaf.size()) +
                         " payloads; the forest's leaves need " + std::to_string(leafExtent_),
                     leaf.size(), static_cast<std::uint64_t>(leafExtent_));
  if (root.size() != 0 && root.size() != static_cast<std::size_t>(nroots_))
    throw IndexError("StarForest::reducevBegin: rootdata has " + std::to_string(root.size()) +
                         " payloads for " + std::to_string(nroots_) + " roots (or none)",
                     root.size(), static_cast<std::uint64_t>(nroots_));
  Pending& p = begin(Kind::reducev, Dir::leafToRoot, "reducevBegin", &root, sizeof root, nullptr, 0,
                     typeid(Payloads), typeid(void), 1, 0, true);
  ByteBuffer& s = sendBuffer(p);
  for (Idx l : rleaf_) {
    auto v = leaf[static_cast<std::size_t>(l)];
    const std::uint64_t n = v.size();
    s.append(&n, 8);
    s.append(v.data(), v.size());
  }
  start(p);
}

void StarForest::reducevEnd(const Payloads& leaf, Payloads& root, const ByteMerge& merge) {
  auto p = end(Kind::reducev, "reducevEnd", &root, typeid(Payloads), typeid(void), 1);
  // The roots' accumulators, kept between calls: a steady state allocates nothing.
  std::vector<ByteBuffer>& acc = reducevAcc_;
  acc.resize(static_cast<std::size_t>(nroots_));
  for (ByteBuffer& a : acc) a.clear();
  if (root.size() == acc.size())
    for (std::size_t i = 0; i < acc.size(); ++i) acc[i].append(root[i].data(), root[i].size());
  const ByteBuffer& in = recvBuffer(*p);
  Reader r(in);
  auto remote = [&](std::size_t k0, std::size_t k1) {
    for (std::size_t k = k0; k < k1; ++k) {
      std::uint64_t len = 0;
      std::memcpy(&len, r.take(8), 8);
      merge(acc[static_cast<std::size_t>(lroot_[k])], {r.take(len), len});
    }
  };
  remote(0, lselfAt_);
  for (std::size_t k = 0; k < selfLeaf_.size(); ++k)
    merge(acc[static_cast<std::size_t>(selfRoot_[k])],
          leaf[static_cast<std::size_t>(selfLeaf_[k])]);
  remote(lselfAt_, lroot_.size());
  root.clear();  // (keeps its storage)
  for (const ByteBuffer& a : acc) root.push_back(std::span<const char>(a.data(), a.size()));
}

// ---- forests from forests ----

StarForest& StarForest::multiForest() {
  if (multi_) return *multi_;
  requireSetUp("multiForest");
  const std::vector<std::int64_t> degree = computeDegree();
  std::vector<std::int64_t> next(degree.size());
  std::int64_t total = 0;
  for (std::size_t r = 0; r < degree.size(); ++r) {
    next[r] = total;
    total += degree[r];
  }
  // Each leaf fetches its slot: its root's counter before it adds its 1, in the documented
  // order (leaf rank, then leaf index).
  const auto extent = static_cast<std::size_t>(leafExtent_);
  std::vector<std::int64_t> ones(extent, 1), slot(extent, -1);
  fetchAndOp(std::span<std::int64_t>(next), std::span<const std::int64_t>(ones),
             std::span<std::int64_t>(slot), ops::sum{});
  std::vector<SfNode> remote(iremote_.size());
  for (std::size_t i = 0; i < remote.size(); ++i)
    remote[i] = {iremote_[i].rank,
                 slot[static_cast<std::size_t>(leafIndex(static_cast<std::int64_t>(i)))]};
  auto m = std::make_unique<StarForest>(comm_);
  m->setBackend(chosen_);
  m->setGraph(total, nleaves_, ilocal_, std::move(remote));
  m->setUp();
  multi_ = std::move(m);
  return *multi_;
}

StarForest StarForest::compose(StarForest& ab, StarForest& bc) {
  ab.requireSetUp("compose");
  bc.requireSetUp("compose");
  if (ab.comm_.size() != bc.comm_.size())
    throw ValueError("StarForest::compose: the forests span " + std::to_string(ab.comm_.size()) +
                     " and " + std::to_string(bc.comm_.size()) + " ranks");
  // bc's roots learn the root of the ab leaf they are (none: rank -1).
  std::vector<SfNode> rootOf(static_cast<std::size_t>(bc.nroots_));
  for (std::size_t i = 0; i < ab.iremote_.size(); ++i) {
    const std::int64_t l = ab.leafIndex(static_cast<std::int64_t>(i));
    if (l < bc.nroots_) rootOf[static_cast<std::size_t>(l)] = ab.iremote_[i];
  }
  std::vector<SfNode> got(static_cast<std::size_t>(bc.leafExtent_));
  bc.bcast(std::span<const SfNode>(rootOf), std::span<SfNode>(got));
  std::vector<std::int64_t> ilocal;
  std::vector<SfNode> remote;
  for (std::size_t i = 0; i < bc.iremote_.size(); ++i) {
    const std::int64_t l = bc.leafIndex(static_cast<std::int64_t>(i));
    if (got[static_cast<std::size_t>(l)].rank >= 0) {
      ilocal.push_back(l);
      remote.push_back(got[static_cast<std::size_t>(l)]);
    }
  }
  StarForest out(ab.comm_);
  const auto n = static_cast<std::int64_t>(remote.size());
  out.setGraph(ab.nroots_, n, std::move(ilocal), std::move(remote));
  out.setUp();
  return out;
}

StarForest StarForest::embedRoots(std::span<const std::int64_t> roots) {
  requireSetUp("embedRoots");
  std::vector<int> keep(static_cast<std::size_t>(nroots_), 0);
  std::string err;
  for (std::int64_t r : roots) {
    if (r < 0 || r >= nroots_) {
      if (err.empty())
        err = "root " + std::to_string(r) + " is not one of this rank's " +
              std::to_string(nroots_) + " roots (" + range(nroots_) + ")";
      continue;
    }
    keep[static_cast<std::size_t>(r)] = 1;
  }
  agree(comm_, "StarForest::embedRoots", ErrorKind::index, err);
  std::vector<int> leafKeep(static_cast<std::size_t>(leafExtent_), 0);
  bcast(std::span<const int>(keep), std::span<int>(leafKeep));
  std::vector<std::int64_t> ilocal;
  std::vector<SfNode> remote;
  for (std::size_t i = 0; i < iremote_.size(); ++i) {
    const std::int64_t l = leafIndex(static_cast<std::int64_t>(i));
    if (leafKeep[static_cast<std::size_t>(l)]) {
      ilocal.push_back(l);
      remote.push_back(iremote_[i]);
    }
  }
  StarForest out(comm_);
  out.setBackend(forced_);
  const auto n = static_cast<std::int64_t>(remote.size());
  out.setGraph(nroots_, n, std::move(ilocal), std::move(remote));
  out.setUp();
  return out;
}

}  // namespace antler::comm
