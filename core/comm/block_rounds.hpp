#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// BlockRounds: DIY's block reductions (merge, swap, broadcast, all-reduce, all-to-all) over
/// blocks spread across the ranks of a Comm. A block is anything the caller numbers 0..n-1 (gid);
/// BlockOwners says which rank holds which gids (contiguous ranges, as antler splits an
/// Element's entries). In each round of a Partners pattern (core/comm/partners.hpp) the callback
/// runs once for every block of this rank that is active in that round:
///
///   comm::BlockRounds rounds(c);
///   rounds.reduce(owners, comm::Partners::merge(comm::BlockGrid::line(n), 2),
///                 [&](int gid, comm::ReduceProxy& rp) {
///                   for (int from : rp.in_link()) hist[gid] += rp.dequeue<Histogram>(from);
///                   for (int to : rp.out_link()) rp.enqueue(to, hist[gid]);
///                 });
///
/// Messages. enqueue(to, value) in round r reaches `to` in round r + 1, where dequeue(from, value)
/// takes them in the order sent (several per link). `to` must be in this round's out-link and
/// `from` in this round's in-link. Values travel through Codec (memcpy for trivially copyable
/// types, Boost.Serialization otherwise); each message keeps its length, so a dequeue of another
/// type, or of more messages than were sent, is an error naming both blocks. dequeueView reads a
/// vector of plain values where it arrived, without a copy. Messages a block does not dequeue in
/// its round are dropped, as in DIY.
///
/// Where the bytes go. Between two blocks of one rank a link's messages move as a buffer, never
/// through the Comm. Between ranks, each round sends one message from each rank to each rank that
/// holds one of its blocks' out-link targets (every link to that rank described in it, small ones
/// carried in it; a link of more than 8 KiB follows as its own message, sent from and received
/// into the link's buffer without a copy). A rank expects exactly the ranks its in-links name, so
/// nothing is negotiated. Nothing depends on the order
/// in which messages arrive or threads finish: a round's result is the same for any split of
/// the blocks over ranks and threads.
///
/// Threads. A rank's active blocks in a round are split over `threads` OpenMP threads; a callback
/// may touch its own block and its proxy, nothing shared without its own synchronisation.
///
/// Failure. An exception in a callback, on any rank, becomes the same antler error on every rank
/// once the rounds end: the Error kind it had (ValueError for any other exception) and a text
/// naming the block, the round and the rank, then the exception's own. The rounds still run to
/// the end, without callbacks, so no rank waits on one that stopped; what callbacks did to their
/// blocks before the failure stays done.
///
/// all_to_all(owners, fn, k): written as one round (fn runs at round 0 with every gid as its
/// out-link, then at round 1 with every gid as its in-link), run as the k-ary swap rounds of DIY
/// (distance halving over a line of n blocks): the intermediate rounds forward the messages
/// without calling fn. Each block sends k messages a round, not n.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <vector>

#include "core/buffer.hpp"
#include "core/comm/comm.hpp"
#include "core/comm/partners.hpp"

namespace antler::comm {

using Bytes = std::span<const char>;

/// Which rank holds which gids: rank r holds [first(r), first(r + 1)).
class BlockOwners {
 public:
  /// n blocks over P ranks the way antler splits an Element's entries (core/layout.hpp: the first
  /// n % P ranks hold one more).
  static BlockOwners blocked(int nblocks, int ranks);
  /// Explicit ranges: firsts has P + 1 entries, from 0 up to the block count, non-decreasing.
  explicit BlockOwners(std::vector<int> firsts);
  int nblocks() const { return firsts_.back(); }
  int ranks() const { return static_cast<int>(firsts_.size()) - 1; }
  int first(int rank) const { return firsts_[static_cast<std::size_t>(rank)]; }
  int end(int rank) const { return firsts_[static_cast<std::size_t>(rank) + 1]; }
  /// The rank holding gid.
  int rank(int gid) const;

