#include "core/comm/reductions.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <deque>
#include <unordered_map>

#include "core/comm/detail/backend.hpp"
#include "core/comm/detail/elementwise.hpp"
#include "core/comm/detail/key_table.hpp"

namespace antler::comm {

namespace detail {

/// A member list with this rank's place in its binomial tree (see the top of reductions.hpp).
struct MemberTree {
  std::vector<int> ranks;
  std::uint64_t hash = 0;     // of the list: the scope of call-order matching, checked on receipt
  int pos = -1;               // this rank's position; -1: not a member
  int parent = -1;            // rank; -1 at the root
  std::vector<int> children;  // ranks, child order (nearest first)
  std::vector<std::pair<int, int>> subtrees;  // each child's positions [first, last)
  std::vector<int> down;  // the children farthest first: the order a result goes down in, so
                          // that it reaches every member in ceil(log2 n) rounds (a binomial
                          // broadcast)
};

namespace {

std::uint64_t hash_ranks(std::span<const int> r) {
  std::uint64_t h = 1469598103934665603ull ^ r.size();  // FNV-1a over the count and the ranks
  for (int x : r) {
    auto u = static_cast<std::uint32_t>(x);
    for (int i = 0; i < 4; ++i, u >>= 8) h = (h ^ (u & 0xffu)) * 1099511628211ull;
  }
  return h == 0 ? 1 : h;  // 0 is the scope of explicit ids
}

std::shared_ptr<MemberTree> make_tree(std::vector<int> ranks, int me) {
  auto t = std::make_shared<MemberTree>();
  t->ranks = std::move(ranks);
  t->hash = hash_ranks(t->ranks);
  const int n = static_cast<int>(t->ranks.size());
  for (int p = 0; p < n; ++p)
    if (t->ranks[static_cast<std::size_t>(p)] == me) t->pos = p;
  if (t->pos < 0) return t;
  const int p = t->pos;
  const int low = p == 0 ? 1 << 30 : (p & -p);
  if (p > 0) t->parent = t->ranks[static_cast<std::size_t>(p & (p - 1))];
  for (int d = 1; d < low && p + d < n; d <<= 1) {
    t->children.push_back(t->ranks[static_cast<std::size_t>(p + d)]);
    t->subtrees.emplace_back(p + d, std::min(p + 2 * d, n));
  }
  t->down.assign(t->children.rbegin(), t->children.rend());
  return t;
}

/// "ranks 2, 5-7, 9" (at most 12 runs).
std::string rank_list(std::span<const int> r) {
  std::string s;
  std::size_t runs = 0;
  for (std::size_t i = 0; i < r.size();) {
    std::size_t j = i;
    while (j + 1 < r.size() && r[j + 1] == r[j] + 1) ++j;
    if (++runs > 12) return s + ", ...";
    if (!s.empty()) s += ", ";
    s += std::to_string(r[i]);
    if (j > i) s += "-" + std::to_string(r[j]);
    i = j + 1;
  }
  return s;
}

// ---- the wire ----

enum class Kind : std::uint8_t { up = 1, down = 2, idRequest = 3, idReply = 4 };
/// kExchange: a toAll over two members, whose root sends its own contribution down at the start
/// (see exchanges() below).
enum : std::uint8_t { kStruct = 1, kToAll = 2, kError = 4, kSplit = 8, kExchange = 16 };
constexpr std::uint32_t kMagic = 0x52454455;  // "UDER"
constexpr int kTag = 1, kPayloadTag = 2;
/// Payloads up to this size travel in the header's message; larger ones in a second message
/// (no copy).
constexpr std::size_t kInline = 8192;

/// Compact messages. A lone message of a call-order reduction over every rank (the commonest:
/// `reduce` without an id) carries no header: its kind, its flags and its id's distance from
/// the id of the last message of such a reduction between the same two ranks (compact or not:
/// see noteSent) go in its tag, the upper half of the tags (MPI_TAG_UB), and it travels as its
/// payload alone; where the distance does not fit, the header goes along. An 8-byte contribution is
/// then an 8-byte message, as MPI_Reduce's is: shared-memory transports move a message that fits in
/// one slot of their queue (Open MPI 4.1: 32 bytes with its own headers, so up to 10 bytes of
/// payload) in one cache line from core to core, and this one in two. A tag's code, low bits
/// first: down (else up), struct, toAll, exchange, then the id's distance, biased.
struct CompactTags {
  int base = 0;      // the first compact tag; 0: none (too few tags)
  int distBits = 0;  // bits of the distance
  std::int64_t half = 0;
  explicit CompactTags(int maxTag) {
    int bits = 0;  // tags 0 .. 2^bits - 1 all exist
    while (bits < 31 && (std::int64_t{1} << (bits + 1)) - 1 <= maxTag) ++bits;
    if (bits < 10) return;
    base = 1 << (bits - 1);
    distBits = bits - 1 - 4;
    half = std::int64_t{1} << (distBits - 1);
  }
};

/// A message on kTag is one or more of these, each followed by its payload (`size` bytes; none
/// when kSplit): the messages a batch (Reductions::batch, or one pass of progress) sends to one
/// rank go together, in the order they were made, up to kPacket bytes.
struct Header {
  std::uint32_t magic = kMagic;
  Kind kind = Kind::up;
  std::uint8_t flags = 0;
  std::uint16_t size = 0;  // the payload's bytes (<= kInline), when not kSplit
  std::uint64_t scope = 0, id = 0;
  std::uint64_t members = 0;  // the member list's hash
  std::uint64_t split = 0;    // kSplit: the payload's size (it follows on kPayloadTag)
};
static_assert(std::is_trivially_copyable_v<Header> && sizeof(Header) == 40);
static_assert(kInline <= 0xffff, "Header::size holds an inline payload's size");
/// The largest message on kTag: one header and an inline payload, or a batch of small ones.
constexpr std::size_t kPacket = sizeof(Header) + kInline;

/// A received message: its header, and its payload in `bytes` or, when small (a reduction of a
/// few numbers), in `inl` (a message that waits for its reduction then holds no buffer).
struct Message {
  static constexpr std::size_t kSmallPayload = 32;
  Header h;
  int src = -1;
  std::uint32_t inlSize = 0;  // bytes in inl (used when bytes has no capacity)
  alignas(8) char inl[kSmallPayload];
  ByteBuffer bytes;
  Bytes payload() const {
    return bytes.capacity() ? Bytes(bytes.data(), bytes.size()) : Bytes(inl, inlSize);
  }
  /// `padded`: p has kSmallPayload readable bytes whatever n is (then a small payload is copied
  /// with a fixed-size copy, not a call).
  void setPayload(const char* p, std::size_t n, ByteBuffer&& buffer, bool padded = false) {
    if (n <= kSmallPayload) {
      if (padded)
        std::memcpy(inl, p, kSmallPayload);
      else
        std::memcpy(inl, p, n);
      inlSize = static_cast<std::uint32_t>(n);
      bytes = ByteBuffer();
      return;
    }
    bytes = std::move(buffer);
    bytes.clear();
    bytes.append(p, n);
  }
  /// The payload as a buffer of its own (from `spare` when it is inline).
  ByteBuffer takeBuffer(ByteBuffer&& spare) {
    if (bytes.capacity()) return std::move(bytes);
    spare.clear();
    spare.append(inl, inlSize);
    return std::move(spare);
  }
};

/// Early messages, pooled: each reduction's are a list through the pool (arrival order), so that
/// a message that comes before its reduction costs no allocation once the pool has grown.
struct EarlyList {
  std::int32_t head = -1, tail = -1;
};

}  // namespace

struct ReductionState : std::enable_shared_from_this<ReductionState> {
  std::weak_ptr<ReductionEngine> engine;
  ReductionEngine* eng = nullptr;  // engine's, while it is alive
  Key key{};
  std::optional<ReductionId> id;
  std::shared_ptr<const MemberTree> tree;
  std::unique_ptr<ReductionOps> ops;
  bool toAll = false;
  bool exchange = false;  // toAll over two members: the contributions cross (see exchanges())
  const char* what = "";
  // up: contributions coming in; down: waiting for the result (toAll); sending: a non-root of a
  // root-only reduction whose value is still being sent, or a member whose lent contribution
  // is (it is done once the send is)
  enum class Phase { up, down, sending, done } phase = Phase::up;
  std::vector<Message> kids;  // the children's messages, child order (entries not yet come: stale)
  std::vector<Bytes> parts;   // their payloads, for the merge (kept with the state: no zeroing)
  std::uint64_t have = 0;     // bit i: child i's message has come (a member has < 32 children)
  std::size_t missing = 0;
  bool isStruct = false;      // ops->isStruct(), kept for the headers
  bool inLaunch = false;      // being started: in ReductionEngine::launching, not yet in the table
  std::string error;          // this reduction failed (every member that knows says so)
  std::exception_ptr thrown;  // this member's merge or handler threw
  bool hasResult = false;

