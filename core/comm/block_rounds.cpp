#include "core/comm/block_rounds.hpp"

#include <exception>
#include <mutex>
#include <numeric>

#include "core/comm/collectives.hpp"
#include "core/error.hpp"
#include "core/layout.hpp"

namespace antler::comm {

// ---- BlockOwners ----

BlockOwners BlockOwners::blocked(int nblocks, int ranks) {
  if (nblocks < 0 || ranks < 1)
    throw ValueError("BlockOwners::blocked: " + std::to_string(nblocks) + " blocks over " +
                     std::to_string(ranks) + " ranks (blocks >= 0, ranks >= 1)");
  std::vector<int> f(static_cast<std::size_t>(ranks) + 1);
  for (int r = 0; r < ranks; ++r)
    f[static_cast<std::size_t>(r)] =
        static_cast<int>(block_range(static_cast<Index>(nblocks), ranks, r).first);
  f.back() = nblocks;
  return BlockOwners(std::move(f));
}

BlockOwners::BlockOwners(std::vector<int> firsts) : firsts_(std::move(firsts)) {
  if (firsts_.size() < 2 || firsts_.front() != 0)
    throw ValueError(
        "BlockOwners: the first gids of P ranks and the block count (P + 1 entries "
        "from 0) are needed");
  for (std::size_t i = 1; i < firsts_.size(); ++i)
    if (firsts_[i] < firsts_[i - 1])
      throw ValueError("BlockOwners: rank " + std::to_string(i - 1) + " starts at gid " +
                       std::to_string(firsts_[i - 1]) + " after rank " + std::to_string(i) + "'s " +
                       std::to_string(firsts_[i]) + " (ranges must not decrease)");
}

int BlockOwners::rank(int gid) const {
  if (gid < 0 || gid >= nblocks())
    throw IndexError("BlockOwners::rank: gid " + std::to_string(gid) + " of " +
                         std::to_string(nblocks()) + " blocks",
                     static_cast<std::uint64_t>(gid), static_cast<std::uint64_t>(nblocks()));
  // The last rank whose first gid is <= gid (empty ranks share their first with the next).
  auto it = std::upper_bound(firsts_.begin(), firsts_.end() - 1, gid);
  return static_cast<int>(it - firsts_.begin()) - 1;
}

namespace detail {

// ---- LinkBoxes ----

void LinkBoxes::reset(std::span<const int> link) {
  link_ = link;
  sparse_.clear();
  if (!std::is_sorted(link.begin(), link.end()))
    throw InternalError("block rounds: a link is not in gid order");
  if (link.size() <= kDense) {
    dense_.clear();
    dense_.resize(link.size());
    used_.assign(link.size(), 0);
  } else {
    dense_.clear();
    used_.clear();
  }
}

LinkBox* LinkBoxes::find(int gid) {
  auto it = std::lower_bound(link_.begin(), link_.end(), gid);
  if (it == link_.end() || *it != gid) return nullptr;
  if (link_.size() > kDense) return &sparse_[gid];
  const auto i = static_cast<std::size_t>(it - link_.begin());
  used_[i] = 1;
  return &dense_[i];
}

// ---- one call's rounds ----

namespace {

std::string link_text(std::span<const int> l) {
  std::string s = "[";
  for (std::size_t i = 0; i < l.size() && i < 16; ++i) s += (i ? ", " : "") + std::to_string(l[i]);
  if (l.size() > 16) s += ", ... (" + std::to_string(l.size()) + " gids)";
  return s + "]";
}

std::size_t padded(std::size_t n) {
  return (n + 7) & ~std::size_t{7};
}

enum : std::uint8_t { kOk = 0, kFailed = 1 };
constexpr int kTag = 11;
/// Chunks up to this size travel inside the round's message to their rank; larger ones follow it
/// as their own messages, from and into their buffers.
constexpr std::size_t kInlineChunk = 8192;

/// One chunk in a round's message: the link it goes along (boxFrom -> boxTo), the link it was
/// enqueued on (from -> to), and its size; inline chunks' bytes follow their header.
struct ChunkHeader {
  std::int32_t boxFrom, boxTo, from, to;
  std::uint32_t messages;
  std::uint32_t how;  // kInline, kOwn (its bytes follow) or kLent (its values follow, unframed)
  std::uint64_t bytes, count;
};
static_assert(sizeof(ChunkHeader) == 40);
enum : std::uint32_t { kOwn = 0, kInline = 1, kLent = 2 };

/// A lent chunk as an owned one: its one message framed as enqueue frames a vector.
ByteBuffer frame_lent(const Chunk& c, ByteBuffer b) {
  const std::uint64_t len = sizeof(std::uint64_t) + c.lentBytes;
  b.clear();
  b.append(&len, sizeof len);
  b.append(&c.count, sizeof c.count);
  b.append(c.lent, c.lentBytes);
  const std::size_t pad = padded(b.size()) - b.size();
  if (pad) std::memset(b.grow(pad), 0, pad);
  return b;
}

}  // namespace

/// Buffers of finished rounds, handed out again: a link's buffer of a MiB would otherwise cost
/// fresh pages, each a fault the kernel zeroes, every round. Shared by the callbacks' threads.
struct BufferPool {
  static constexpr std::size_t kMaxBytes = std::size_t{256} << 20, kMaxCount = 64,
                               kMinCapacity = 4096;
  std::mutex m;
  std::vector<ByteBuffer> free;
  std::size_t bytes = 0;

