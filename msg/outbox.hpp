#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// The per-thread outgoing message queue and its byte format.
///
/// A queue is a sequence of batches. A batch holds consecutive sends from one (source Element,
/// SrcFinfo) pair: a header {src id, bind index, record count, record bytes, first, dense}, then
/// the records. In a dense batch a record is the packed arguments alone, from data indices first,
/// first + 1, ... (field 0). Otherwise a record is {data index, field index, packed arguments};
/// when the arguments are all trivially copyable every record has the same size (`recBytes`),
/// else recBytes is 0 and each record carries a u32 argument length after the indices. The same
/// bytes are what crosses nodes.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/buffer.hpp"
#include "core/fwd.hpp"

namespace antler {

/// Header of a batch of records.
struct BatchHeader {
  std::uint32_t src;       ///< source Element id
  std::uint32_t bind;      ///< SrcFinfo bind index
  std::uint32_t count;     ///< records in the batch
  std::uint32_t recBytes;  ///< bytes per record, or 0 if records are variable-sized
  std::uint32_t first;     ///< dense batches: data index of the first record
  std::uint32_t
      dense;  ///< 1: records are the arguments only, from data indices first, first+1, ...
};

/// Records and headers start at multiples of 4 bytes, so headers can be read in place.
constexpr std::uint32_t padded(std::size_t n) {
  return static_cast<std::uint32_t>((n + 3) & ~std::size_t{3});
}

/// One thread's queue of sends, split into segments (one per Element processed in a tick).
///
/// Sends from consecutive data indices of one port (what a process loop over a slice produces)
/// become a dense batch: the header holds the first index and each record is just the packed
/// arguments. Other sends carry their indices in each record.
///
/// The send cursor. While a dense batch is open, its end is not kept in the buffer: the cursor
/// holds the write pointer (w_), the end of the room reserved for it (end_) and, instead of the
/// next expected data index, the address record 0 of data index 0 would have (origin_), so that a
/// send that extends the batch is a compare, a copy and one pointer store, with nothing written to
/// the header. The buffer's size and the header's record count are brought up to date (sync) when
/// the batch closes: at mark(), before any other kind of append, and in reserveDense. Readers of
/// the bytes (the post office, after the clock marked every segment) never see an open cursor.
///
/// Aligned to a cache line: each clock thread writes its own outbox's cursor at every send, and
/// the outboxes lie side by side in the post office's vector.
class alignas(64) Outbox {
 public:
  /// Appends a send of (a...) from entry (d, f) of Element `src` through port `bind`.
  template <class... A>
  void append(std::uint32_t src, std::uint32_t bind, Index d, Index f, const A&... a) {
    constexpr bool fixed = (std::is_trivially_copyable_v<A> && ...);
    if constexpr (fixed) {
      constexpr std::size_t argBytes = (0 + ... + sizeof(A));
      constexpr std::uint32_t denseRec = padded(argBytes);
      constexpr std::uint32_t indexedRec = padded(2 * sizeof(Index) + argBytes);
      char* p;
      if (extendDense(src, bind, d, f, a...)) return;
      closeDense();
      BatchHeader* h = batch_ != kNone ? header() : nullptr;
      if (h && h->src == src && h->bind == bind && !unbatched_) {
        if (h->dense && f == 0 && h->first + h->count == d) {
          ++h->count;
          p = buf_.grow(denseRec);
        } else if (!h->dense) {
          ++h->count;
          p = indexed(buf_.grow(indexedRec), d, f);
        } else if (h->count == 1) {
          // A lone dense record followed by a gap: turn the batch into an indexed one.
          undense(h, denseRec);
          h = header();
          ++h->count;
          p = indexed(buf_.grow(indexedRec), d, f);
        } else {
          p = start(src, bind, d, f, denseRec, indexedRec);
        }
      } else {
        p = start(src, bind, d, f, denseRec, indexedRec);
      }
      ((std::memcpy(p, &a, sizeof(A)), p += sizeof(A)), ...);
      (void)p;
      if (header()->dense) openDense(src, bind);
    } else {
      closeDense();
      BatchHeader* h = batch_ != kNone ? header() : nullptr;
      if (h && h->src == src && h->bind == bind && !unbatched_ && !h->dense) {
        ++h->count;
      } else {
        batch_ = buf_.size();
        *reinterpret_cast<BatchHeader*>(buf_.grow(sizeof(BatchHeader))) =
            BatchHeader{src, bind, 1, 0, 0, 0};
      }
      Writer w(buf_);
      w.put(d).put(f);
      const std::size_t lenAt = buf_.size();
      w.put<std::uint32_t>(0);
      (w.put(a), ...);
      const auto len = static_cast<std::uint32_t>(buf_.size() - lenAt - sizeof(std::uint32_t));
      std::memcpy(buf_.data() + lenAt, &len, sizeof len);
      const std::size_t pad = padded(len) - len;
      if (pad) std::memset(buf_.grow(pad), 0, pad);
    }
  }
  /// The hot case, a process loop sending from consecutive objects: if this send continues the
  /// open dense batch and fits the room reserved for it, appends it and returns true. (A dense
  /// batch is only opened for a port that has connections, so callers may try this before
  /// checking for any.)
  template <class... A>
  bool extendDense(std::uint32_t src, std::uint32_t bind, Index d, Index f, const A&... a) {
    if constexpr ((std::is_trivially_copyable_v<A> && ...)) {
      constexpr std::uint32_t rec = padded((0 + ... + sizeof(A)));
      char* const w = w_;
      if (f != 0 || key(src, bind) != denseKey_ ||
          reinterpret_cast<std::uintptr_t>(w) != origin_ + std::uintptr_t{d} * rec ||
          end_ - w < static_cast<std::ptrdiff_t>(rec))
        return false;
      char* q = w;
      ((std::memcpy(q, &a, sizeof(A)), q += sizeof(A)), ...);
      w_ = w + rec;
      return true;
    } else {
      return false;
    }
  }
  /// The bulk send: room for n records of `recBytes` each, from data indices first, first + 1,
  /// ... (field 0) of port (src, bind), in a dense batch (the open one, when it ends right
  /// before `first`: what n single sends would do). Returns where record 0 goes; the caller writes
  /// all n records before anything else is appended, or calls rewind() with how far it got.
  char* reserveDense(std::uint32_t src, std::uint32_t bind, Index first, std::size_t n,
                     std::uint32_t recBytes) {
    const std::size_t bytes = n * recBytes;
    if (denseKey_ == key(src, bind) &&
        reinterpret_cast<std::uintptr_t>(w_) == origin_ + std::uintptr_t{first} * recBytes) {
      sync();
      header()->count += static_cast<std::uint32_t>(n);
      char* p = buf_.grow(bytes);
      openDense(src, bind, /*spare=*/0);
      return p;
    }
    closeDense();
    batch_ = buf_.size();
    buf_.grow(sizeof(BatchHeader) + bytes);
    *header() = BatchHeader{src, bind, static_cast<std::uint32_t>(n), recBytes, first, 1};
    openDense(src, bind, /*spare=*/0);
    return buf_.data() + batch_ + sizeof(BatchHeader);
  }
  /// After reserveDense: only the records before `end` were written (a process function threw);
  /// the batch keeps those.
  void rewind(char* end) {
    w_ = end;
    sync();
  }
  /// Ends the current segment (and batch): later sends start a new one.
  void mark() {
    closeDense();
    segments_.push_back(buf_.size());
    batch_ = kNone;
  }
  /// Segment boundaries: segment j is [starts()[j], starts()[j+1]) with starts()[0] == 0.
  const std::vector<std::size_t>& segmentEnds() const { return segments_; }
  /// The bytes (once the last batch is closed: after mark()).
  const ByteBuffer& bytes() const {
    if (denseKey_ != kNoKey) throw InternalError("Outbox::bytes: read while a batch is open");
    return buf_;
  }
  bool empty() const { return buf_.empty(); }
  void clear() {
    buf_.clear();
    segments_.clear();
    batch_ = kNone;
    denseKey_ = kNoKey;
  }
  /// Appends another queue's bytes (both must be unbatched).
  void appendRaw(const Outbox& o) {
    closeDense();
    buf_.append(o.bytes().data(), o.bytes().size());
    batch_ = kNone;
  }
  /// Every send becomes its own batch (used for queues that are sorted before delivery).
  void setUnbatched(bool u) {
    closeDense();
    unbatched_ = u;
  }