 private:
  std::vector<int> firsts_;
};

namespace detail {

/// Whole messages, each [u64 length][payload][zeros to a multiple of 8 bytes] (so a payload
/// starts 8-byte aligned), enqueued by block `from` for block `to`. A chunk travels whole: moved
/// between blocks of one rank, sent as it is between ranks (all_to_all forwards chunks through
/// other blocks without opening them).
struct Chunk {
  int from = 0, to = 0;
  std::uint32_t messages = 0;
  ByteBuffer bytes;
  // Or one message of `count` plain values lent by the sender (enqueueView), not copied.
  const char* lent = nullptr;
  std::uint64_t lentBytes = 0, count = 0;
};

/// One message as dequeue finds it: Codec bytes, or values lent by the sender.
struct Message {
  Bytes bytes;
  const char* lent = nullptr;
  std::uint64_t count = 0;
};

/// One link's messages: its chunks, read front to back.
struct LinkBox {
  std::vector<Chunk> chunks;
  std::size_t chunk = 0, read = 0;  // where the next dequeue reads
  std::uint32_t messages = 0, taken = 0;
  /// Appends a whole chunk.
  void add(Chunk&& c) {
    messages += c.messages;
    chunks.push_back(std::move(c));
  }
};

/// The boxes of one block's in- or out-link, one per gid of the link, made on first use.
class LinkBoxes {
 public:
  void reset(std::span<const int> link);
  std::span<const int> link() const { return link_; }
  /// The box of gid, or nullptr if gid is not in the link.
  LinkBox* find(int gid);
  /// Each box that has been used, with its gid, in gid order.
  template <class F>
  void forEach(F&& f) {
    if (!sparse_.empty() || dense_.empty()) {
      std::vector<int> gids;
      gids.reserve(sparse_.size());
      for (auto& kv : sparse_) gids.push_back(kv.first);
      std::sort(gids.begin(), gids.end());
      for (int g : gids) f(g, sparse_.at(g));
    }
    for (std::size_t i = 0; i < dense_.size(); ++i)
      if (used_[i]) f(link_[i], dense_[i]);
  }

 private:
  static constexpr std::size_t kDense = 64;  // longer links (all_to_all's) keep a map
  std::span<const int> link_;
  std::vector<LinkBox> dense_;
  std::vector<char> used_;
  std::unordered_map<int, LinkBox> sparse_;
};

struct BlockRun;
struct BufferPool;

/// A guess at the bytes a value will take (exact for vectors of plain values), so that a link's
/// first message finds a buffer big enough.
template <class T>
std::size_t size_hint(const T& v) {
  if constexpr (std::is_trivially_copyable_v<T>)
    return sizeof(T) + 16;
  else if constexpr (antler::detail::is_vector<T>::value &&
                     std::is_trivially_copyable_v<typename T::value_type>)
    return v.size() * sizeof(typename T::value_type) + 24;
  else
    return 64;
}

}  // namespace detail

/// What a block's callback sees in one round: its links, and the messages along them.
class ReduceProxy {
 public:
  int gid() const { return gid_; }
  /// The round (0 first).
  int round() const { return round_; }
  int nblocks() const { return nblocks_; }
  /// The blocks this block receives from this round, in group order (itself included where it
  /// is in the group).
  std::span<const int> in_link() const { return in_->link(); }
  /// The blocks this block sends to this round, in group order.
  std::span<const int> out_link() const { return out_->link(); }