  /// An empty buffer that holds `hint` bytes: the smallest such one kept, else a new one whose
  /// capacity is rounded up (to 64 KiB steps), so that the next round's messages of about the
  /// same size find it again.
  ByteBuffer take(std::size_t hint) {
    {
      std::lock_guard<std::mutex> lock(m);
      std::size_t best = free.size();
      for (std::size_t i = 0; i < free.size(); ++i) {
        const std::size_t c = free[i].capacity();
        if (c >= hint && (best == free.size() || c < free[best].capacity())) best = i;
      }
      if (best < free.size()) {
        ByteBuffer b = std::move(free[best]);
        free[best] = std::move(free.back());
        free.pop_back();
        bytes -= b.capacity();
        b.clear();
        return b;
      }
    }
    ByteBuffer b;
    constexpr std::size_t step = std::size_t{64} << 10;
    if (hint > kMinCapacity) b.reserve((hint + step - 1) / step * step);
    return b;
  }
  void give(ByteBuffer&& b) {
    if (b.capacity() < kMinCapacity) return;
    std::lock_guard<std::mutex> lock(m);
    if (free.size() == kMaxCount || bytes + b.capacity() > kMaxBytes) return;  // let it go
    bytes += b.capacity();
    free.push_back(std::move(b));
  }
  /// Takes back every buffer of a round's boxes.
  void give(LinkBoxes& boxes) {
    boxes.forEach([&](int, LinkBox& box) {
      for (Chunk& c : box.chunks) give(std::move(c.bytes));
    });
  }
};

/// A block active in a round: its links and their boxes.
struct Slot {
  int gid = 0;
  std::vector<int> in, out;
  LinkBoxes inbox, outbox;
};

struct BlockRun {
  BlockRun(Comm& c, const BlockOwners& o, const char* w, unsigned t, BlockRounds::Counts& k,
           BufferPool& p)
      : comm(c), owners(o), what(w), threads(t), counts(k), pool(p) {}
  Comm& comm;
  const BlockOwners& owners;
  const char* what;
  unsigned threads;
  BlockRounds::Counts& counts;
  BufferPool& pool;
  int me = comm.valid() ? comm.rank() : 0, P = comm.valid() ? comm.size() : 1;
  bool failed = false, own = false;
  ErrorKind kind = ErrorKind::value;
  std::string text;

  using RoundFn = std::function<void(int round, Slot&)>;
  using LinksFn =
      std::function<void(int round, int gid, std::vector<int>& in, std::vector<int>& out)>;

  ReduceProxy proxy(int gid, int round, int nblocks, LinkBoxes& in, LinkBoxes& out) {
    ReduceProxy p;
    p.pool_ = &pool;
    p.gid_ = gid;
    p.round_ = round;
    p.nblocks_ = nblocks;
    p.in_ = &in;
    p.out_ = &out;
    return p;
  }