 private:
  static constexpr std::size_t kNone = ~std::size_t{0};
  static constexpr std::uint64_t kNoKey = ~std::uint64_t{0};
  static std::uint64_t key(std::uint32_t src, std::uint32_t bind) {
    return (std::uint64_t{bind} << 32) | src;
  }
  BatchHeader* header() { return reinterpret_cast<BatchHeader*>(buf_.data() + batch_); }
  static char* indexed(char* p, Index d, Index f) {
    std::memcpy(p, &d, sizeof d);
    std::memcpy(p + sizeof d, &f, sizeof f);
    return p + 2 * sizeof(Index);
  }
  /// Starts a batch with one record and returns where its arguments go.
  char* start(std::uint32_t src, std::uint32_t bind, Index d, Index f, std::uint32_t denseRec,
              std::uint32_t indexedRec) {
    batch_ = buf_.size();
    const bool dense = f == 0 && !unbatched_;
    auto* h = reinterpret_cast<BatchHeader*>(buf_.grow(sizeof(BatchHeader)));
    *h = BatchHeader{src, bind, 1, dense ? denseRec : indexedRec, d, dense ? 1u : 0u};
    return dense ? buf_.grow(denseRec) : indexed(buf_.grow(indexedRec), d, f);
  }
  /// Rewrites a one-record dense batch (the last thing in the buffer) as an indexed batch: the
  /// header changes (h may move when the buffer grows) and the record gains its two indices.
  void undense(BatchHeader* h, std::uint32_t denseRec) {
    const Index d = h->first, zero = 0;
    h->dense = 0;
    h->recBytes = 2 * sizeof(Index) + denseRec;
    buf_.grow(2 * sizeof(Index));
    char* rec = buf_.data() + batch_ + sizeof(BatchHeader);
    std::memmove(rec + 2 * sizeof(Index), rec, denseRec);
    std::memcpy(rec, &d, sizeof d);
    std::memcpy(rec + sizeof d, &zero, sizeof zero);
  }
  /// Opens the cursor on the dense batch at batch_ (buffer and header up to date), with room for
  /// at least `spare` more bytes (by default a quarter of the buffer, at least 4 KiB) before a
  /// send takes the slow path again.
  void openDense(std::uint32_t src, std::uint32_t bind, std::size_t spare = kNoSpare) {
    const std::size_t size = buf_.size();
    if (spare == kNoSpare) {
      spare = std::max<std::size_t>(4096, size / 4);
      buf_.grow(spare);   // reserves the room (may move the buffer) ...
      buf_.resize(size);  // ... without using it
    }
    const BatchHeader* h = header();
    denseKey_ = key(src, bind);
    w_ = buf_.data() + size;
    end_ = w_ + spare;
    origin_ = reinterpret_cast<std::uintptr_t>(buf_.data() + batch_ + sizeof(BatchHeader)) -
              std::uintptr_t{h->first} * h->recBytes;
  }
  /// Brings the buffer's size and the open batch's record count up to date (the cursor stays).
  void sync() {
    if (denseKey_ == kNoKey) return;
    buf_.resize(static_cast<std::size_t>(w_ - buf_.data()));
    BatchHeader* h = header();
    h->count = static_cast<std::uint32_t>(
        static_cast<std::size_t>(w_ - (buf_.data() + batch_ + sizeof(BatchHeader))) / h->recBytes);
  }
  void closeDense() {
    sync();
    denseKey_ = kNoKey;
  }
  static constexpr std::size_t kNoSpare = ~std::size_t{0};

  ByteBuffer buf_;
  std::vector<std::size_t> segments_;
  std::size_t batch_ = kNone;
  // The send cursor (see the class comment); denseKey_ == kNoKey when no dense batch is open.
  char* w_ = nullptr;
  char* end_ = nullptr;
  std::uintptr_t origin_ = 0;
  std::uint64_t denseKey_ = kNoKey;
  bool unbatched_ = false;
};

}  // namespace antler
#pragma GCC visibility pop