  /// Sends v to block `to` (in the out-link), received there next round.
  template <class T>
  void enqueue(int to, const T& v) {
    detail::Chunk& c = outChunk(to, detail::size_hint(v));
    const std::size_t at = c.bytes.size();
    c.bytes.grow(sizeof(std::uint64_t));
    Writer w(c.bytes);
    Codec<T>::write(w, v);
    endMessage(to, c, at);
  }
  /// Sends n values of a trivially copyable E (read back as a std::vector<E> or a view).
  template <class E>
  void enqueue(int to, std::span<const E> v) {
    static_assert(std::is_trivially_copyable_v<E>);
    detail::Chunk& c = outChunk(to, v.size_bytes() + 24);
    const std::size_t at = c.bytes.size();
    const std::uint64_t n = v.size();
    c.bytes.append(&n, sizeof n);  // the length, written at the end
    c.bytes.append(&n, sizeof n);
    c.bytes.append(v.data(), v.size_bytes());
    endMessage(to, c, at);
  }
  /// Sends v's values without copying them: they must stay alive and unchanged until the next
  /// round has ended (all_to_all: until it returns). Between blocks of one rank the receiver
  /// reads them where they are; to another rank they are sent from where they are. Read back as
  /// a std::vector<E> or with dequeueView.
  template <class E>
  void enqueueView(int to, std::span<const E> v) {
    static_assert(std::is_trivially_copyable_v<E>);
    lend(to, reinterpret_cast<const char*>(v.data()), v.size_bytes(), v.size());
  }
  /// Takes the next message from block `from` (in the in-link) into v.
  template <class T>
  void dequeue(int from, T& v) {
    const detail::Message t = take(from);
    if (t.lent) {
      if constexpr (antler::detail::is_vector<T>::value) {
        using E = typename T::value_type;
        if constexpr (std::is_trivially_copyable_v<E>) {
          if (t.bytes.size() == t.count * sizeof(E)) {
            v.resize(t.count);
            if (t.count) std::memcpy(static_cast<void*>(v.data()), t.lent, t.bytes.size());
            return;
          }
        }
      }
      typeMismatch(from, t.bytes.size(), typeid(T).name());
    }
    const Bytes m = t.bytes;
    Reader r(m.data(), m.size());
    try {
      v = Codec<T>::read(r);
    } catch (const CommError&) {
      typeMismatch(from, m.size(), typeid(T).name());
    }
    if (r.left()) typeMismatch(from, m.size(), typeid(T).name());
  }
  template <class T>
  T dequeue(int from) {
    T v{};
    dequeue(from, v);
    return v;
  }
  /// Takes the next message from `from`, a std::vector<E> or span of E sent, as a view of its
  /// values where they arrived (no copy; valid until the round ends).
  template <class E>
  std::span<const E> dequeueView(int from) {
    static_assert(std::is_trivially_copyable_v<E> && alignof(E) <= 8);
    const detail::Message t = take(from);
    if (t.lent) {
      if (t.bytes.size() != t.count * sizeof(E))
        typeMismatch(from, t.bytes.size(), typeid(std::vector<E>).name());
      return {reinterpret_cast<const E*>(t.lent), static_cast<std::size_t>(t.count)};
    }
    const Bytes m = t.bytes;
    std::uint64_t n = 0;
    if (m.size() >= sizeof n) std::memcpy(&n, m.data(), sizeof n);
    if (m.size() < sizeof n || (m.size() - sizeof n) / sizeof(E) != n ||
        (m.size() - sizeof n) % sizeof(E))
      typeMismatch(from, m.size(), typeid(std::vector<E>).name());
    return {reinterpret_cast<const E*>(m.data() + sizeof n), static_cast<std::size_t>(n)};
  }
  /// Messages from `from` not dequeued yet (0 for a gid outside the in-link).
  std::size_t incoming(int from) const;
  /// Raw bytes: one message.
  void enqueueBytes(int to, Bytes bytes);
  /// Raw bytes: the next message's (valid until the round ends; a lent message's: its values).
  Bytes dequeueBytes(int from) { return take(from).bytes; }

 private:
  friend struct detail::BlockRun;
  detail::LinkBox& outBox(int to, const char* op);
  detail::Chunk& outChunk(int to, std::size_t hint);
  void endMessage(int to, detail::Chunk& c, std::size_t at);
  detail::Message take(int from);
  void lend(int to, const char* data, std::size_t bytes, std::uint64_t count);
  [[noreturn]] void typeMismatch(int from, std::size_t bytes, const char* type) const;

  int gid_ = 0, round_ = 0, nblocks_ = 0;
  detail::LinkBoxes* in_ = nullptr;
  detail::LinkBoxes* out_ = nullptr;
  detail::BufferPool* pool_ = nullptr;
};

/// One block's callback: the block's gid and its proxy for this round.
using BlockFn = std::function<void(int gid, ReduceProxy&)>;

/// Runs block rounds over the ranks of a communicator (its own duplicate).
class BlockRounds {
 public:
  /// Collective over c: duplicates it (an invalid Comm: one rank, no messages).
  explicit BlockRounds(const Comm& c);
  ~BlockRounds();
  BlockRounds(const BlockRounds&) = delete;
  BlockRounds& operator=(const BlockRounds&) = delete;
  Comm& comm() { return comm_; }
  /// The communicator's ranks (1 without one).
  int ranks() const;

  /// Runs the rounds 0..partners.lastRound() of the pattern: fn for each of this rank's blocks
  /// active in each round. Collective (every rank, the same owners and partners).
  void reduce(const BlockOwners& owners, const Partners& partners, const BlockFn& fn,
              unsigned threads = 1);
  /// DIY's all_to_all: fn at round 0 (out-link: every gid) and at round 1 (in-link: every gid),
  /// the messages routed through k-ary swap rounds between. Collective.
  void all_to_all(const BlockOwners& owners, const BlockFn& fn, int k = 2, unsigned threads = 1);

  /// Rank messages and rounds of the last call on this rank (Local's exact counts are in
  /// comm().stats()).
  struct Counts {
    std::uint64_t rounds = 0, rankMessages = 0, localLinks = 0, remoteLinks = 0;
  };
  const Counts& lastCounts() const { return counts_; }

 private:
  Comm comm_;
  Counts counts_;
  std::unique_ptr<detail::BufferPool> pool_;  // buffers of finished rounds, for the next ones
};

}  // namespace antler::comm
#pragma GCC visibility pop