  /// The slots of this rank's blocks active in `round`, their in-boxes ready to receive.
  std::vector<Slot> slots(int round, int last, const std::function<bool(int, int)>& active,
                          const LinksFn& links) {
    std::vector<Slot> v;
    for (int g = owners.first(me); g < owners.end(me); ++g) {
      if (!active(round, g)) continue;
      Slot& s = v.emplace_back();
      s.gid = g;
      links(round, g, s.in, s.out);
      if (round == last) s.out.clear();
    }
    for (Slot& s : v) s.inbox.reset(s.in);  // after the vector stopped moving
    return v;
  }

  /// fn on every slot (threads), unless a failure is known; a throw fails the run.
  void callbacks(int round, std::vector<Slot>& cur, const RoundFn& fn) {
    for (Slot& s : cur) s.outbox.reset(s.out);
    if (failed) return;
    std::vector<std::exception_ptr> errs(cur.size());
    const auto n = static_cast<std::ptrdiff_t>(cur.size());
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && n > 1)
    for (std::ptrdiff_t i = 0; i < n; ++i) {
      try {
        fn(round, cur[static_cast<std::size_t>(i)]);
      } catch (...) {
        errs[static_cast<std::size_t>(i)] = std::current_exception();
      }
    }
    for (std::size_t i = 0; i < errs.size(); ++i)
      if (errs[i]) {  // the lowest gid's, whatever the threads
        failed = own = true;
        std::string why = "an exception";
        try {
          std::rethrow_exception(errs[i]);
        } catch (const Exception& e) {
          kind = e.kind();
          why = e.what();
        } catch (const std::exception& e) {
          kind = ErrorKind::value;
          why = e.what();
        } catch (...) {
        }
        text = std::string(what) + ", round " + std::to_string(round) + ": the callback of block " +
               std::to_string(cur[i].gid) + " on rank " + std::to_string(me) + " threw: " + why;
        return;
      }
  }

