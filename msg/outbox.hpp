#pragma once
/// The per-thread outgoing message queue and its byte format.
///
/// A queue is a sequence of batches. A batch holds consecutive sends from one (source Element,
/// SrcFinfo) pair: a header {src id, bind index, record count, record bytes}, then the records.
/// A record is {data index, field index, packed arguments}; when the arguments are all trivially
/// copyable every record has the same size (`recBytes`), otherwise recBytes is 0 and each record
/// carries a u32 argument length after the indices. The same bytes are what crosses nodes.
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
};

/// Records and headers start at multiples of 4 bytes, so headers can be read in place.
constexpr std::uint32_t padded(std::size_t n) { return static_cast<std::uint32_t>((n + 3) & ~std::size_t{3}); }

/// One thread's queue of sends, split into segments (one per Element processed in a tick).
class Outbox {
 public:
  /// Appends a send of (a...) from entry (d, f) of Element `src` through port `bind`.
  template <class... A>
  void append(std::uint32_t src, std::uint32_t bind, Index d, Index f, const A&... a) {
    constexpr bool fixed = (std::is_trivially_copyable_v<A> && ...);
    constexpr std::uint32_t rec = fixed ? padded(2 * sizeof(Index) + (0 + ... + sizeof(A))) : 0;
    BatchHeader* h = open(src, bind, rec);
    ++h->count;
    if constexpr (fixed) {
      char* p = buf_.grow(rec);
      std::memcpy(p, &d, sizeof d);
      std::memcpy(p + sizeof d, &f, sizeof f);
      p += 2 * sizeof(Index);
      ((std::memcpy(p, &a, sizeof(A)), p += sizeof(A)), ...);
      (void)p;
    } else {
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
  /// Ends the current segment (and batch): later sends start a new one.
  void mark() {
    segments_.push_back(buf_.size());
    batch_ = kNone;
  }
  /// Segment boundaries: segment j is [starts()[j], starts()[j+1]) with starts()[0] == 0.
  const std::vector<std::size_t>& segmentEnds() const { return segments_; }
  const ByteBuffer& bytes() const { return buf_; }
  bool empty() const { return buf_.empty(); }
  void clear() {
    buf_.clear();
    segments_.clear();
    batch_ = kNone;
  }
  /// Appends another queue's bytes (both must be unbatched).
  void appendRaw(const Outbox& o) {
    buf_.append(o.buf_.data(), o.buf_.size());
    batch_ = kNone;
  }
  /// Every send becomes its own batch (used for queues that are sorted before delivery).
  void setUnbatched(bool u) { unbatched_ = u; }

 private:
  static constexpr std::size_t kNone = ~std::size_t{0};
  BatchHeader* open(std::uint32_t src, std::uint32_t bind, std::uint32_t rec) {
    if (batch_ != kNone && !unbatched_) {
      auto* h = reinterpret_cast<BatchHeader*>(buf_.data() + batch_);
      if (h->src == src && h->bind == bind) return h;
    }
    batch_ = buf_.size();
    auto* h = reinterpret_cast<BatchHeader*>(buf_.grow(sizeof(BatchHeader)));
    *h = BatchHeader{src, bind, 0, rec};
    return h;
  }
  ByteBuffer buf_;
  std::vector<std::size_t> segments_;
  std::size_t batch_ = kNone;
  bool unbatched_ = false;
};

}  // namespace antler
