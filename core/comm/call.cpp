// One collective call on one rank: the header every message carries, and its check. See
// core/comm/detail/call.hpp for what is detected, what is not, and how the news spreads.
#include "core/comm/detail/call.hpp"

#include <cstring>
#include <string>

#include "core/error.hpp"

namespace antler::comm {

std::string to_string(const CallInfo& c) {
  std::string s = std::string(to_string(c.kind)) + " #" + std::to_string(c.sequence) + " (";
  if (c.root >= 0) s += "root " + std::to_string(c.root) + ", ";
  return s + to_string(c.algorithm) + ")";
}

namespace detail {

namespace {

// All collective calls share one tag, so that a message of any call is the next one received.
constexpr int kTag = Comm::kCollectiveTags + 1;
constexpr std::uint8_t kMagic = 0xA7;
constexpr std::uint8_t kSplit = 1;   // the bytes follow in a second message
constexpr std::uint8_t kNotice = 2;  // the sender gave up: its text follows

bool known_kind(std::uint8_t k) {
  return k <= static_cast<std::uint8_t>(Collective::gather);
}
bool known_algorithm(std::uint8_t a) {
  return a <= static_cast<std::uint8_t>(Algorithm::ring);
}

CallInfo info_of(const WireHeader& h) {
  return {static_cast<Collective>(h.kind), static_cast<Algorithm>(h.algorithm), h.root, h.sequence};
}

}  // namespace

Call::Call(Comm& c, Collective kind, int root, Algorithm a)
    : c_(c), b_(c.backend()), info_{kind, a, root, 0}, rank_(b_.rank()), size_(b_.size()) {
  info_.sequence = b_.sequence++;
  b_.history[info_.sequence % Backend::kHistory] = info_;
}

void Call::setAlgorithm(Algorithm a) {
  info_.algorithm = a;
  b_.history[info_.sequence % Backend::kHistory] = info_;
}

WireHeader Call::header(std::uint8_t flags) const {
  return {info_.sequence,
          info_.root,
          static_cast<std::uint8_t>(info_.kind),
          static_cast<std::uint8_t>(info_.algorithm),
          flags,
          kMagic};
}

void Call::send(int dest, std::span<const char> bytes) {
  if (bytes.size() <= b_.inlineLimit) {
    thread_local ByteBuffer out;  // a blocking send is done with its buffer on return
    const WireHeader h = header(0);
    out.resize(sizeof h + bytes.size());
    std::memcpy(out.data(), &h, sizeof h);
    if (!bytes.empty()) std::memcpy(out.data() + sizeof h, bytes.data(), bytes.size());
    b_.send(dest, kTag, {out.data(), out.size()});
  } else {
    const WireHeader h = header(kSplit);
    b_.send(dest, kTag, {reinterpret_cast<const char*>(&h), sizeof h});
    b_.send(dest, kTag, bytes);
  }
}

Call::Op Call::isend(int dest, std::span<const char> bytes) {
  Op op;
  op.keep = std::make_shared<ByteBuffer>();
  if (bytes.size() <= b_.inlineLimit) {
    const WireHeader h = header(0);
    op.keep->resize(sizeof h + bytes.size());
    std::memcpy(op.keep->data(), &h, sizeof h);
    if (!bytes.empty()) std::memcpy(op.keep->data() + sizeof h, bytes.data(), bytes.size());
    op.first = b_.isend(dest, kTag, {op.keep->data(), op.keep->size()});
  } else {
    const WireHeader h = header(kSplit);
    op.keep->append(&h, sizeof h);
    op.first = b_.isend(dest, kTag, {op.keep->data(), op.keep->size()});
    op.second = b_.isend(dest, kTag, bytes);
  }
  return op;
}

const ByteBuffer& Call::first(int src, bool& split) {
  // A first message is a header, or a header and at most inlineLimit bytes: it lands in a
  // buffer kept for the purpose (no probe, no allocation) and is checked before anything else.
  thread_local ByteBuffer m;
  if (b_.inlineLimit == kNoLimit) {
    m = b_.recv(src, kTag);
  } else {
    m.resize(sizeof(WireHeader) + b_.inlineLimit);
    m.resize(b_.recvSome(src, kTag, m.data(), m.size()));
  }
  WireHeader h{};
  if (m.size() >= sizeof h) std::memcpy(&h, m.data(), sizeof h);
  if (m.size() < sizeof h || h.magic != kMagic || !known_kind(h.kind) ||
      !known_algorithm(h.algorithm)) {
    const std::string what = "collective mismatch on rank " + std::to_string(rank_) + ": in " +
                             to_string(info_) + " it received from rank " + std::to_string(src) +
                             " a message of " + std::to_string(m.size()) +
                             " bytes without a collective header";
    notifyOthers(what);
    throw CommError(what);
  }
  if (h.flags & kNotice) notified(src, m);
  if (h.sequence != info_.sequence || h.kind != static_cast<std::uint8_t>(info_.kind) ||
      h.root != info_.root || h.algorithm != static_cast<std::uint8_t>(info_.algorithm))
    mismatch(src, h);
  split = (h.flags & kSplit) != 0;
  return m;
}

ByteBuffer Call::recv(int src) {
  bool split = false;
  const ByteBuffer& m = first(src, split);
  if (split) return b_.recv(src, kTag);
  ByteBuffer out;
  out.append(m.data() + sizeof(WireHeader), m.size() - sizeof(WireHeader));
  return out;
}

Call::Op Call::irecv(int src, char* into, std::size_t n) {
  Op op;
  op.recv = true;
  op.src = src;
  op.into = into;
  op.n = n;
  return op;
}

void Call::wait(Op& op) {
  if (!op.recv) {
    b_.wait(op.first);
    b_.wait(op.second);
    op = Op{};
    return;
  }
  bool split = false;
  const ByteBuffer& m = first(op.src, split);
  if (split) {
    std::shared_ptr<void> r = b_.irecv(op.src, kTag, op.into, op.n);
    b_.wait(r);  // a size other than n is a CommError naming both sizes
  } else {
    const std::size_t got = m.size() - sizeof(WireHeader);
    if (got != op.n) sizes(op.src, op.n, got);
    if (got) std::memcpy(op.into, m.data() + sizeof(WireHeader), got);
  }
  op = Op{};
}

ByteBuffer Call::sendrecv(int dest, std::span<const char> bytes, int src) {
  Op s = isend(dest, bytes);
  ByteBuffer got = recv(src);
  wait(s);
  return got;
}

void Call::mismatch(int src, const WireHeader& h) {
  const CallInfo theirs = info_of(h);
  std::string what = "collective mismatch: rank " + std::to_string(src) + " sent rank " +
                     std::to_string(rank_) + " a message of " + to_string(theirs) + ", but rank " +
                     std::to_string(rank_) + " is in " + to_string(info_);
  if (h.sequence != info_.sequence && h.sequence < b_.sequence &&
      b_.sequence - h.sequence <= Backend::kHistory)
    what += " (its #" + std::to_string(h.sequence) + " was " +
            to_string(b_.history[h.sequence % Backend::kHistory]) + ")";
  what += ": the ranks called different collectives";
  notifyOthers(what);
  throw CollectiveMismatch(rank_, src, info_, theirs, what);
}

void Call::notified(int src, const ByteBuffer& m) {
  const std::string text(m.data() + sizeof(WireHeader), m.size() - sizeof(WireHeader));
  const std::string what = "collective failed elsewhere: rank " + std::to_string(rank_) + " in " +
                           to_string(info_) + " was told by rank " + std::to_string(src) +
                           " that it stopped: " + text;
  notifyOthers(what);
  throw CommError(what);
}

void Call::sizes(int src, std::size_t want, std::size_t got) {
  const std::string what = std::string(to_string(info_.kind)) + ": rank " + std::to_string(rank_) +
                           " expected " + std::to_string(want) + " bytes from rank " +
                           std::to_string(src) + " in " + to_string(info_) + ", got " +
                           std::to_string(got) + " (sizes must agree between ranks)";
  notifyOthers(what);
  throw CommError(what);
}

void Call::notifyOthers(const std::string& what) {
  if (b_.noticed) return;
  b_.noticed = true;
  const WireHeader h = header(kNotice);
  ByteBuffer notice;
  notice.append(&h, sizeof h);
  notice.append(what.data(), what.size());
  b_.noticeBytes.push_back(std::move(notice));
  const ByteBuffer& kept = b_.noticeBytes.back();
  // Non-blocking, never waited for: a rank may never receive its notice.
  for (int q = 0; q < size_; ++q)
    if (q != rank_) b_.noticeOps.push_back(b_.isend(q, kTag, {kept.data(), kept.size()}));
}

}  // namespace detail
}  // namespace antler::comm