  /// Moves what cur's blocks sent into next's in-boxes: chunks between blocks of this rank as
  /// buffers, to other ranks in one message per rank (large chunks in messages of their own).
  void exchange(std::vector<Slot>& cur, std::vector<Slot>& next) {
    auto inbox = [&](int from, int to, const char* src) -> LinkBox& {
      auto it = std::lower_bound(next.begin(), next.end(), to,
                                 [](const Slot& s, int g) { return s.gid < g; });
      LinkBox* box = it != next.end() && it->gid == to ? it->inbox.find(from) : nullptr;
      if (!box)
        throw CommError(std::string(what) + ": a message from block " + std::to_string(from) +
                        " to block " + std::to_string(to) + " (" + src +
                        ") that no in-link of the next round expects");
      return *box;
    };
    // Each rank that holds an out-link target gets one message (empty links included), so that
    // a receiver knows whom to expect from its in-links alone.
    std::vector<int> dests, sources;
    for (const Slot& s : cur)
      for (int t : s.out)
        if (int r = owners.rank(t); r != me) dests.push_back(r);
    for (const Slot& s : next)
      for (int f : s.in)
        if (int r = owners.rank(f); r != me) sources.push_back(r);
    for (auto* v : {&dests, &sources}) {
      std::sort(v->begin(), v->end());
      v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    std::vector<ByteBuffer> head(dests.size());
    std::vector<std::vector<Bytes>> large(dests.size());
    for (ByteBuffer& b : head) {
      const std::uint8_t st = failed ? kFailed : kOk;
      b.append(&st, 1);
      if (failed) {
        const auto k = static_cast<std::uint8_t>(kind);
        const auto n = static_cast<std::uint32_t>(text.size());
        b.append(&k, 1);
        b.append(&n, sizeof n);
        b.append(text.data(), text.size());
      }
    }
    auto destIndex = [&](int r) {
      return static_cast<std::size_t>(std::lower_bound(dests.begin(), dests.end(), r) -
                                      dests.begin());
    };
    if (!failed)
      for (Slot& s : cur)
        s.outbox.forEach([&](int to, LinkBox& box) {
          const int r = owners.rank(to);
          for (Chunk& c : box.chunks) {
            if (c.messages == 0) continue;
            if (r == me) {
              ++counts.localLinks;
              inbox(s.gid, to, "on this rank").add(std::move(c));
              continue;
            }
            ++counts.remoteLinks;
            const std::size_t d = destIndex(r);
            if (c.lent && c.lentBytes + 16 <= kInlineChunk) {  // small: framed, in the message
              const ByteBuffer framed = frame_lent(c, {});
              const ChunkHeader h{s.gid, to, c.from, c.to, 1, kInline, framed.size(), 0};
              head[d].append(&h, sizeof h);
              head[d].append(framed.data(), framed.size());
            } else if (c.lent) {  // sent from where the sender keeps it
              const ChunkHeader h{s.gid, to, c.from, c.to, 1, kLent, c.lentBytes, c.count};
              head[d].append(&h, sizeof h);
              large[d].push_back({c.lent, c.lentBytes});
            } else {
              const bool in = c.bytes.size() <= kInlineChunk;
              const ChunkHeader h{s.gid,          to, c.from, c.to, c.messages, in ? kInline : kOwn,
                                  c.bytes.size(), 0};
              head[d].append(&h, sizeof h);
              if (in)
                head[d].append(c.bytes.data(), c.bytes.size());
              else
                large[d].push_back({c.bytes.data(), c.bytes.size()});  // cur outlives the sends
            }
          }
        });
    std::vector<Request> reqs;
    for (std::size_t i = 0; i < dests.size(); ++i) {
      reqs.push_back(comm.isend(dests[i], kTag, {head[i].data(), head[i].size()}));
      for (Bytes b : large[i]) reqs.push_back(comm.isend(dests[i], kTag, b));
      counts.rankMessages += 1 + large[i].size();
    }
    // Receive every source's message, post the receives of its large chunks straight into their
    // buffers, then deliver in source order (each box hears from one block, so the order of its
    // chunks is its sender's).
    struct Arrived {
      ChunkHeader h;
      Chunk c;
    };
    std::vector<Arrived> arrived;
    std::exception_ptr bad;  // a corrupted message: finish the round's traffic first
    for (int r : sources) {
      ByteBuffer m = comm.recv(r, kTag);
      try {
        Reader rd(m);
        const auto st = rd.get<std::uint8_t>();
        if (st == kFailed) {
          const auto k = rd.get<std::uint8_t>();
          const auto n = rd.get<std::uint32_t>();
          const char* t = rd.take(n);
          if (!failed) {
            failed = true;
            kind = static_cast<ErrorKind>(k);
            text.assign(t, n);
          }
          continue;
        }
        if (st != kOk)
          throw CommError(std::string(what) + ": corrupted message from rank " + std::to_string(r));
        while (rd.left()) {
          Arrived a;
          std::memcpy(&a.h, rd.take(sizeof a.h), sizeof a.h);
          if (a.h.boxFrom < 0 || a.h.boxFrom >= owners.nblocks() || owners.rank(a.h.boxFrom) != r)
            throw CommError(std::string(what) + ": corrupted message from rank " +
                            std::to_string(r) + " (block " + std::to_string(a.h.boxFrom) +
                            " is not one of its blocks)");
          a.c.from = a.h.from;
          a.c.to = a.h.to;
          a.c.messages = a.h.messages;
          if (a.h.how == kInline) {
            a.c.bytes.append(rd.take(a.h.bytes), a.h.bytes);
          } else if (a.h.how == kOwn) {
            a.c.bytes = pool.take(a.h.bytes);
            a.c.bytes.resize(a.h.bytes);
            reqs.push_back(comm.irecv(r, kTag, a.c.bytes.data(), a.c.bytes.size()));
          } else if (a.h.how == kLent) {  // frame it here: [length][count][values][padding]
            const std::uint64_t len = sizeof(std::uint64_t) + a.h.bytes;
            a.c.bytes = pool.take(padded(2 * sizeof len + a.h.bytes));
            a.c.bytes.resize(padded(2 * sizeof len + a.h.bytes));
            char* p = a.c.bytes.data();
            std::memcpy(p, &len, sizeof len);
            std::memcpy(p + sizeof len, &a.h.count, sizeof a.h.count);
            std::memset(p + 2 * sizeof len + a.h.bytes, 0,
                        a.c.bytes.size() - 2 * sizeof len - a.h.bytes);
            reqs.push_back(comm.irecv(r, kTag, p + 2 * sizeof len, a.h.bytes));
          } else {
            throw CommError(std::string(what) + ": corrupted message from rank " +
                            std::to_string(r));
          }
          arrived.push_back(std::move(a));  // a ByteBuffer's storage does not move with it
        }
      } catch (...) {
        if (!bad) bad = std::current_exception();
      }
    }
    for (Request& q : reqs) comm.wait(q);
    if (bad) std::rethrow_exception(bad);
    if (!failed)
      for (Arrived& a : arrived)
        inbox(a.h.boxFrom, a.h.boxTo, "from another rank").add(std::move(a.c));
  }

  /// Rounds 0..last; every rank agrees at the end whether one failed.
  void run(int last, const std::function<bool(int, int)>& active, const LinksFn& links,
           const RoundFn& fn) {
    counts = {};
    std::vector<Slot> cur = slots(0, last, active, links);
    for (int round = 0;; ++round) {
      callbacks(round, cur, fn);
      ++counts.rounds;
      if (round == last) break;
      std::vector<Slot> next = slots(round + 1, last, active, links);
      exchange(cur, next);
      for (Slot& s : cur) {
        pool.give(s.inbox);
        pool.give(s.outbox);
      }
      cur = std::move(next);  // the slots stay where they are: their links' spans hold
    }
    const int code = own ? P - me : 0;  // the lowest rank whose own callback threw
    const int worst = P > 1 ? allreduce(comm, code, ops::max{}) : code;
    if (!worst) return;
    const int root = P - worst;
    std::string t = text;
    auto k = static_cast<std::uint8_t>(kind);
    if (P > 1) {
      broadcast(comm, t, root);
      broadcast(comm, k, root);
    }
    throw_error(static_cast<ErrorKind>(k), t);
  }
};

}  // namespace detail

// ---- ReduceProxy ----

detail::LinkBox& ReduceProxy::outBox(int to, const char* op) {
  detail::LinkBox* b = out_->find(to);
  if (!b)
    throw IndexError(std::string("ReduceProxy::") + op + ": block " + std::to_string(gid_) +
                         " in round " + std::to_string(round_) + " sends to gid " +
                         std::to_string(to) + ", which is not in its out-link " +
                         detail::link_text(out_->link()),
                     static_cast<std::uint64_t>(to), static_cast<std::uint64_t>(nblocks_));
  return *b;
}

detail::Chunk& ReduceProxy::outChunk(int to, std::size_t hint) {
  detail::LinkBox* b = &outBox(to, "enqueue");
  if (b->chunks.empty() || b->chunks.back().lent)
    b->chunks.push_back({gid_, to, 0, pool_ ? pool_->take(hint) : ByteBuffer(), nullptr, 0, 0});
  return b->chunks.back();
}

void ReduceProxy::lend(int to, const char* data, std::size_t bytes, std::uint64_t count) {
  detail::LinkBox* b = &outBox(to, "enqueueView");
  b->chunks.push_back({gid_, to, 1, {}, data, bytes, count});
  ++b->messages;
}

void ReduceProxy::endMessage(int to, detail::Chunk& c, std::size_t at) {
  const std::uint64_t n = c.bytes.size() - at - sizeof n;
  std::memcpy(c.bytes.data() + at, &n, sizeof n);
  const std::size_t pad = detail::padded(c.bytes.size()) - c.bytes.size();
  if (pad) std::memset(c.bytes.grow(pad), 0, pad);
  ++c.messages;
  ++out_->find(to)->messages;
}

void ReduceProxy::enqueueBytes(int to, Bytes bytes) {
  detail::Chunk& c = outChunk(to, bytes.size() + 16);
  const std::size_t at = c.bytes.size();
  c.bytes.grow(sizeof(std::uint64_t));
  c.bytes.append(bytes.data(), bytes.size());
  endMessage(to, c, at);
}

detail::Message ReduceProxy::take(int from) {
  detail::LinkBox* b = in_->find(from);
  if (!b)
    throw IndexError("ReduceProxy::dequeue: block " + std::to_string(gid_) + " in round " +
                         std::to_string(round_) + " reads from gid " + std::to_string(from) +
                         ", which is not in its in-link " + detail::link_text(in_->link()),
                     static_cast<std::uint64_t>(from), static_cast<std::uint64_t>(nblocks_));
  if (b->taken == b->messages)
    throw StateError("ReduceProxy::dequeue: block " + std::to_string(gid_) + " in round " +
                     std::to_string(round_) + " reads message " + std::to_string(b->taken + 1) +
                     " from block " + std::to_string(from) + ", which sent " +
                     std::to_string(b->messages));
  // Past the chunks read to their end (a lent chunk's one message counts as its whole size).
  auto done = [&](const detail::Chunk& c) {
    return c.lent ? b->read > 0 : b->read >= c.bytes.size();
  };
  while (b->chunk < b->chunks.size() && done(b->chunks[b->chunk])) {
    ++b->chunk;
    b->read = 0;
  }
  if (b->chunk == b->chunks.size())
    throw CommError("ReduceProxy::dequeue: the messages from block " + std::to_string(from) +
                    " end early (corrupted)");
  const detail::Chunk& c = b->chunks[b->chunk];
  ++b->taken;
  if (c.lent) {
    b->read = 1;
    return {{c.lent, c.lentBytes}, c.lent, c.count};
  }
  Reader r(c.bytes.data() + b->read, c.bytes.size() - b->read);
  const auto n = r.get<std::uint64_t>();
  const char* p = r.take(n);
  b->read += sizeof n + detail::padded(n);
  return {{p, n}, nullptr, 0};
}

std::size_t ReduceProxy::incoming(int from) const {
  detail::LinkBox* b = in_->find(from);
  return b ? b->messages - b->taken : 0;
}

void ReduceProxy::typeMismatch(int from, std::size_t bytes, const char* type) const {
  throw TypeError("ReduceProxy::dequeue: block " + std::to_string(gid_) + " in round " +
                      std::to_string(round_) + " reads a " + type + " from block " +
                      std::to_string(from) + ", whose message of " + std::to_string(bytes) +
                      " bytes is not one (enqueue and dequeue must use one type)",
                  type, std::to_string(bytes) + " bytes");
}

// ---- BlockRounds ----

BlockRounds::BlockRounds(const Comm& c)
    : comm_(c.valid() ? c.dup() : Comm()), pool_(std::make_unique<detail::BufferPool>()) {}

int BlockRounds::ranks() const {
  return comm_.valid() ? comm_.size() : 1;
}
BlockRounds::~BlockRounds() = default;

namespace {
void check_owners(int P, const BlockOwners& o, int nblocks, const char* what) {
  if (o.ranks() != P)
    throw ValueError(std::string(what) + ": the owners place blocks on " +
                     std::to_string(o.ranks()) + " ranks, the communicator has " +
                     std::to_string(P));
  if (nblocks >= 0 && o.nblocks() != nblocks)
    throw ValueError(std::string(what) + ": the partners' grid has " + std::to_string(nblocks) +
                     " blocks, the owners " + std::to_string(o.nblocks()));
}
unsigned at_least_one(unsigned t) {
  return t ? t : 1;
}
}  // namespace

void BlockRounds::reduce(const BlockOwners& owners, const Partners& partners, const BlockFn& fn,
                         unsigned threads) {
  check_owners(ranks(), owners, partners.nblocks(), "BlockRounds::reduce");
  if (!fn) throw ValueError("BlockRounds::reduce: an empty callback");
  const std::string what = std::string("block rounds (") + pattern_name(partners.pattern()) + ")";
  detail::BlockRun run(comm_, owners, what.c_str(), at_least_one(threads), counts_, *pool_);
  run.run(
      partners.lastRound(), [&](int r, int g) { return partners.active(r, g); },
      [&](int r, int g, std::vector<int>& in, std::vector<int>& out) {
        in = partners.in_link(r, g);
        out = partners.out_link(r, g);
      },
      [&](int round, detail::Slot& s) {
        ReduceProxy p = run.proxy(s.gid, round, owners.nblocks(), s.inbox, s.outbox);
        fn(s.gid, p);
      });
}

void BlockRounds::all_to_all(const BlockOwners& owners, const BlockFn& fn, int k,
                             unsigned threads) {
  check_owners(ranks(), owners, -1, "BlockRounds::all_to_all");
  if (!fn) throw ValueError("BlockRounds::all_to_all: an empty callback");
  const int n = owners.nblocks();
  if (n == 0) {
    counts_ = {};
    return;
  }
  const Partners swap(Pattern::swap, BlockGrid::line(n), k, false);
  const int R = swap.lastRound();
  std::vector<int> all(static_cast<std::size_t>(n));
  std::iota(all.begin(), all.end(), 0);
  detail::LinkBoxes none;
  none.reset({});

  detail::BlockRun run(comm_, owners, "block rounds (all_to_all)", at_least_one(threads), counts_,
                       *pool_);
  // A chunk of the user's round (its messages from one block to another) goes to the member of
  // this round's group whose range holds its destination: the member whose coordinate has the
  // destination's digit in this round (distance halving: step = what is left to split). Chunks
  // move whole, never opened or copied on the way.
  auto route = [&](int round, detail::Slot& s, detail::Chunk&& c) {
    const auto& kv = swap.factored()[static_cast<std::size_t>(round)];
    const int j = c.to / swap.step(round) % kv.size;
    s.outbox.find(s.out[static_cast<std::size_t>(j)])->add(std::move(c));
  };
  auto arrived = [](detail::Slot& s, const auto& f) {
    for (int from : s.in)
      for (detail::Chunk& c : s.inbox.find(from)->chunks) f(std::move(c));
  };
  // The user's last call: every gid in the in-link, each chunk in the box of its sender.
  auto deliverAll = [&](int gid, detail::LinkBoxes& inbox) {
    detail::LinkBoxes out;
    out.reset({});
    ReduceProxy p = run.proxy(gid, 1, n, inbox, out);
    fn(gid, p);
    run.pool.give(inbox);
  };

  run.run(
      R, [](int, int) { return true; },
      [&](int r, int g, std::vector<int>& in, std::vector<int>& out) {
        in = swap.in_link(r, g);
        out = swap.out_link(r, g);
      },
      [&](int round, detail::Slot& s) {
        if (round == 0) {
          detail::LinkBoxes userOut;
          userOut.reset(all);
          ReduceProxy p = run.proxy(s.gid, 0, n, none, userOut);
          fn(s.gid, p);
          if (R == 0) {  // one block: its messages to itself are its last call's in-link
            detail::LinkBoxes inbox;
            inbox.reset(all);
            userOut.forEach([&](int, detail::LinkBox& b) {
              for (detail::Chunk& c : b.chunks)
                if (c.messages) inbox.find(c.from)->add(std::move(c));
            });
            deliverAll(s.gid, inbox);
            return;
          }
          for (int to : s.out) s.outbox.find(to);  // every member gets a (maybe empty) box
          userOut.forEach([&](int, detail::LinkBox& b) {
            for (detail::Chunk& c : b.chunks)
              if (c.messages) route(0, s, std::move(c));
          });
          return;
        }
        if (round < R) {
          arrived(s, [&](detail::Chunk&& c) { route(round, s, std::move(c)); });
          return;
        }
        detail::LinkBoxes inbox;
        inbox.reset(all);
        arrived(s, [&](detail::Chunk&& c) {
          if (c.to != s.gid)
            throw InternalError("all_to_all: a chunk for block " + std::to_string(c.to) +
                                " reached block " + std::to_string(s.gid));
          inbox.find(c.from)->add(std::move(c));
        });
        deliverAll(s.gid, inbox);
      });
}

}  // namespace antler::comm