  std::string describe() const {
    std::string s = std::string(what) + " ";
    s += id ? "id " + std::to_string(id->value) : "call #" + std::to_string(key.id);
    return s + " over ranks " + rank_list(tree->ranks) + " (root " +
           std::to_string(tree->ranks.front()) + ")";
  }
  void rethrow() const {
    if (thrown) std::rethrow_exception(thrown);
    if (!error.empty()) throw CommError(error);
  }
};

struct ReductionEngine {
  Comm comm;
  Backend* b = nullptr;
  int me = 0, P = 1;
  std::shared_ptr<const MemberTree> all;
  KeyTable<std::shared_ptr<ReductionState>> active;
  std::unordered_map<std::uint64_t, std::uint64_t> calls;  // call-order counters, per scope
  // Messages that came before this rank could take them, by reduction, in arrival order: one
  // source's messages of one kind are taken in the order sent.
  KeyTable<EarlyList> early;
  struct Pooled {
    Message m;
    std::int32_t next = -1;  // the next of its reduction's list, or of the free list
  };
  std::vector<Pooled> pool;
  std::int32_t freePooled = -1;
  // Finished states, for the next reductions: one whose handles are all gone (the table holds
  // the only reference) is reset and reused, with its vectors' capacity and its ops. Up to
  // kFinished of any size, and up to kFinishedSmall whose value (a result a handle may still
  // read) holds at most kSmallValue bytes: a thousand reductions in flight at once reuse a
  // thousand states, without keeping a thousand large results alive.
  std::deque<std::shared_ptr<ReductionState>> finished;  // oldest first
  // The slot a finished state goes to first (then `finished`).
  std::shared_ptr<ReductionState> last;
  static constexpr std::size_t kFinished = 16, kFinishedSmall = 4096, kSmallValue = 256;
  /// A state for a new reduction: a finished one nobody refers to, or a new one. The slot is
  /// looked at first (one reduction after another), then the oldest few of `finished` (the
  /// likeliest to have lost their handles); one still referred to goes to the back.
  [[gnu::always_inline]] std::shared_ptr<ReductionState> freshState() {
    if (last && last.use_count() == 1) {  // the usual case: one reduction after another
      last->phase = ReductionState::Phase::up;
      last->error.clear();
      if (last->thrown) last->thrown = nullptr;
      last->hasResult = false;
      return std::move(last);
    }
    return olderState();
  }
  [[gnu::noinline]] std::shared_ptr<ReductionState> olderState() {
    for (int looked = 0; looked < 4 && !finished.empty(); ++looked) {
      std::shared_ptr<ReductionState> s = std::move(finished.front());
      finished.pop_front();
      if (s.use_count() > 1) {
        finished.push_back(std::move(s));
        continue;
      }
      s->phase = ReductionState::Phase::up;
      s->error.clear();
      s->thrown = nullptr;
      s->hasResult = false;
      return s;
    }
    return std::make_shared<ReductionState>();
  }
  // The posted receive for the next message (of any tag: compact messages carry their header
  // in it) and its buffer (a header and an inline payload: every message but a split payload
  // fits).
  ByteBuffer posted;
  std::shared_ptr<void> post;
  CompactTags compact{0};
  // By rank: the id of the last message of a call-order reduction over every rank sent to it
  // and received from it (the distances in compact tags count from them).
  std::vector<std::uint64_t> compactSent, compactRecv;
  // States waiting for sends of their own value to finish reading it: roots of exchanges, whose
  // merge changes that value, and members in phase `sending`.
  std::vector<std::shared_ptr<ReductionState>> held;
  // The next small message is built here; it moves into a shared buffer only if its send does
  // not complete at once.
  ByteBuffer scratch;
  std::uint64_t globalCalls = 0;  // the call-order counter of the global member list
  struct Out {
    std::shared_ptr<void> op;
    std::shared_ptr<const void> bytes;  // what keeps the bytes it reads
  };
  std::vector<Out> outs;  // sends in flight and what they read
  struct Pending {        // a split payload being received
    Message m;
    std::shared_ptr<void> op;
  };
  std::deque<Pending> pending;
  std::uint64_t globalIds = 0, dynamicIds = 0;
  // Receive buffers whose messages have been merged, kept for the next ones: small ones (a
  // rank that runs ahead can leave dozens of messages waiting) and large ones (payloads would
  // otherwise cost fresh pages, zeroed by the kernel, on every reduction).
  std::vector<ByteBuffer> spareSmall, spareLarge;
  static constexpr std::size_t kSmall = 2 * kInline, kSpareSmall = 64, kSpareLarge = 8;
  /// A buffer of n bytes for a payload.
  ByteBuffer buffer(std::size_t n) {
    ByteBuffer b;
    if (n <= kSmall) {
      b = smallBuffer();
    } else {
      for (std::size_t i = spareLarge.size(); i-- > 0;)
        if (spareLarge[i].capacity() >= n) {
          b = std::move(spareLarge[i]);
          spareLarge.erase(spareLarge.begin() + static_cast<std::ptrdiff_t>(i));
          break;
        }
    }
    b.resize(n);
    return b;
  }
  /// A buffer for a message of at most the inline size.
  ByteBuffer smallBuffer() {
    if (spareSmall.empty()) return {};
    ByteBuffer b = std::move(spareSmall.back());
    spareSmall.pop_back();
    return b;
  }
  void keep(ByteBuffer&& b) {
    if (b.capacity() == 0) return;
    if (b.capacity() <= kSmall) {  // the newest are kept (the next taken)
      if (spareSmall.size() == kSpareSmall) spareSmall.erase(spareSmall.begin());
      spareSmall.push_back(std::move(b));
      return;
    }
    if (spareLarge.size() == kSpareLarge) spareLarge.erase(spareLarge.begin());
    spareLarge.push_back(std::move(b));
  }
  /// Keeps the children's buffers (the messages stay, stale, for the state's next use).
  void recycle(std::vector<Message>& kids) {
    for (Message& k : kids) keep(std::move(k.bytes));
  }
  std::vector<std::function<void(ReductionId, Bytes)>> idHandlers;

  ~ReductionEngine() {
    try {
      flush();  // a batch's messages that no wait has sent
    } catch (...) {
    }
    // Sends still in flight read their buffers: give them a moment, then let the buffers go
    // with the communicator (leaked rather than freed under a running send; lent bytes are the
    // caller's: the reduction's error says they are still read).
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    try {
      while (!outs.empty() && std::chrono::steady_clock::now() < until) testSends();
    } catch (...) {
    }
    active.forEach([](const Key&, std::shared_ptr<ReductionState>& s) {
      if (s->phase != ReductionState::Phase::done) {
        s->error = s->describe() + ": its Reductions was destroyed first";
        if (s->ops->lentBusy())
          s->error +=
              ", while a send of this rank's lent contribution was still in flight: "
              "the lent bytes may still be read, and must stay alive";
        s->phase = ReductionState::Phase::done;
      }
    });
    for (Out& o : outs) new std::shared_ptr<const void>(std::move(o.bytes));
    try {
      b->cancelAny(post);
    } catch (...) {
    }
  }

  void testSends() {
    std::erase_if(outs, [&](Out& o) { return b->test(o.op); });
  }

  // ---- batches: the small messages made while one is open go to each rank together ----

  // Open while > 0: Reductions::batch() (holds) and each pass of progress (passes).
  int holds = 0, passes = 0;
  std::vector<ByteBuffer> batch;  // by rank: the messages waiting for it, back to back
  std::vector<int> batched;       // the ranks with messages waiting, in first-message order
  /// Whether a message goes into the batch: one is open, or messages still wait (a send that
  /// failed left them: later ones go behind them, in order, at the next call's flush).
  bool batching() const { return holds > 0 || passes > 0 || !batched.empty(); }
  bool anyBatched() const { return !batched.empty(); }

  /// The compact tag that carries h for a message to d alone (see CompactTags), or 0: it goes
  /// with its header.
  int compactTag(int d, const Header& h) const {
    if (!compact.base || (h.kind != Kind::up && h.kind != Kind::down) ||
        (h.flags & (kError | kSplit)) || h.scope != all->hash || h.members != all->hash)
      return 0;
    const auto dist = static_cast<std::int64_t>(h.id - compactSent[static_cast<std::size_t>(d)]);
    if (dist < -compact.half || dist >= compact.half) return 0;
    const auto code =
        static_cast<int>(((dist + compact.half) << 4) | (h.kind == Kind::down ? 1 : 0) |
                         ((h.flags & kStruct) ? 2 : 0) | ((h.flags & kToAll) ? 4 : 0) |
                         ((h.flags & kExchange) ? 8 : 0));
    return compact.base + code;
  }
  /// Sends n bytes of messages (each a header and its payload) to d as one message; a message
  /// alone that compactTag allows goes as its payload alone, with its header in the tag.
  std::shared_ptr<void> isendMessages(int d, const char* p, std::size_t n) {
    if (n >= sizeof(Header)) {
      Header h;
      std::memcpy(&h, p, sizeof h);
      if (n == sizeof h + h.size)
        if (const int tag = compactTag(d, h)) {
          auto op = b->isend(d, tag, {p + sizeof h, h.size});
          compactSent[static_cast<std::size_t>(d)] = h.id;  // sent: the receiver counts from it
          return op;
        }
    }
    auto op = b->isend(d, kTag, {p, n});
    noteSent(d, p, n);
    return op;
  }
  /// The distances in compact tags count from the last message of a call-order reduction over
  /// every rank between the two ranks, compact or not: each side notes the id of every such
  /// message, in the order they travel (one sender's messages arrive in the order sent).
  void noteSent(int d, const char* p, std::size_t n) {
    for (std::size_t at = 0; at + sizeof(Header) <= n;) {
      Header h;
      std::memcpy(&h, p + at, sizeof h);
      if (h.scope == all->hash) compactSent[static_cast<std::size_t>(d)] = h.id;
      at += sizeof h + ((h.flags & kSplit) ? 0 : h.size);
    }
  }
  void noteReceived(const Message& m) {
    if (m.h.scope == all->hash) compactRecv[static_cast<std::size_t>(m.src)] = m.h.id;
  }
  /// The message of a compact tag from `from` (its payload in place: n bytes), into m's header
  /// and source; false if the tag is not a compact one.
  bool decodeCompact(int tag, int from, std::size_t n, Message& m) {
    if (!compact.base || tag < compact.base || n > kInline) return false;
    const int code = tag - compact.base;
    m.h = Header{};
    m.h.kind = (code & 1) ? Kind::down : Kind::up;
    m.h.flags = static_cast<std::uint8_t>(((code & 2) ? kStruct : 0) | ((code & 4) ? kToAll : 0) |
                                          ((code & 8) ? kExchange : 0));
    m.h.size = static_cast<std::uint16_t>(n);
    m.h.scope = m.h.members = all->hash;
    std::uint64_t& last = compactRecv[static_cast<std::size_t>(from)];
    last += static_cast<std::uint64_t>(static_cast<std::int64_t>(code >> 4) - compact.half);
    m.h.id = last;
    m.src = from;
    return true;
  }

