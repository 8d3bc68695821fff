#pragma once
/// The per-thread outgoing message queue and its byte format.
///
/// A queue is a sequence of batches. A batch holds consecutive sends from one (source Element,
/// SrcFinfo) pair: a header {src id, bind index, record count, record bytes, first, dense}, then
/// the records. In a dense batch a record is the packed arguments alone, from data indices first,
/// first + 1, ... (field 0). Otherwise a record is {data index, field index, packed arguments};
/// when the arguments are all trivially copyable every record has the same size (`recBytes`),
/// else recBytes is 0 and each record carries a u32 argument length after the indices. The same
/// bytes are what crosses nodes.
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
class Outbox {
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
          nextDense_ = kNoIndex;
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
    } else {
      BatchHeader* h = batch_ != kNone ? header() : nullptr;
      nextDense_ = kNoIndex;
      if (h && h->src == src && h->bind == bind && !unbatched_) {
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
  /// open dense batch, appends it and returns true. (A dense batch is only opened for a port
  /// that has connections, so callers may try this before checking for any.)
  template <class... A>
  bool extendDense(std::uint32_t src, std::uint32_t bind, Index d, Index f, const A&... a) {
    if constexpr ((std::is_trivially_copyable_v<A> && ...)) {
      if (d != nextDense_ || f != 0 || src != denseSrc_ || bind != denseBind_) return false;
      char* p = buf_.grow(padded((0 + ... + sizeof(A))));
      ++header()->count;
      ++nextDense_;
      ((std::memcpy(p, &a, sizeof(A)), p += sizeof(A)), ...);
      return true;
    } else {
      return false;
    }
  }
  /// Ends the current segment (and batch): later sends start a new one.
  void mark() {
    segments_.push_back(buf_.size());
    batch_ = kNone;
    nextDense_ = kNoIndex;
  }
  /// Segment boundaries: segment j is [starts()[j], starts()[j+1]) with starts()[0] == 0.
  const std::vector<std::size_t>& segmentEnds() const { return segments_; }
  const ByteBuffer& bytes() const { return buf_; }
  bool empty() const { return buf_.empty(); }
  void clear() {
    buf_.clear();
    segments_.clear();
    batch_ = kNone;
    nextDense_ = kNoIndex;
  }
  /// Appends another queue's bytes (both must be unbatched).
  void appendRaw(const Outbox& o) {
    buf_.append(o.buf_.data(), o.buf_.size());
    batch_ = kNone;
    nextDense_ = kNoIndex;
  }
  /// Every send becomes its own batch (used for queues that are sorted before delivery).
  void setUnbatched(bool u) { unbatched_ = u; }

 private:
  static constexpr std::size_t kNone = ~std::size_t{0};
  static constexpr Index kNoIndex = ~Index{0};
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
    nextDense_ = dense ? d + 1 : kNoIndex;
    denseSrc_ = src;
    denseBind_ = bind;
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
  ByteBuffer buf_;
  std::vector<std::size_t> segments_;
  std::size_t batch_ = kNone;
  // The open dense batch: the next send that extends it comes from (denseSrc_, denseBind_,
  // nextDense_, field 0); kNoIndex when no dense batch is open.
  Index nextDense_ = kNoIndex;
  std::uint32_t denseSrc_ = 0, denseBind_ = 0;
  bool unbatched_ = false;
};

}  // namespace antler