  /// Sends the bytes as one message to d; if the send does not complete at once, they move
  /// into a buffer the send keeps (then `bytes` is empty).
  void sendNow(int d, ByteBuffer& bytes) {
    auto op = isendMessages(d, bytes.data(), bytes.size());
    if (op) outs.push_back({std::move(op), std::make_shared<const ByteBuffer>(std::move(bytes))});
  }
  /// Sends what waits for rank d.
  void flushTo(int d) {
    if (batch.empty()) return;
    ByteBuffer& q = batch[static_cast<std::size_t>(d)];
    if (q.size() == 0) return;
    sendNow(d, q);
    q.clear();
    std::erase(batched, d);
  }
  /// Sends everything that waits, each rank's together, in first-message order (a result goes
  /// down to the farthest child first). A send that throws leaves its rank and the later ones
  /// waiting, for the next call.
  void flush() {
    std::size_t i = 0;
    try {
      for (; i < batched.size(); ++i) {
        const int d = batched[i];
        ByteBuffer& q = batch[static_cast<std::size_t>(d)];
        if (q.size()) sendNow(d, q);
        q.clear();
      }
    } catch (...) {
      batched.erase(batched.begin(), batched.begin() + static_cast<std::ptrdiff_t>(i));
      throw;
    }
    batched.clear();
  }

  /// Sends scratch's message to each of dests (in a batch: appended to what waits for each);
  /// if a send does not complete at once, the bytes move into a shared buffer that the
  /// remaining sends read too.
  void sendScratch(std::span<const int> dests) {
    if (batching()) {
      if (batch.empty()) batch.resize(static_cast<std::size_t>(P));
      for (int d : dests) {
        ByteBuffer& q = batch[static_cast<std::size_t>(d)];
        if (q.size() + scratch.size() > kPacket) flushTo(d);
        if (q.size() == 0) batched.push_back(d);
        q.append(scratch.data(), scratch.size());
      }
      return;
    }
    std::shared_ptr<const ByteBuffer> kept;
    for (int d : dests) {
      const ByteBuffer& from = kept ? *kept : scratch;
      auto op = isendMessages(d, from.data(), from.size());
      if (!op) continue;
      if (!kept) kept = std::make_shared<const ByteBuffer>(std::move(scratch));  // same bytes
      outs.push_back({std::move(op), kept});
    }
  }

  void send(int dest, Header h, Bytes payload, std::shared_ptr<const void> keep = {}) {
    if (payload.size() > kInline && !keep) {  // a payload of its own, which must outlive the send
      auto copy = std::make_shared<ByteBuffer>();
      copy->append(payload.data(), payload.size());
      payload = {copy->data(), copy->size()};
      keep = std::move(copy);
    }
    if (payload.size() <= kInline) {
      h.size = static_cast<std::uint16_t>(payload.size());
      scratch.clear();
      scratch.reserve(sizeof h + payload.size());
      scratch.append(&h, sizeof h);
      scratch.append(payload.data(), payload.size());
      sendScratch(std::span<const int>(&dest, 1));
      return;
    }
    flushTo(dest);  // what waits for dest goes first: one rank's messages arrive in order
    h.flags |= kSplit;
    h.size = 0;
    h.split = payload.size();
    auto head = std::make_shared<ByteBuffer>();
    head->append(&h, sizeof h);
    auto op = b->isend(dest, kTag, {head->data(), head->size()});
    noteSent(dest, head->data(), head->size());
    if (op) outs.push_back({std::move(op), std::move(head)});
    op = b->isend(dest, kPayloadTag, payload);
    if (op) outs.push_back({std::move(op), std::move(keep)});
  }

  Header headerOf(const ReductionState& s, Kind k) const {
    Header h;
    h.kind = k;
    h.flags =
        static_cast<std::uint8_t>((s.isStruct ? kStruct : 0) | (s.toAll ? kToAll : 0) |
                                  (s.exchange ? kExchange : 0) | (s.error.empty() ? 0 : kError));
    h.scope = s.key.scope;
    h.id = s.key.id;
    h.members = s.tree->hash;
    return h;
  }

  /// Sends s's value (or its error) to `dests` as kind k.
  void sendValue(ReductionState& s, Kind k, std::span<const int> dests) {
    if (dests.empty()) return;
    Header h = headerOf(s, k);
    if (s.error.empty())
      if (auto whole = s.ops->shared(); whole.keep && whole.bytes.size() > kInline) {
        for (int d : dests) send(d, h, whole.bytes, whole.keep);  // no copy
        return;
      }
    scratch.clear();
    scratch.grow(sizeof h);  // room for the header, written once the size is known
    if (!s.error.empty())
      scratch.append(s.error.data(), s.error.size());
    else
      s.ops->pack(scratch);
    const std::size_t n = scratch.size() - sizeof h;
    if (n <= kInline) {  // one message: header and payload
      h.size = static_cast<std::uint16_t>(n);
      std::memcpy(scratch.data(), &h, sizeof h);
      sendScratch(dests);
      return;
    }
    auto buf = std::make_shared<const ByteBuffer>(std::move(scratch));
    for (int d : dests) send(d, h, {buf->data() + sizeof h, n}, buf);
  }

  // ---- receiving ----

  /// Posts the receive for the next message (MPI matches it on arrival; polling tests it,
  /// which is far cheaper than a matched probe).
  void repost() { b->irecvAny(post, Backend::kAnyTag, posted.data(), posted.size()); }

  // A message that holds several (a batch) is copied out and taken one message at a time, so
  // that a receive made meanwhile (a handler that waits) takes the rest first, in order.
  ByteBuffer inbox;
  std::size_t inboxAt = 0;
  int inboxFrom = -1;

  [[noreturn]] void corrupted(std::size_t n, int from) {
    inboxAt = inbox.size();  // the rest of it is dropped; the next message is read as usual
    throw CommError("Reductions: corrupted message of " + std::to_string(n) + " bytes from rank " +
                    std::to_string(from));
  }
  /// The first split payload's receive for m (a header with kSplit), posted before the receive
  /// of any tag is again, so that the payload goes to it.
  void receivePayload(Message& m) {
    Pending p;
    p.m = std::move(m);
    p.m.bytes = buffer(p.m.h.split);
    p.op = b->irecv(p.m.src, kPayloadTag, p.m.bytes.data(), p.m.bytes.size());
    pending.push_back(std::move(p));
  }
  /// The inbox's next message into m.
  void takeInbox(Message& m) {
    const std::size_t left = inbox.size() - inboxAt;
    if (left < sizeof(Header)) corrupted(inbox.size(), inboxFrom);
    std::memcpy(&m.h, inbox.data() + inboxAt, sizeof(Header));
    // (A split payload's header comes alone: one in a batch is not a message.)
    const std::size_t k = m.h.size;
    if (m.h.magic != kMagic || (m.h.flags & kSplit) || sizeof(Header) + k > left)
      corrupted(inbox.size(), inboxFrom);
    m.src = inboxFrom;
    m.setPayload(inbox.data() + inboxAt + sizeof(Header), k,
                 k > Message::kSmallPayload ? smallBuffer() : ByteBuffer());
    inboxAt += sizeof(Header) + k;
    noteReceived(m);
  }

  /// What next() found: nothing, a message (in m), or a split payload's header (its payload's
  /// receive now posted: m has been taken).
  enum class Next { none, message, payload };
  /// The next message: the inbox's, else the posted receive's (posted again at once, before
  /// anything runs that may poll again; a split payload's receive goes first).
  [[gnu::always_inline]] Next next(Message& m) {
    if (inboxAt < inbox.size()) {
      takeInbox(m);
      return Next::message;
    }
    int from = 0, tag = 0;
    std::size_t n = 0;
    try {
      if (!b->testAny(post, from, n, tag)) return Next::none;
    } catch (...) {  // a message the posted receive cannot hold: it is dropped
      repost();
      throw;
    }
    if (tag != kTag) {  // a compact message: its payload alone (or bytes that are not ours)
      if (!decodeCompact(tag, from, n, m)) {
        repost();
        throw CommError("Reductions: a message of " + std::to_string(n) + " bytes from rank " +
                        std::to_string(from) + " with tag " + std::to_string(tag) +
                        ", which is not a reductions' message");
      }
      m.setPayload(posted.data(), n, n > Message::kSmallPayload ? smallBuffer() : ByteBuffer(),
                   /*padded=*/true);  // posted holds a header and kInline bytes
      repost();
      return Next::message;
    }
    if (n >= sizeof(Header)) std::memcpy(&m.h, posted.data(), sizeof(Header));
    const bool header = n >= sizeof(Header) && m.h.magic == kMagic;
    if (header && n == sizeof(Header) && (m.h.flags & kSplit)) {
      // The receive of any tag is posted again only once the payload's is: it goes there.
      m.src = from;
      m.setPayload(posted.data() + sizeof(Header), 0, ByteBuffer(), /*padded=*/true);
      noteReceived(m);
      try {
        receivePayload(m);
      } catch (...) {
        repost();
        throw;
      }
      repost();
      return Next::payload;
    }
    if (header && !(m.h.flags & kSplit) && n == sizeof(Header) + m.h.size) {  // read in place
      m.src = from;
      const std::size_t k = n - sizeof(Header);
      m.setPayload(posted.data() + sizeof(Header), k,
                   k > Message::kSmallPayload ? smallBuffer() : ByteBuffer(), /*padded=*/true);
      noteReceived(m);
      repost();
      return Next::message;
    }
    inbox.clear();  // a batch (or bytes that are not a message)
    inbox.append(posted.data(), n);
    inboxAt = 0;
    inboxFrom = from;
    repost();
    takeInbox(m);
    return Next::message;
  }

  /// Receives and dispatches what has come, until a reduction finishes and the packet it came in
  /// is read (then the caller, a wait, may be done: the rest waits for the next pass, and the
  /// pass makes no MPI call that finds nothing).
  bool receive() {
    bool any = false;
    const std::uint64_t finishedBefore = finishes;
    Message m;  // every field is written for each message
    for (;;) {
      const Next got = next(m);
      if (got == Next::none) break;
      any = true;
      if (got == Next::payload) continue;
      if (!pending.empty() && std::any_of(pending.begin(), pending.end(),
                                          [&](const Pending& q) { return q.m.src == m.src; })) {
        // Behind its source's split payload still on the way: one source's messages are taken
        // in the order sent (an id reused after a large contribution must not overtake it).
        Pending p;
        p.m = std::move(m);
        pending.push_back(std::move(p));  // no operation: complete once it reaches the front
      } else {
        dispatch(m);
      }
      // A packet's rest is read on (no MPI call needed).
      if (finishes != finishedBefore && inboxAt >= inbox.size()) break;
    }
    // Split payloads complete in the order their headers came (one source's are in order).
    while (!pending.empty() && b->test(pending.front().op)) {
      Message p = std::move(pending.front().m);
      pending.pop_front();
      dispatch(p);
      any = true;
    }
    return any;
  }

  /// The reduction being started with this key (not yet in the table), if any.
  const std::shared_ptr<ReductionState>* launched(const Key& key) const {
    for (auto i = launching.size(); i-- > 0;)
      if ((*launching[i])->key == key && (*launching[i])->phase != ReductionState::Phase::done)
        return launching[i];
    return nullptr;
  }

  /// Takes m (its payload moves out) into its reduction, or keeps it for it.
  void dispatch(Message& m) {
    if (m.h.kind == Kind::idRequest) return serveIdRequest(m);
    if (m.h.kind == Kind::idReply) return deliverId(m);
    const Key key{m.h.scope, m.h.id};
    if (early.empty() || !hasEarly(key, m.src, m.h.kind)) {
      if (const auto* sp = launched(key)) {  // launch holds it
        if (accept(**sp, m)) {
          advance(*sp);
          return;
        }
      } else if (const auto* found = active.find(key)) {
        // A copy: finishing erases the table's entry, and the caller may hold no handle.
        const std::shared_ptr<ReductionState> sp = *found;
        if (accept(*sp, m)) {
          advance(sp);
          return;
        }
      }
    }
    std::int32_t at = freePooled;
    if (at >= 0) {
      freePooled = pool[static_cast<std::size_t>(at)].next;
    } else {
      at = static_cast<std::int32_t>(pool.size());
      pool.emplace_back();
    }
    Pooled& slot = pool[static_cast<std::size_t>(at)];
    slot.m = std::move(m);
    slot.next = -1;
    EarlyList& list = early[key];
    if (list.tail >= 0)
      pool[static_cast<std::size_t>(list.tail)].next = at;
    else
      list.head = at;
    list.tail = at;
  }

  bool hasEarly(const Key& key, int src, Kind kind) const {
    if (early.empty()) return false;
    const EarlyList* list = early.find(key);
    if (!list) return false;
    for (std::int32_t i = list->head; i >= 0; i = pool[static_cast<std::size_t>(i)].next) {
      const Message& m = pool[static_cast<std::size_t>(i)].m;
      if (m.src == src && m.h.kind == kind) return true;
    }
    return false;
  }
  /// The first early message for key from src of kind, taken out (false: none).
  bool takeEarly(const Key& key, int src, Kind kind, Message& out) {
    if (early.empty()) return false;
    EarlyList* list = early.find(key);
    if (!list) return false;
    for (std::int32_t i = list->head, prev = -1; i >= 0;
         prev = i, i = pool[static_cast<std::size_t>(i)].next) {
      Pooled& p = pool[static_cast<std::size_t>(i)];
      if (p.m.src != src || p.m.h.kind != kind) continue;
      out = std::move(p.m);
      (prev >= 0 ? pool[static_cast<std::size_t>(prev)].next : list->head) = p.next;
      if (list->tail == i) list->tail = prev;
      p.m.bytes = ByteBuffer();
      p.next = freePooled;
      freePooled = i;
      if (list->head < 0) early.erase(key);
      return true;
    }
    return false;
  }

  /// Takes m into s if s waits for it (a child's up, or the parent's down). False: not for s.
  bool accept(ReductionState& s, Message& m) {
    using Phase = ReductionState::Phase;
    if (m.h.kind == Kind::up) {
      if (s.phase != Phase::up) return false;
      const auto& ch = s.tree->children;
      const auto i = static_cast<std::size_t>(std::find(ch.begin(), ch.end(), m.src) - ch.begin());
      if (i == ch.size() || (s.have >> i & 1)) return false;
      const auto mine =
          static_cast<std::uint8_t>((s.isStruct ? kStruct : 0) | (s.toAll ? kToAll : 0));
      const std::uint8_t diff = (mine ^ m.h.flags) & (kStruct | kToAll);
      if (m.h.members != s.tree->hash || diff) {
        // A contribution of another kind of reduction: the reduction fails, the message is
        // consumed (it was sent for this id).
        std::string why = m.h.members != s.tree->hash ? "another member list"
                          : (diff & kStruct)
                              ? std::string("the ") + ((m.h.flags & kStruct) ? "struct" : "plain") +
                                    " form (this rank: " + (s.isStruct ? "struct" : "plain") + ")"
                              : std::string((m.h.flags & kToAll) ? "toAll" : "root only") +
                                    " (this rank: " + (s.toAll ? "toAll" : "root only") + ")";
        m.h.flags |= kError;
        const std::string text =
            s.describe() + ": rank " + std::to_string(m.src) + " contributed with " + why;
        m.bytes.clear();
        m.bytes.append(text.data(), text.size());
      }
      s.kids[i] = std::move(m);
      s.have |= std::uint64_t{1} << i;
      --s.missing;
      return true;
    }
    if (m.h.kind == Kind::down) {
      if (s.phase != Phase::down || m.src != s.tree->parent) return false;
      if (s.exchange) {
        takeRootValue(s, m);
        finish(s);
        return true;
      }
      // Forward first (as received: no repacking), then take it.
      Bytes pl = m.payload();
      std::shared_ptr<ByteBuffer> shared;  // the sends share the payload until they are done
      if (!s.tree->down.empty()) {
        Header h = m.h;
        h.flags &= static_cast<std::uint8_t>(~kSplit);
        shared = std::make_shared<ByteBuffer>(m.takeBuffer(smallBuffer()));
        pl = Bytes(shared->data(), shared->size());
        for (int c : s.tree->down) send(c, h, pl, shared);
      }
      if (m.h.flags & kError) {
        if (s.error.empty()) s.error.assign(pl.data(), pl.size());
      } else if (s.error.empty()) {
        try {
          s.ops->unpack(pl);
          s.hasResult = true;
          s.ops->deliver();
        } catch (...) {
          s.thrown = std::current_exception();
        }
      }
      finish(s);
      return true;
    }
    return false;
  }

  /// The second member of an exchange: the root's own contribution has come; it makes the
  /// root's merge call, merge(root's, [its own]), and delivers.
  void takeRootValue(ReductionState& s, Message& m) {
    const Header mine = headerOf(s, Kind::down);
    const std::uint8_t diff = (mine.flags ^ m.h.flags) & (kStruct | kToAll | kExchange);
    if (m.h.members != mine.members || diff) {
      if (s.error.empty())
        s.error = s.describe() + ": rank " + std::to_string(m.src) + " (the root) took part with " +
                  (m.h.members != mine.members ? std::string("another member list")
                   : (diff & kStruct)          ? std::string("the other form (struct or plain)")
                                               : std::string("another kind (toAll or root only)"));
    } else if (m.h.flags & kError) {
      if (s.error.empty()) s.error.assign(m.payload().data(), m.payload().size());
    }
    if (!s.error.empty()) return;
    ByteBuffer root = m.takeBuffer(smallBuffer());
    try {
      s.ops->mergeUnder(root);
    } catch (...) {
      mergeThrew(s);
      return;
    }
    keep(std::move(root));  // what mergeUnder left there
    s.hasResult = true;
    try {
      s.ops->deliver();
    } catch (...) {
      s.thrown = std::current_exception();
    }
  }

  std::uint64_t finishes = 0;  // reductions finished on this rank
  void finish(ReductionState& s) {
    if (s.ops->lentBusy()) [[unlikely]] {  // done once the caller's bytes are no longer read
      s.phase = ReductionState::Phase::sending;
      held.push_back(s.shared_from_this());
      return;
    }
    ++finishes;
    s.phase = ReductionState::Phase::done;
    recycle(s.kids);
    if (!s.hasResult) keep(s.ops->releaseValue());  // for Reductions::buffer
    if (s.inLaunch) return;                         // launch retires it
    auto* entry = active.find(s.key);
    if (!entry) return;
    retire(*entry);
    active.erase(s.key);
  }
  /// A finished reduction's state, kept for reuse if it may be (in the slot the next start looks
  /// at first, else with the older ones).
  void retire(const std::shared_ptr<ReductionState>& owner) {
    ReductionState& s = *owner;
    s.ops->dropFunctions();  // what the merge and handler hold goes now, not at reuse
    if (!last) {             // the next start takes it (unless a handle still refers to it)
      last = owner;
      return;
    }
    if (finished.size() < kFinished ||
        (finished.size() < kFinishedSmall && s.ops->heldBytes() <= kSmallValue &&
         (s.tree.use_count() > 1 || s.tree->ranks.size() <= 64)))
      finished.push_back(owner);
  }
  /// Whether a start may skip its poll: its reduction has finished, nothing else is in flight or
  /// being sent here, and fewer than kQuietStarts starts in a row have skipped theirs.
  static constexpr int kQuietStarts = 8;
  int quietStarts = 0;
  bool quietStart(const ReductionState& s) {
    if (s.phase == ReductionState::Phase::done && launching.size() == 1 && active.empty() &&
        outs.empty() && pending.empty() && held.empty() && batched.empty() &&
        inboxAt >= inbox.size() && ++quietStarts <= kQuietStarts)
      return true;
    quietStarts = 0;
    return false;
  }
  /// The reductions being started (innermost last): a start makes progress before its state
  /// goes into the table, and most finish in it, never entering the table.
  std::vector<const std::shared_ptr<ReductionState>*> launching;

  /// Moves s on once its own and every child's contribution are in.
  void advance(const std::shared_ptr<ReductionState>& sp) {
    ReductionState& s = *sp;
    if (s.phase != ReductionState::Phase::up || s.missing) return;
    if (s.exchange && s.ops->sharedBusy()) {  // the root's value is still being sent
      held.push_back(sp);  // (once: advance is called for it once its last part came)
      return;
    }
    for (const Message& k : s.kids)
      if ((k.h.flags & kError) && s.error.empty()) {
        Bytes pl = k.payload();
        s.error.assign(pl.data(), pl.size());
      }
    if (s.error.empty() && !s.kids.empty()) mergeKids(s);
    recycle(s.kids);
    if (s.tree->parent >= 0) {
      sendValue(s, Kind::up, std::span<const int>(&s.tree->parent, 1));
      if (s.toAll) {
        s.phase = ReductionState::Phase::down;
        // The result may have come already.
        Message m;
        if (takeEarly(s.key, s.tree->parent, Kind::down, m)) accept(s, m);
        return;
      }
      if (s.ops->sharedBusy()) {  // done once its value has left (then the buffer is free)
        s.phase = ReductionState::Phase::sending;
        held.push_back(sp);
        return;
      }
      finish(s);
      return;
    }
    // The root.
    if (s.toAll && !s.exchange) sendValue(s, Kind::down, s.tree->down);
    deliverRoot(s);
  }

  /// The root's end: the result goes to the handler (unless s has failed), and s is done.
  void deliverRoot(ReductionState& s) {
    if (s.error.empty()) {
      s.hasResult = true;
      try {
        s.ops->deliver();
      } catch (...) {
        s.thrown = std::current_exception();
      }
    }
    finish(s);
  }

  /// Merges the children's payloads (child order) into s's value; a merge that throws fails s.
  void mergeParts(ReductionState& s, std::span<const Bytes> parts, ByteBuffer* first = nullptr) {
    try {
      s.ops->merge(parts, first);
    } catch (...) {
      mergeThrew(s);
    }
  }
  /// Inside the handler around a merge call (mergeParts, takeRootValue): s fails with what the
  /// merge threw (kept out of the callers, so that a merge that returns costs a call and no more).
  [[gnu::cold, gnu::noinline]] void mergeThrew(ReductionState& s) {
    s.thrown = std::current_exception();
    s.error = s.describe() + ": the merge threw on rank " + std::to_string(me);
    try {
      throw;
    } catch (const std::exception& e) {
      s.error = s.error + ": " + e.what();
    } catch (...) {
    }
  }

  /// Merges the children's messages (all in, child order) into s's value.
  void mergeKids(ReductionState& s) {
    for (std::size_t i = 0; i < s.kids.size(); ++i) s.parts[i] = s.kids[i].payload();
    ByteBuffer* first = s.kids[0].bytes.capacity() ? &s.kids[0].bytes : nullptr;
    mergeParts(s, std::span<const Bytes>(s.parts.data(), s.kids.size()), first);
  }

  /// Whether nothing waits here that a pass of progress would see before a new message: no
  /// batch open or waiting, no early or half-received message, no packet half read.
  bool nothingWaits() const {
    return holds == 0 && early.empty() && pending.empty() && held.empty() && batched.empty() &&
           inboxAt >= inbox.size();
  }
  /// Whether the start of s may take its children's messages straight from the posted receive
  /// (takeLoneRoot): s is the root of a root-only reduction or of an exchange whose own value's
  /// send no longer reads it, and nothing waits.
  bool loneRoot(const ReductionState& s) const {
    return (!s.toAll || (s.exchange && !s.ops->sharedBusy())) && s.tree->parent < 0 &&
           !s.tree->children.empty() && nothingWaits();
  }
  /// The start of a root-only reduction's root (loneRoot), the commonest case: one reduction
  /// after another, whose children have sent by the time the root starts. Takes their messages
  /// as they come from the posted receive while each is a contribution of s's, merges and
  /// delivers: no dispatch, no table, no pass of progress (what the usual path would do, with
  /// the same checks and the same merge). True: s has finished. False: the usual path goes on
  /// from where this stopped (the children taken are in s; a message not for s, or not a plain
  /// match, has been dispatched as a pass would; `polled`: the receive held nothing, so the
  /// start need not poll again).
  bool takeLoneRoot(ReductionState& s, bool& polled) {
    const auto& ch = s.tree->children;
    const auto mine =
        static_cast<std::uint8_t>((s.isStruct ? kStruct : 0) | (s.toAll ? kToAll : 0));
    Message m;  // (its own: a merge or handler may start a reduction meanwhile)
    while (s.missing) {
      const Next got = next(m);
      if (got != Next::message) {
        polled = got == Next::none;
        return false;
      }
      const auto i = static_cast<std::size_t>(std::find(ch.begin(), ch.end(), m.src) - ch.begin());
      if (m.h.kind != Kind::up || m.h.scope != s.key.scope || m.h.id != s.key.id ||
          i == ch.size() || (s.have >> i & 1) || m.h.members != s.tree->hash ||
          (m.h.flags & (kStruct | kToAll | kError)) != mine) {
        dispatch(m);  // (a contribution of another kind fails s there, as it would in a pass)
        return false;
      }
      if (ch.size() == 1) {  // the only child: merged from where it lies
        const Bytes part = m.payload();
        mergeParts(s, std::span<const Bytes>(&part, 1), m.bytes.capacity() ? &m.bytes : nullptr);
        keep(std::move(m.bytes));
        s.missing = 0;
        break;
      }
      s.kids[i] = std::move(m);
      s.have |= std::uint64_t{1} << i;
      if (--s.missing == 0) {
        mergeKids(s);
        recycle(s.kids);
      }
    }
    deliverRoot(s);
    return true;
  }

  /// Whether the start of s may send its value straight from its buffer (sendLoneLeaf): s is a
  /// leaf of a root-only reduction of the plain form and no message waits to go before it, or
  /// the second member of an exchange of the plain form and nothing waits (it then takes the
  /// root's value from the posted receive: takeLoneDown).
  bool loneLeaf(const ReductionState& s) const {
    return !s.isStruct && s.tree->children.empty() && s.tree->parent >= 0 &&
           (s.toAll ? s.exchange && nothingWaits() : !batching());
  }
  /// The start of a loneLeaf whose value fits a compact message: sends it to the parent straight
  /// from the value's buffer (if the send does not complete at once, the buffer goes with it,
  /// and an exchange keeps a copy to merge with), then finishes s (root only) or waits for the
  /// root's value (an exchange): what advance would do, without building the message in
  /// `scratch`. False: nothing sent (the usual path does it).
  bool sendLoneLeaf(ReductionState& s, ByteBuffer& value) {
    if (value.size() > kInline) return false;
    Header h = headerOf(s, Kind::up);
    h.size = static_cast<std::uint16_t>(value.size());
    const int d = s.tree->parent;
    const int tag = compactTag(d, h);
    if (!tag) return false;
    auto op = b->isend(d, tag, {value.data(), value.size()});
    compactSent[static_cast<std::size_t>(d)] = h.id;
    if (op) {
      auto kept = std::make_shared<const ByteBuffer>(std::move(value));
      if (s.toAll) value.append(kept->data(), kept->size());
      outs.push_back({std::move(op), std::move(kept)});
    }
    if (s.toAll)
      s.phase = ReductionState::Phase::down;
    else
      finish(s);
    return true;
  }
  /// The second member of an exchange, its value sent (sendLoneLeaf): takes the root's value if
  /// it is the posted receive's message, merges (the root's merge call) and delivers, as accept
  /// would. True: s has finished. False: the usual path goes on (a message not for s has been
  /// dispatched; `polled`: the receive held nothing).
  bool takeLoneDown(ReductionState& s, bool& polled) {
    Message m;
    const Next got = next(m);
    if (got != Next::message) {
      polled = got == Next::none;
      return false;
    }
    if (m.h.kind != Kind::down || m.h.scope != s.key.scope || m.h.id != s.key.id ||
        m.src != s.tree->parent) {
      dispatch(m);
      return false;
    }
    takeRootValue(s, m);
    finish(s);
    return true;
  }

  /// Takes the messages for s that came before it started.
  void takeQueued(const std::shared_ptr<ReductionState>& sp) {
    if (early.empty()) return;
    ReductionState& s = *sp;
    Message m;
    for (int c : s.tree->children) {
      if (!takeEarly(s.key, c, Kind::up, m)) continue;
      if (!accept(s, m)) throw InternalError("Reductions: a queued message was refused");
    }
  }

  // ---- ids on request ----

  ReductionId nextDynamic() { return ReductionId{(++dynamicIds << 2) | 2}; }

  void serveIdRequest(const Message& m) {
    Reader r(m.payload().data(), m.payload().size());
    const auto handler = r.get<std::int32_t>();
    const auto to = r.get<std::int32_t>();
    Bytes data(r.position(), r.left());
    const ReductionId id = nextDynamic();
    Header h;
    h.kind = Kind::idReply;
    ByteBuffer reply;
    Writer w(reply);
    w.put<std::uint64_t>(id.value).put<std::int32_t>(handler);
    reply.append(data.data(), data.size());
    for (int d = 0; d < P; ++d)
      if (d != me && (to < 0 || to == d)) send(d, h, {reply.data(), reply.size()});
    if (to < 0 || to == me) callIdHandler(handler, id, data);
  }
  void deliverId(const Message& m) {
    Reader r(m.payload().data(), m.payload().size());
    const ReductionId id{r.get<std::uint64_t>()};
    const auto handler = r.get<std::int32_t>();
    callIdHandler(handler, id, Bytes(r.position(), r.left()));
  }
  void callIdHandler(int handler, ReductionId id, Bytes data) {
    if (handler < 0 || static_cast<std::size_t>(handler) >= idHandlers.size())
      throw ValueError("requestReductionId: rank " + std::to_string(me) + " has no id handler " +
                       std::to_string(handler) + " (it registered " +
                       std::to_string(idHandlers.size()) + ")");
    idHandlers[static_cast<std::size_t>(handler)](id, data);
  }

  /// One pass of progress; the messages it makes go out together at its end (with `all`, those
  /// of an open batch too: every wait and test sends them, so that nothing waits on them).
  bool progress(bool all = true) {
    ++passes;
    bool any = false;
    try {
      any = pass();
    } catch (...) {
      --passes;
      try {
        if (all || holds == 0) flush();
      } catch (...) {  // what could not be sent waits for the next call
      }
      throw;
    }
    --passes;
    if ((all || holds == 0) && !batched.empty()) flush();
    return any;
  }

  bool pass() {
    bool any = receive();
    if (!outs.empty()) testSends();
    for (std::size_t i = 0; i < held.size();)
      if (!held[i]->ops->sharedBusy()) {
        const std::shared_ptr<ReductionState> sp = std::move(held[i]);
        held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
        if (sp->phase == ReductionState::Phase::sending)
          finish(*sp);
        else
          advance(sp);
        any = true;
      } else {
        ++i;
      }
    return any;
  }

  /// Progress until done() (a deadline: a CommError from timeoutText()).
  template <class Done, class Text>
  void progressUntil(Done done, std::optional<std::chrono::steady_clock::time_point> until,
                     Text timeoutText) {
    if (anyBatched()) flush();  // even when done already: nothing may wait on a batch
    for (;;) {
      if (done()) return;
      const std::uint64_t seen = b->events();
      if (progress()) continue;
      if (done()) return;
      if (until) {
        if (std::chrono::steady_clock::now() >= *until) throw CommError(timeoutText());
        b->idleUntil(seen, *until);
      } else {
        b->idle(seen);
      }
    }
  }

  std::string missingText(const ReductionState& s, double seconds) const {
    std::string t = s.describe() + ": rank " + std::to_string(me) + " waited " +
                    std::to_string(seconds) + " s: ";
    if (s.phase == ReductionState::Phase::sending)
      return t + (s.toAll ? "its result has come, and a send of its lent contribution to rank " +
                                std::to_string(s.tree->parent) + " has not completed yet"
                          : "its contribution is still being sent to rank " +
                                std::to_string(s.tree->parent) + " (which has not received it)");
    if (s.phase == ReductionState::Phase::down)
      return t + "it has contributed and waits for the result from rank " +
             std::to_string(s.tree->parent) + " (a member outside its subtree has not contributed)";
    std::vector<int> ranks;
    for (std::size_t i = 0; i < s.tree->children.size(); ++i)
      if (!(s.have >> i & 1))
        for (int p = s.tree->subtrees[i].first; p < s.tree->subtrees[i].second; ++p)
          ranks.push_back(s.tree->ranks[static_cast<std::size_t>(p)]);
    std::sort(ranks.begin(), ranks.end());
    return t + "no contribution has reached it from ranks " + rank_list(ranks) +
           " (each missing child's subtree: at least one of them has not contributed)";
  }
};

}  // namespace detail

using detail::ReductionEngine;
using detail::ReductionState;

ReductionId ReductionId::user(std::uint64_t n) {
  if (n >= (std::uint64_t{1} << 62))
    throw ValueError("ReductionId::user: " + std::to_string(n) + " is not below 2^62");
  return ReductionId{n << 2};
}

// ---- Reduction ----

namespace {
ReductionState& state_of(const std::shared_ptr<ReductionState>& s, const char* what) {
  if (!s) throw StateError(std::string("Reduction::") + what + ": an empty handle");
  return *s;
}
std::shared_ptr<ReductionEngine> engine_of(ReductionState& s, const char* what) {
  auto e = s.engine.lock();
  if (!e)
    throw StateError(std::string("Reduction::") + what + ": " + s.describe() +
                     ": its Reductions is gone");
  return e;
}
}  // namespace

namespace {
/// A wait or test of a finished reduction still sends what an open batch holds (nothing may
/// wait on it).
void flush_batch(ReductionState& s) {
  // One thread uses a Reductions: alive now, it stays alive through this call.
  if (!s.engine.expired() && s.eng->anyBatched()) s.eng->flush();
}
}  // namespace

bool Reduction::test() {
  ReductionState& s = state_of(s_, "test");
  if (s.phase != ReductionState::Phase::done)
    engine_of(s, "test")->progress();
  else
    flush_batch(s);
  if (s.phase != ReductionState::Phase::done) return false;
  s.rethrow();
  return true;
}

void Reduction::wait() {
  ReductionState& s = state_of(s_, "wait");
  if (s.phase != ReductionState::Phase::done) {
    auto e = engine_of(s, "wait");
    e->progressUntil([&] { return s.phase == ReductionState::Phase::done; }, std::nullopt,
                     [] { return std::string(); });
  } else {
    flush_batch(s);
  }
  s.rethrow();
}

void Reduction::wait(std::chrono::steady_clock::duration timeout) {
  ReductionState& s = state_of(s_, "wait");
  if (s.phase != ReductionState::Phase::done) {
    auto e = engine_of(s, "wait");
    const auto t0 = std::chrono::steady_clock::now();
    e->progressUntil(
        [&] { return s.phase == ReductionState::Phase::done; }, t0 + timeout,
        [&] {
          return "Reduction::wait: " +
                 e->missingText(
                     s,
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        });
  } else {
    flush_batch(s);
  }
  s.rethrow();
}

bool Reduction::done() const {
  return state_of(s_, "done").phase == ReductionState::Phase::done;
}
bool Reduction::hasResult() const {
  return state_of(s_, "hasResult").hasResult;
}

namespace {
/// The plain form's value: bytes, shared with the sends that read them once they go as a payload
/// of their own (they must stay unchanged from then on); or, until it is merged or replaced, the
/// caller's lent bytes (Lent), which the sends read where they lie.
struct BytesOps final : detail::ReductionOps {
  BytesOps(ByteBuffer v, MergeFn m, ElementwiseOp e, Handler h)
      : value(std::move(v)), mergeFn(std::move(m)), handler(std::move(h)) {
    setElementwise(e);
  }
  void setElementwise(ElementwiseOp e) {
    if (e.type == op.type && e.op == op.op) return;  // (a reused state: usually the same)
    op = e;
    const detail::ElementwiseKernel k = detail::elementwise_kernel(e.type, e.op);
    elementwise = k.inPlace;
    elementwiseOnto = k.onto;
    elementShift =
        elementwise ? static_cast<unsigned>(std::countr_zero(detail::prim_size(e.type))) : 0;
  }
  /// Lends the caller's bytes as the value (`value` keeps its buffer, empty: a result that
  /// comes down goes there).
  void lend(Bytes b) {
    lent = b;
    isLent = true;
    value.clear();
    sent.reset();
  }
  Bytes bytes() const {
    if (isLent) return lent;
    const ByteBuffer& b = sent ? *sent : value;
    return {b.data(), b.size()};
  }
  /// The value, to be changed: taken back from the sends once they are done with it (lent
  /// bytes: copied).
  ByteBuffer& own() {
    if (isLent) {
      isLent = false;
      value.clear();
      value.append(lent.data(), lent.size());
      return value;
    }
    if (sent) {
      if (sent.use_count() == 1)
        value = std::move(*sent);
      else
        value = *sent;  // a copy: a send still reads it
      sent.reset();
    }
    return value;
  }
  void merge(std::span<const Bytes> children, ByteBuffer* first) override {
    if (elementwise) {
      if (isLent && !children.empty()) {  // the first child's merge makes the value a buffer
        const std::size_t n = lent.size();
        if (children[0].size() != n) [[unlikely]]
          sizes_differ("a contribution", children[0].size(), n);
        // Onto the child's buffer, as it lies in cache after its receive (MPI_Reduce's root
        // receives into its result): two arrays' traffic, not the three of a merge into a
        // buffer of its own. The same operands. (A payload of more than 32 bytes always comes
        // in a buffer of its own; else own() below copies the lent bytes.)
        if (first && first->data() == children[0].data()) {
          elementwiseOnto(first->data(), lent.data(), n >> elementShift);
          std::swap(value, *first);
          isLent = false;
          children = children.subspan(1);
        }
      }
      ByteBuffer& v = own();
      for (Bytes k : children) apply(v.data(), v.size(), k);
      return;
    }
    value = mergeFn(std::move(own()), children);
  }
  void mergeUnder(ByteBuffer& first) override {
    if (elementwise) {
      Bytes mine = lent;
      if (!isLent) {
        const ByteBuffer& v = own();
        mine = Bytes(v.data(), v.size());
      }
      if (first.size() != mine.size()) [[unlikely]]
        sizes_differ("the root's contribution", first.size(), mine.size());
      apply(first.data(), first.size(), mine);
      isLent = false;
      std::swap(value, first);  // the root's merged value; mine's buffer for the caller
      return;
    }
    ByteBuffer mine = std::move(own());
    const Bytes kid(mine.data(), mine.size());
    value = mergeFn(std::move(first), std::span<const Bytes>(&kid, 1));
    first = std::move(mine);  // its buffer, for the caller to reuse
  }
  bool sharedBusy() const override { return (sent && sent.use_count() > 1) || lentBusy(); }
  bool lentBusy() const override { return lentSends && lentSends.use_count() > 1; }
  std::size_t heldBytes() const override {
    return value.capacity() + (sent ? sent->capacity() : 0);
  }
  void dropFunctions() override {
    mergeFn = nullptr;
    handler = nullptr;
  }
  /// The elementwise merge of one child's value into acc (n bytes).
  void apply(char* acc, std::size_t n, Bytes kid) const {
    if (kid.size() != n) [[unlikely]]
      sizes_differ("a contribution", kid.size(), n);
    elementwise(acc, kid.data(), n >> elementShift);
  }
  [[noreturn, gnu::cold]] static void sizes_differ(const char* whose, std::size_t other,
                                                   std::size_t mine) {
    throw ValueError(std::string("an elementwise merge: ") + whose + " of " +
                     std::to_string(other) + " bytes where this member's has " +
                     std::to_string(mine) + " (every member contributes as many elements)");
  }
  ByteBuffer releaseValue() override {
    if (!sent) return std::move(value);   // (with lent bytes: the buffer it kept)
    if (sent.use_count() > 1) return {};  // a send still reads it
    ByteBuffer b = std::move(*sent);
    sent.reset();
    return b;
  }
  void pack(ByteBuffer& out) const override { out.append(bytes().data(), bytes().size()); }
  Shared shared() override {
    if (isLent) {  // the sends read the caller's bytes; lentSends counts them
      if (lent.size() <= detail::kInline) return {};
      if (!lentSends) lentSends = std::make_shared<char>();
      return {lent, lentSends};
    }
    if (!sent && value.size() <= detail::kInline) return {};  // it goes inline: a copy
    if (!sent) sent = std::make_shared<ByteBuffer>(std::move(value));
    return {Bytes(sent->data(), sent->size()), sent};
  }
  void unpack(Bytes b) override {
    isLent = false;
    sent.reset();  // a send may still read the old one
    value.clear();
    value.append(b.data(), b.size());
  }
  void deliver() override {
    if (handler) handler(bytes());
  }
  bool isStruct() const override { return false; }
  bool hasMerge() const override { return static_cast<bool>(mergeFn) || elementwise != nullptr; }
  ByteBuffer value;
  std::shared_ptr<ByteBuffer> sent;  // the value, once shared (then `value` is empty)
  Bytes lent;                        // the caller's bytes, the value while isLent
  bool isLent = false;
  std::shared_ptr<char> lentSends;  // held by the sends that read lent bytes (kept for reuse)
  MergeFn mergeFn;
  Handler handler;
  ElementwiseOp op;
  detail::ElementwiseFn elementwise = nullptr;      // op's function; nullptr: mergeFn merges
  detail::ElementwiseFn elementwiseOnto = nullptr;  // the same onto the right operand
  unsigned elementShift = 0;                        // log2 of the element's bytes
};
}  // namespace

Bytes Reduction::result() const {
  ReductionState& s = state_of(s_, "result");
  if (!s.hasResult)
    throw StateError("Reduction::result: " + s.describe() +
                     ": no result on this rank (the root has it; every member with toAll), or "
                     "not done yet");
  if (s.ops->isStruct())
    throw TypeError("Reduction::result: " + s.describe() + " is a struct reduction (value())");
  return static_cast<const BytesOps&>(*s.ops).bytes();
}

ByteBuffer Reduction::takeResult() {
  ReductionState& s = state_of(s_, "takeResult");
  if (!s.hasResult || s.isStruct) [[unlikely]]
    (void)result();  // throws: no plain-form result on this rank
  auto& b = static_cast<BytesOps&>(*s.ops);
  s.hasResult = false;
  if (!b.sent && !b.isLent) return std::move(b.value);
  ByteBuffer copy;  // a send may still read it (or it is lent: one member's)
  const Bytes v = b.bytes();
  copy.append(v.data(), v.size());
  return copy;
}

std::optional<ReductionId> Reduction::id() const {
  return state_of(s_, "id").id;
}
const detail::ReductionOps& Reduction::ops() const {
  return *state_of(s_, "value").ops;
}

// ---- Group ----

std::span<const int> Group::ranks() const {
  if (!tree_) return {};
  return tree_->ranks;
}
bool Group::contains(int rank) const {
  return tree_ && std::find(tree_->ranks.begin(), tree_->ranks.end(), rank) != tree_->ranks.end();
}

// ---- Reductions ----

Reductions::Reductions(const Comm& c) : e_(std::make_shared<ReductionEngine>()) {
  e_->comm = c.dup();
  e_->b = &e_->comm.backend();
  e_->me = e_->comm.rank();
  e_->P = e_->comm.size();
  std::vector<int> all(static_cast<std::size_t>(e_->P));
  for (int r = 0; r < e_->P; ++r) all[static_cast<std::size_t>(r)] = r;
  e_->all = detail::make_tree(std::move(all), e_->me);
  e_->posted.resize(sizeof(detail::Header) + detail::kInline);
  e_->compact = detail::CompactTags(e_->b->maxTag());
  e_->compactSent.assign(static_cast<std::size_t>(e_->P), 0);
  e_->compactRecv.assign(static_cast<std::size_t>(e_->P), 0);
  e_->repost();
}

Reductions::~Reductions() = default;

int Reductions::rank() const {
  return e_->me;
}
int Reductions::size() const {
  return e_->P;
}
Comm& Reductions::comm() {
  return e_->comm;
}
std::size_t Reductions::inFlight() const {
  std::size_t n = e_->active.size();
  for (const auto* s : e_->launching) n += (*s)->phase != ReductionState::Phase::done;
  return n;
}
bool Reductions::progress() {
  return e_->progress();
}

Reductions::Batch Reductions::batch() {
  ++e_->holds;
  return Batch(e_);
}

Reductions::Batch::Batch(Batch&& o) noexcept : e_(std::move(o.e_)) {
  o.e_.reset();
}
Reductions::Batch& Reductions::Batch::operator=(Batch&& o) noexcept {
  if (this != &o) {
    try {
      end();
    } catch (...) {
    }
    e_ = std::move(o.e_);
    o.e_.reset();
  }
  return *this;
}
Reductions::Batch::~Batch() {
  try {
    end();
  } catch (...) {  // what could not be sent waits for the next call (end() reports it)
  }
}
void Reductions::Batch::end() {
  const auto e = e_.lock();
  e_.reset();
  if (e && --e->holds == 0) e->flush();  // (a Reductions destroyed first sent what waited)
}

ByteBuffer Reductions::buffer(std::size_t capacity) {
  ByteBuffer b = e_->buffer(capacity);
  b.clear();
  return b;
}

void Reductions::progressUntil(const std::function<bool()>& pred,
                               std::optional<std::chrono::steady_clock::duration> timeout) {
  std::optional<std::chrono::steady_clock::time_point> until;
  if (timeout) until = std::chrono::steady_clock::now() + *timeout;
  e_->progressUntil(pred, until, [&] {
    return "Reductions::progressUntil: rank " + std::to_string(e_->me) +
           ": the condition did not hold within the timeout";
  });
}

std::shared_ptr<const detail::MemberTree> Reductions::listTree(std::span<const int> ranks,
                                                               const char* what) const {
  if (ranks.empty()) throw ValueError(std::string(what) + ": an empty rank list");
  std::vector<char> seen(static_cast<std::size_t>(e_->P));
  for (int r : ranks) {
    if (r < 0 || r >= e_->P)
      throw IndexError(std::string(what) + ": rank " + std::to_string(r) +
                           " in the list is out of range (ranks 0.." + std::to_string(e_->P - 1) +
                           ")",
                       static_cast<std::uint64_t>(r), static_cast<std::uint64_t>(e_->P));
    if (seen[static_cast<std::size_t>(r)]++)
      throw ValueError(std::string(what) + ": rank " + std::to_string(r) +
                       " is listed twice (ranks " + detail::rank_list(ranks) + ")");
  }
  // The list 0..P-1 is the global one: the same tree, the same call order (and its messages
  // may be compact).
  bool everyRank = ranks.size() == static_cast<std::size_t>(e_->P);
  for (std::size_t i = 0; everyRank && i < ranks.size(); ++i)
    everyRank = ranks[i] == static_cast<int>(i);
  if (everyRank) return e_->all;
  return detail::make_tree(std::vector<int>(ranks.begin(), ranks.end()), e_->me);
}

const std::shared_ptr<const detail::MemberTree>& Reductions::groupTree(const Group& g,
                                                                       const char* what) const {
  if (!g.valid())
    throw StateError(std::string(what) + ": an empty Group (make one with establishGroup)");
  return g.tree_;
}
const std::shared_ptr<const detail::MemberTree>& Reductions::globalTree() const {
  return e_->all;
}

Group Reductions::establishGroup(std::vector<int> ranks) const {
  return Group(listTree(ranks, "establishGroup"));
}

ReductionId Reductions::globalReductionId() {
  return ReductionId{(++e_->globalIds << 2) | 1};
}

ReductionId Reductions::dynamicReductionId() {
  if (e_->me != 0)
    throw StateError("dynamicReductionId: only rank 0 hands out dynamic ids (this is rank " +
                     std::to_string(e_->me) + "; requestReductionId asks it from any rank)");
  return e_->nextDynamic();
}

int Reductions::onReductionId(std::function<void(ReductionId, Bytes)> handler) {
  if (!handler) throw ValueError("onReductionId: an empty handler");
  e_->idHandlers.push_back(std::move(handler));
  return static_cast<int>(e_->idHandlers.size() - 1);
}

void Reductions::requestReductionId(int handler, int to, Bytes data) {
  if (handler < 0 || static_cast<std::size_t>(handler) >= e_->idHandlers.size())
    throw IndexError("requestReductionId: no id handler " + std::to_string(handler) +
                         " (registered: " + std::to_string(e_->idHandlers.size()) + ")",
                     static_cast<std::uint64_t>(handler), e_->idHandlers.size());
  if (to < -1 || to >= e_->P)
    throw IndexError("requestReductionId: rank " + std::to_string(to) + " (ranks 0.." +
                         std::to_string(e_->P - 1) + ", or -1 for every rank)",
                     static_cast<std::uint64_t>(to), static_cast<std::uint64_t>(e_->P));
  detail::Message m;
  m.h.kind = detail::Kind::idRequest;
  m.src = e_->me;
  Writer w(m.bytes);
  w.put<std::int32_t>(handler).put<std::int32_t>(to);
  m.bytes.append(data.data(), data.size());
  if (e_->me == 0) {
    e_->serveIdRequest(m);
  } else {
    e_->send(0, m.h, {m.bytes.data(), m.bytes.size()});
  }
  e_->progress(false);
}

Reduction Reductions::reduce(ByteBuffer mine, MergeFn merge, Handler handler, ReduceOptions o) {
  return startBytes(e_->all, std::move(mine), nullptr, std::move(merge), {}, std::move(handler), o,
                    "reduce");
}
Reduction Reductions::listReduce(std::span<const int> ranks, ByteBuffer mine, MergeFn merge,
                                 Handler handler, ReduceOptions o) {
  return startBytes(listTree(ranks, "listReduce"), std::move(mine), nullptr, std::move(merge), {},
                    std::move(handler), o, "listReduce");
}
Reduction Reductions::groupReduce(const Group& g, ByteBuffer mine, MergeFn merge, Handler handler,
                                  ReduceOptions o) {
  return startBytes(groupTree(g, "groupReduce"), std::move(mine), nullptr, std::move(merge), {},
                    std::move(handler), o, "groupReduce");
}
Reduction Reductions::reduce(ByteBuffer mine, ElementwiseOp op, Handler handler, ReduceOptions o) {
  return startBytes(e_->all, std::move(mine), nullptr, {}, op, std::move(handler), o, "reduce");
}
Reduction Reductions::listReduce(std::span<const int> ranks, ByteBuffer mine, ElementwiseOp op,
                                 Handler handler, ReduceOptions o) {
  return startBytes(listTree(ranks, "listReduce"), std::move(mine), nullptr, {}, op,
                    std::move(handler), o, "listReduce");
}
Reduction Reductions::groupReduce(const Group& g, ByteBuffer mine, ElementwiseOp op,
                                  Handler handler, ReduceOptions o) {
  return startBytes(groupTree(g, "groupReduce"), std::move(mine), nullptr, {}, op,
                    std::move(handler), o, "groupReduce");
}
Reduction Reductions::reduce(Lent mine, MergeFn merge, Handler handler, ReduceOptions o) {
  return startBytes(e_->all, {}, &mine, std::move(merge), {}, std::move(handler), o, "reduce");
}
Reduction Reductions::listReduce(std::span<const int> ranks, Lent mine, MergeFn merge,
                                 Handler handler, ReduceOptions o) {
  return startBytes(listTree(ranks, "listReduce"), {}, &mine, std::move(merge), {},
                    std::move(handler), o, "listReduce");
}
Reduction Reductions::groupReduce(const Group& g, Lent mine, MergeFn merge, Handler handler,
                                  ReduceOptions o) {
  return startBytes(groupTree(g, "groupReduce"), {}, &mine, std::move(merge), {},
                    std::move(handler), o, "groupReduce");
}
Reduction Reductions::reduce(Lent mine, ElementwiseOp op, Handler handler, ReduceOptions o) {
  return startBytes(e_->all, {}, &mine, {}, op, std::move(handler), o, "reduce");
}
Reduction Reductions::listReduce(std::span<const int> ranks, Lent mine, ElementwiseOp op,
                                 Handler handler, ReduceOptions o) {
  return startBytes(listTree(ranks, "listReduce"), {}, &mine, {}, op, std::move(handler), o,
                    "listReduce");
}
Reduction Reductions::groupReduce(const Group& g, Lent mine, ElementwiseOp op, Handler handler,
                                  ReduceOptions o) {
  return startBytes(groupTree(g, "groupReduce"), {}, &mine, {}, op, std::move(handler), o,
                    "groupReduce");
}

Reduction Reductions::start(const std::shared_ptr<const detail::MemberTree>& tree,
                            std::unique_ptr<detail::ReductionOps> ops, const ReduceOptions& o,
                            const char* what) {
  auto s = prepare(tree, ops->hasMerge(), o, what);
  s->ops = std::move(ops);
  s->isStruct = s->ops->isStruct();
  return launch(std::move(s));
}

namespace {
/// An elementwise merge's checks at the start: an operator that applies to the type, and a
/// contribution that is a whole number of elements.
void check_elementwise(ElementwiseOp op, std::size_t bytes, const char* what) {
  if (op.type == Prim::none || op.op == OpKind::none)
    throw ValueError(std::string(what) +
                     ": an elementwise merge needs an arithmetic type and an operator of "
                     "comm::ops (sum, prod, min, max, land, lor, band, bor); make it with "
                     "comm::elementwise<T>(comm::ops::sum{})");
  if (!detail::elementwise_valid(op.type, op.op))
    throw ValueError(std::string(what) +
                     ": an elementwise band or bor applies to integers only, not to float or "
                     "double");
  const std::size_t each = detail::prim_size(op.type);
  if ((bytes & (each - 1)) != 0)  // (sizes are powers of two)
    throw ValueError(std::string(what) + ": a contribution of " + std::to_string(bytes) +
                     " bytes is not a whole number of elements of " + std::to_string(each) +
                     " bytes (the elementwise merge's type)");
}
}  // namespace

namespace {
/// Makes the caller's lent bytes b's value: a copy if they go inline anyway (a message of at
/// most kInline bytes is built from them at once) or are the result (a member alone), else
/// lent, with a buffer of their size for the result a leaf of a toAll receives when b has none
/// (a reused state's: the last result's). (A member with children merges onto its first
/// child's received buffer, which becomes its value.)
void lend_to(ReductionEngine& e, BytesOps& b, Bytes bytes, const detail::MemberTree& t,
             bool toAll) {
  const std::size_t n = bytes.size();
  const bool holds = t.children.empty() && toAll;
  if (n <= detail::kInline || (t.children.empty() && t.parent < 0)) {
    if (b.value.capacity() < n) b.value = e.buffer(n);
    b.value.clear();
    b.value.append(bytes.data(), n);
    return;
  }
  if (holds && b.value.capacity() < n) b.value = e.buffer(n);
  b.lend(bytes);
}
}  // namespace

Reduction Reductions::startBytes(const std::shared_ptr<const detail::MemberTree>& tree,
                                 ByteBuffer&& mine, const Lent* lent, MergeFn&& merge,
                                 ElementwiseOp op, Handler&& handler, const ReduceOptions& o,
                                 const char* what) {
  if (op.op != OpKind::none || op.type != Prim::none) [[unlikely]]
    check_elementwise(op, lent ? lent->bytes.size() : mine.size(), what);
  auto s = prepare(tree, static_cast<bool>(merge) || op.op != OpKind::none, o, what);
  BytesOps* b;
  if (s->ops && !s->isStruct) {  // a reused state's BytesOps
    b = static_cast<BytesOps*>(s->ops.get());
    b->isLent = false;
    if (!lent) b->value = std::move(mine);  // (lent: the buffer it has stays, for the merge)
    b->sent.reset();
    if (merge) b->mergeFn.swap(merge);      // (the state's were emptied when it finished: cheaper
    if (handler) b->handler.swap(handler);  // than a move)
    b->setElementwise(op);
  } else {
    auto ops =
        std::make_unique<BytesOps>(std::move(mine), std::move(merge), op, std::move(handler));
    b = ops.get();
    s->ops = std::move(ops);
    s->isStruct = false;
  }
  if (lent) [[unlikely]]
    lend_to(*e_, *b, lent->bytes, *s->tree, s->toAll);
  return launch(std::move(s));
}

// prepare and launch are each called from the two starts only: inlined into them (a reduction's
// start is a few hundred instructions; the calls' own work was a fair part of it).
[[gnu::always_inline]] inline std::shared_ptr<ReductionState> Reductions::prepare(
    const std::shared_ptr<const detail::MemberTree>& tree, bool hasMerge, const ReduceOptions& o,
    const char* what) {
  ReductionEngine& e = *e_;
  if (!hasMerge) throw ValueError(std::string(what) + ": an empty merge function");
  if (tree->pos < 0)
    throw ValueError(std::string(what) + ": rank " + std::to_string(e.me) +
                     " is not a member (ranks " + detail::rank_list(tree->ranks) + ")");
  detail::Key key;
  if (o.id) {
    key = {0, o.id->value};
    const auto* other = e.active.find(key);
    if (!other) other = e.launched(key);
    if (other)
      throw StateError(std::string(what) + ": id " + std::to_string(o.id->value) +
                       " is already in flight on rank " + std::to_string(e.me) + " (" +
                       (*other)->describe() + ")");
  } else {
    key = {tree->hash, tree == e.all ? e.globalCalls + 1 : e.calls[tree->hash] + 1};
  }
  // Nothing below throws but allocation.
  auto s = e.freshState();
  if (!o.id) (tree == e.all ? e.globalCalls : e.calls[tree->hash]) = key.id;
  if (s->engine.expired()) {
    s->engine = e_;
    s->eng = e_.get();
  }
  s->what = what;
  s->key = key;
  if (s->tree != tree) s->tree = tree;  // a reused state usually has it already
  s->toAll = o.toAll;
  s->id = o.id;
  return s;
}

[[gnu::always_inline]] inline Reduction Reductions::launch(std::shared_ptr<ReductionState> s) {
  ReductionEngine& e = *e_;
  const std::size_t nk = s->tree->children.size();
  if (s->kids.size() != nk) {
    s->kids.resize(nk);
    s->parts.resize(nk);
  }
  s->have = 0;
  s->missing = nk;
  s->exchange = s->toAll && s->tree->ranks.size() == 2;
  // It goes into the table only if it has not finished by the end of its start (the usual
  // case for a leaf, and for a member whose children's messages are in).
  s->inLaunch = true;
  e.launching.push_back(&s);
  auto settle = [&] {
    e.launching.pop_back();
    s->inLaunch = false;
    if (s->phase != ReductionState::Phase::done) {
      e.active[s->key] = s;
    } else {
      e.retire(s);
    }
  };
  bool polled = false;
  try {
    if (s->exchange && s->tree->pos == 0) e.sendValue(*s, detail::Kind::down, s->tree->down);
    if (e.loneRoot(*s) && e.takeLoneRoot(*s, polled)) {
      settle();
      return Reduction(std::move(s));
    }
    if (e.loneLeaf(*s) && !static_cast<BytesOps&>(*s->ops).isLent &&
        e.sendLoneLeaf(*s, static_cast<BytesOps&>(*s->ops).value)) {
      if (s->phase == ReductionState::Phase::down && e.takeLoneDown(*s, polled)) {
        settle();
        return Reduction(std::move(s));
      }
    } else {
      e.takeQueued(s);
      e.advance(s);
    }
    // In a batch, a start neither polls nor sends. A start that finished its reduction with
    // nothing else in flight here skips the poll up to kQuietStarts times in a row (a leaf's
    // loop: its poll would find nothing for it), so that messages for others (an id request)
    // still wait at most that many starts; and one whose receive was found empty just now.
    if (e.holds == 0 && !polled && !e.quietStart(*s)) e.progress();
  } catch (...) {
    settle();  // in flight as it stands, as if started (the error is the caller's)
    throw;
  }
  settle();
  return Reduction(std::move(s));
}

}  // namespace antler::comm
