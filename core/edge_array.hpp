#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Field-element arrays whose entries may live in the Sparse message that fills them.
///
/// A neuron's synapses are read when a spike arrives: in the order of the Sparse message's rows
/// (all the targets of one source), not in the order of the neurons. An `EdgeArray<F>` member
/// (e.g. IntFire's `synapse`) lets a SparseMsg hold the entries it fills in an `EdgeStore<F>`,
/// in the message's own CSR order, next to its column indices, so that delivering a spike walks
/// the weights and delays sequentially. The array keeps a pointer to each such entry; entries
/// that no message fills (numSynapses set by hand, Single messages) live in the array itself.
/// Through FieldElement::data, Python, get/set and every other message the entry is the same
/// object wherever it lives: the field element works as a `std::vector<F>` member does.
///
/// Ownership: the message owns its store and lends each local entry to its parent's array
/// (`lend`, which copies the entry's current value in: a refill keeps values by position, as
/// a vector does). Erasing or refilling the message copies each value back (`unlend`); messages
/// touching an element are erased before the element is (Shell delete, clear), so an array never
/// outlives a store it points into. A slot's live bit (kept by the store, beside the objects)
/// says whether its parent's array still refers to it: shrinking an array (numSynapses) clears
/// it, and delivery to a slot that is not live goes the slow way, through the array, exactly as
/// before (an IndexError past the end).
///
/// Memory: a slot is the object alone (a Synapse's 16 bytes) and the array one 32-bit address per
/// entry, in a space of its own where each own block and each lending store holds a range:
/// whether an entry is lent, and by which store, or own, and in which block, the range says (an
/// array has a few of each), so nothing else is stored per entry.
/// Copying an array copies the values (the copy owns them all); moving keeps the entries. An
/// array's destructor does not touch the slots it was lent (their message may be gone already at
/// exit); while the program runs, the message is erased first and has taken them back.
///
/// While the model runs, no array needs its addresses: delivery reads the stores in message
/// order. So before each run (Clock: MsgTable::compactEdgeArrays) an array whose entries are all
/// slots of stores whose messages can list them again (no own entry) drops its addresses
/// (`compact`: 4 bytes per synapse and the vector's block), keeping its size. The first use that
/// needs them (an entry read or written by Python, a get, another message's delivery, a resize,
/// a refill) rebuilds every compacted array's at once (`EdgeCompaction::restoreAll`, one per
/// simulation, in its message table): each store
/// with compacted arrays has its message list its slots by parent, from its column (the pass that
/// lent them), and each array takes its entries from each of its stores (`restore`). Values never
/// move: a compacted array's entries stay in the stores, where delivery reads them. The rebuild
/// may come from any thread, during a run too (a Table reading a weight): it runs under one
/// lock, and an array's flag is released only once all its addresses are written; nothing
/// reads a compacted array's addresses, so it can run while other threads deliver.
/// A rebuild costs a pass over the store (~30 ns a synapse): a script that reads a synapse after
/// every run would pay it each run, so a store whose compactions keep being undone before the
/// next run backs off (after kFreeRebuilds such rebuilds in a row, it skips 1, 3, 7, ... sweeps:
/// rebuilds grow as the log of the runs), and compacts every run again once one survives a run.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/fwd.hpp"
#include "core/huge_pages.hpp"
#include "core/prefetch.hpp"

namespace antler {

class EdgeStoreBase;

/// The compaction of one simulation's arrays (see the file comment; MsgTable holds it): its stores
/// with compacted arrays, and the lock that orders rebuilds and sweeps.
class EdgeCompaction {
 public:
  EdgeCompaction() = default;
  EdgeCompaction(const EdgeCompaction&) = delete;
  EdgeCompaction& operator=(const EdgeCompaction&) = delete;
  /// Rebuilds the addresses of every compacted array (any thread; nothing to do if another
  /// thread just did it).
  inline void restoreAll();
  /// Held by restoreAll, and by a sweep while it compacts.
  std::mutex& lock() { return lock_; }

 private:
  friend class EdgeStoreBase;
  std::mutex lock_;
  std::vector<EdgeStoreBase*> pending_;  // stores with compacted arrays (under lock_)
};

/// A message's store of field objects, type-erased for the message and the delivery loop: the
/// objects themselves, packed (a Synapse's 16 bytes, nothing more), and one bit per slot saying
/// whether the slot is still its parent's entry.
class EdgeStoreBase {
 public:
  virtual ~EdgeStoreBase() {
    if (compacted_ == 0) return;  // (its arrays are going too: see MsgTable::erase)
    std::lock_guard<std::mutex> g(compaction_->lock_);
    std::erase(compaction_->pending_, this);
  }
  /// Slot i's object.
  char* object(std::size_t i) const { return base_ + i * stride_; }
  /// Whether slot i is still its parent's entry.
  bool live(std::size_t i) const { return (live_[i >> 6] >> (i & 63)) & 1u; }
  /// Whether slots i .. i + n - 1 are all live, for n <= 64 - i % 64 (within one word of bits).
  bool allLive(std::size_t i, std::size_t n) const {
    const std::uint64_t want = n == 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << n) - 1);
    return ((live_[i >> 6] >> (i & 63)) & want) == want;
  }
  std::size_t stride() const { return stride_; }
  std::size_t size() const { return size_; }
  /// Fetches slot i's object and its live bits (a hint: changes nothing).
  void prefetchSlot(std::size_t i) const {
    prefetch(object(i));
    prefetch(live_.data() + (i >> 6));
  }

  /// Compaction (see the file comment). The owner, the message, says how to rebuild the
  /// addresses of the arrays this store lends to: it calls each one's `restore` with all of that
  /// array's slots (FieldElementFinfoBase::restore); `c` is its simulation's. Without it, no
  /// array compacts.
  void setRestorer(std::function<void()> fn, EdgeCompaction& c) {
    restorer_ = std::move(fn);
    compaction_ = &c;
  }
  bool restorable() const { return static_cast<bool>(restorer_); }
  EdgeCompaction* compaction() const { return compaction_; }
  /// Rebuilds in a row (each undoing the compaction before it within one run's gap) that cost
  /// nothing more; past them a store skips sweeps (see the file comment).
  static constexpr unsigned kFreeRebuilds = 4;
  /// A sweep's question, once per run (the message's compactLent): whether to compact this
  /// store's arrays now. No if it did since the last rebuild (which resets the back-off: the
  /// compaction lasted a run), or if it backs off.
  bool sweepNow() {
    if (swept_) {
      rebuilds_ = 0;
      return false;
    }
    if (skip_) {
      --skip_;
      return false;
    }
    return true;
  }
  /// Compacted arrays that hold entries of this store (not restored since).
  std::size_t compactedArrays() const { return compacted_; }
  /// After a sweep over this store's arrays: none again until a rebuild (a sweep's work is once
  /// per run that follows a change, not once per run).
  void setSwept() { swept_ = true; }

 protected:
  void setLive(std::size_t i, bool on) {
    const std::uint64_t bit = std::uint64_t{1} << (i & 63);
    live_[i >> 6] = on ? live_[i >> 6] | bit : live_[i >> 6] & ~bit;
  }
  char* base_ = nullptr;
  std::size_t stride_ = 0, size_ = 0;
  std::vector<std::uint64_t> live_;

 private:
  template <class F>
  friend class EdgeArray;
  friend class EdgeCompaction;
  /// One more compacted array holds entries of this store (under the compaction's lock).
  void addCompacted() {
    if (compacted_++ == 0) compaction_->pending_.push_back(this);
  }
  /// After this store's restorer ran: the back-off's count and skip (see the file comment).
  void rebuilt() {
    compacted_ = 0;
    swept_ = false;
    ++rebuilds_;
    skip_ = rebuilds_ < kFreeRebuilds
                ? 0
                : (std::uint64_t{1} << std::min(rebuilds_ - kFreeRebuilds + 1, 30u)) - 1;
  }
  std::function<void()> restorer_;
  EdgeCompaction* compaction_ = nullptr;
  std::size_t compacted_ = 0;  // under the compaction's lock
  bool swept_ = false;         // swept since made or last rebuilt
  unsigned rebuilds_ = 0;      // in a row, each before the next run
  std::uint64_t skip_ = 0;     // sweeps to skip
};

void EdgeCompaction::restoreAll() {
  std::lock_guard<std::mutex> g(lock_);
  std::vector<EdgeStoreBase*> stores;
  stores.swap(pending_);
  for (EdgeStoreBase* st : stores) {
    st->restorer_();
    st->rebuilt();
  }
}

template <class F>
class EdgeArray;

namespace detail {
/// Which of n objects of type F from `base` p is, or ~0 if p lies outside them.
template <class F>
std::size_t index_in(const F* p, const F* base, std::size_t n) {
  const auto at = reinterpret_cast<std::uintptr_t>(p), b = reinterpret_cast<std::uintptr_t>(base);
  return base && at >= b && at < b + n * sizeof(F) ? (at - b) / sizeof(F) : ~std::size_t{0};
}
}  // namespace detail

template <class F>
class EdgeStore final : public EdgeStoreBase {
 public:
  static constexpr std::size_t npos = ~std::size_t{0};
  explicit EdgeStore(std::size_t n) : slots_(n) {
    base_ = reinterpret_cast<char*>(slots_.data());
    stride_ = sizeof(F);
    size_ = n;
    live_.assign((n + 63) / 64, 0);
  }
  F& slot(std::size_t i) { return slots_[i]; }
  /// Which slot p is, or npos if it is not one of this store's.
  std::size_t indexOf(const F* p) const {
    return detail::index_in(p, slots_.data(), slots_.size());
  }

 private:
  friend class EdgeArray<F>;
  std::vector<F, HugeAllocator<F>> slots_;  // read in message order
};

/// The array member: entries of its own, or lent by a message's store (see the file comment).
/// Eight bytes in the parent object. Each entry is a 32-bit address in the array's own space, in
/// which each source of objects (a block of own entries, allocated a block per resize, or a
/// lending store, all of its slots) holds a range: an entry is found by the few ranges, not kept
/// as an 8-byte pointer. A block is freed when all its entries have been lent or dropped.
template <class F>
class EdgeArray {
 public:
  EdgeArray() = default;
  EdgeArray(const EdgeArray& o) { *this = o; }
  EdgeArray(EdgeArray&&) noexcept = default;
  EdgeArray& operator=(EdgeArray&&) noexcept = default;
  /// Copies the values: the copy owns every entry, the source keeps its slots.
  EdgeArray& operator=(const EdgeArray& o) {
    if (this == &o) return *this;
    ensure();
    auto r = makeRep();
    r->grow(o.size());
    for (std::size_t i = 0; i < o.size(); ++i) *r->object(r->at[i]) = o[i];
    release(0);
    rep_ = std::move(r);
    return *this;
  }

  std::size_t size() const {
    if (!rep_) return 0;
    return rep_->compacted.load(std::memory_order_acquire) ? rep_->count : rep_->at.size();
  }
  F& operator[](std::size_t i) {
    ensure();
    return *rep_->object(rep_->at[i]);
  }
  const F& operator[](std::size_t i) const {
    ensure();
    return *rep_->object(rep_->at[i]);
  }
  /// Whether the array has dropped its addresses until next needed (see the file comment).
  bool compacted() const { return rep_ && rep_->compacted.load(std::memory_order_acquire); }
  /// Whether every entry is a slot of a store (no own block holds one): the stores that lent
  /// them then hold all the array's values, and a pass over them in slot order reads them
  /// without the addresses (which scatter the entries over the stores).
  bool allLent() const {
    if (!rep_) return true;
    return std::none_of(rep_->sources.begin(), rep_->sources.end(),
                        [](const Source& s) { return !s.store && s.used; });
  }
  /// New entries are default-constructed and owned; entries past n are dropped (a lent one's
  /// slot stops being live).
  void resize(std::size_t n) {
    if (n == size()) return;
    ensure();
    if (!rep_) rep_ = makeRep();
    if (n < size()) {
      release(n);
      rep_->at.resize(n);
    } else {
      rep_->grow(n - size());
    }
  }
  /// Entries f[0..n) become slots slot[0..n) of `store`, taking their values. Indices at or past
  /// the size grow the array, and must together cover every index from the size up: those
  /// entries are born in the store (default values), never allocated in the array first.
  void lend(const Index* f, const std::uint64_t* slot, std::size_t n, EdgeStore<F>& store) {
    if (n == 0) return;
    ensure();
    if (!rep_) rep_ = makeRep();
    const std::uint32_t lo = rep_->lender(store);  // first: it may throw, or renumber entries
    const std::size_t old = size();
    std::size_t top = old;
    for (std::size_t j = 0; j < n; ++j) top = std::max<std::size_t>(top, std::size_t{f[j]} + 1);
    if (top > old) {
      rep_->at.reserve(top);  // exactly: a filled array does not grow again
      rep_->at.resize(top, kNone);
    }
    for (std::size_t j = 0; j < n; ++j) {
      std::uint32_t& e = rep_->at[f[j]];
      F& s = store.slot(slot[j]);
      if (e != kNone) {
        s = *rep_->object(e);
        rep_->drop(e);  // may free an own block: never the store's range, so lo holds
      }
      store.setLive(slot[j], true);
      e = lo + static_cast<std::uint32_t>(slot[j]);
    }
    for (std::size_t i = old; i < top; ++i)
      if (rep_->at[i] == kNone) throw_gap(i);
  }
  /// Makes room for sizes[k] entries in arrays[k] (more than it holds), for a lend to follow:
  /// every array's entry vector is set aside first, then each is allocated again at its new
  /// size, in order, so that the new vectors take the space the old ones leave together rather
  /// than leaving a hole each (see FieldElementFinfoBase::reserve).
  /// The arrays go in groups of about 1M entries held, so that what is set aside is 4 MB at most.
  static void reserveAll(EdgeArray* const* arrays, const std::size_t* sizes, std::size_t n) {
    constexpr std::size_t kAside = std::size_t{1} << 20;
    std::vector<std::uint32_t, HugeAllocator<std::uint32_t>> aside;  // mapped on its own
    std::vector<std::size_t> held;
    for (std::size_t k = 0; k < n; ++k) arrays[k]->ensure();
    for (std::size_t k0 = 0; k0 < n;) {
      std::size_t k1 = k0, total = 0;
      while (k1 < n && (k1 == k0 || total + arrays[k1]->size() <= kAside))
        total += arrays[k1++]->size();
      aside.clear();
      aside.reserve(total);
      held.clear();
      for (std::size_t k = k0; k < k1; ++k) {
        held.push_back(arrays[k]->size());
        if (Rep* r = arrays[k]->rep_.get()) {
          aside.insert(aside.end(), r->at.begin(), r->at.end());
          std::vector<std::uint32_t>().swap(r->at);
        }
      }
      const std::uint32_t* from = aside.data();
      for (std::size_t k = k0; k < k1; ++k) {
        EdgeArray& a = *arrays[k];
        const std::size_t had = held[k - k0];
        if (!a.rep_) a.rep_ = makeRep();
        a.rep_->at.reserve(std::max(sizes[k], had));
        a.rep_->at.assign(from, from + had);
        from += had;
      }
      k0 = k1;
    }
  }
  /// Those of entries f[0..n) that are still slots slot[0..n) of `store` become own entries
  /// again (one block for them all), with the slots' values. f must list every entry of this
  /// array that `store` lent (a message gives back all of a parent's at once): afterwards none
  /// refers to the store.
  void unlend(const Index* f, const std::uint64_t* slot, std::size_t n, EdgeStore<F>& store) {
    if (!rep_) return;
    ensure();
    const Source* src = rep_->find(&store);
    if (!src) return;
    std::uint32_t lo = src->lo;
    std::size_t mine = 0;
    for (std::size_t j = 0; j < n; ++j)
      mine += f[j] < size() && rep_->at[f[j]] == lo + static_cast<std::uint32_t>(slot[j]);
    if (mine) {
      std::uint32_t own = rep_->allocate(mine);  // may renumber the ranges: lo is asked again
      lo = rep_->find(&store)->lo;
      for (std::size_t j = 0; j < n; ++j) {
        if (f[j] >= size() || rep_->at[f[j]] != lo + static_cast<std::uint32_t>(slot[j])) continue;
        *rep_->object(own) = store.slot(slot[j]);
        rep_->at[f[j]] = own++;
        store.setLive(slot[j], false);
      }
    }
    rep_->forget(&store);
  }
  /// Drops the entries' addresses if every entry is a slot of a store (`store`, which asks, among
  /// them) whose message can rebuild them (see the file comment); the values stay where they
  /// are. Under the EdgeCompaction's lock, while nothing else uses the array (between runs).
  /// Returns whether it did.
  bool compact(EdgeStore<F>& store) {
    if (!rep_ || rep_->compacted.load(std::memory_order_relaxed) || rep_->at.empty() ||
        !rep_->find(&store))
      return false;
    for (const Source& s : rep_->sources)
      if (!s.store || !s.store->restorable()) return false;
    rep_->count = static_cast<std::uint32_t>(rep_->at.size());
    rep_->waiting = static_cast<std::uint32_t>(rep_->sources.size());
    std::vector<std::uint32_t>().swap(rep_->at);
    for (const Source& s : rep_->sources) s.store->addCompacted();
    rep_->compacted.store(true, std::memory_order_release);
    return true;
  }
  /// Rebuilds the addresses that compact dropped, those of `store`'s slots: f[0..n) and
  /// slot[0..n) list every slot of `store` whose parent this array is, as the message lent them
  /// (slots no longer live are skipped: their entries were dropped). Once each of its stores has
  /// called, the array is whole again. Under the EdgeCompaction's lock (restoreAll).
  void restore(const Index* f, const std::uint64_t* slot, std::size_t n, EdgeStore<F>& store) {
    if (!rep_ || !rep_->compacted.load(std::memory_order_relaxed)) return;
    const Source* src = rep_->find(&store);
    if (!src) throw_stray();
    const std::uint32_t lo = src->lo;
    if (rep_->at.empty()) {
      rep_->at.reserve(rep_->count);
      rep_->at.assign(rep_->count, kNone);
    }
    for (std::size_t j = 0; j < n; ++j)
      if (f[j] < rep_->count && store.live(slot[j]))
        rep_->at[f[j]] = lo + static_cast<std::uint32_t>(slot[j]);
    if (--rep_->waiting) return;
    for (std::size_t i = 0; i < rep_->count; ++i)
      if (rep_->at[i] == kNone) throw_gap(i);
    rep_->compacted.store(false, std::memory_order_release);
  }

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};  // no entry yet (inside lend)
  /// Addresses lo .. lo + n - 1 are objects base[0 .. n - 1]: an own block (store == nullptr;
  /// `used` of its entries are still the array's) or all the slots of a lending store.
  struct Source {
    F* base;
    EdgeStore<F>* store;
    std::uint32_t lo, n, used;
  };
  struct Rep {
    std::vector<std::uint32_t> at;  // entry i's address (none while compacted)
    // A few: own blocks, lending stores. In pool blocks, not the heap: between the entry vectors
    // they would keep the heap's pages resident once compact frees those vectors.
    std::vector<Source, PoolAllocator<Source>> sources;
    std::uint32_t next = 0;     // the first address no source holds (<= kNone)
    std::uint32_t count = 0;    // the size, while compacted (addresses are distinct)
    std::uint32_t waiting = 0;  // stores yet to restore their entries, while compacted
    std::atomic<bool> compacted{false};
    ~Rep() {
      for (Source& s : sources)
        if (!s.store) delete[] s.base;
    }
    /// The source address v lies in (a linear search: an array has a few).
    Source& sourceOf(std::uint32_t v) {
      for (Source& s : sources)
        if (v - s.lo < s.n) return s;
      throw_stray();
    }
    F* object(std::uint32_t v) {
      Source& s = sourceOf(v);
      return s.base + (v - s.lo);
    }
    const Source* find(const EdgeStore<F>* store) const {
      for (const Source& s : sources)
        if (s.store == store) return &s;
      return nullptr;
    }
    /// The first address of store's range, added if it has none.
    std::uint32_t lender(EdgeStore<F>& store) {
      if (const Source* s = find(&store)) return s->lo;
      const std::uint32_t lo = addresses(store.size());
      sources.push_back(
          {store.slots_.data(), &store, lo, static_cast<std::uint32_t>(store.size()), 0});
      return lo;
    }
    void forget(const EdgeStore<F>* store) {
      std::erase_if(sources, [store](const Source& s) { return s.store == store; });
    }
    /// n new own entries, default-constructed: the first one's address.
    std::uint32_t allocate(std::size_t n) {
      const std::uint32_t lo = addresses(n);
      sources.push_back(
          {new F[n](), nullptr, lo, static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(n)});
      return lo;
    }
    void grow(std::size_t n) {
      if (n == 0) return;
      const std::uint32_t lo = allocate(n);
      if (n >= at.size()) at.reserve(at.size() + n);  // a big step: exactly (small ones double)
      for (std::size_t j = 0; j < n; ++j) at.push_back(lo + static_cast<std::uint32_t>(j));
    }
    /// The entry at v stops being this array's: a lent slot is no longer live, an own one's block
    /// is freed with its last entry.
    void drop(std::uint32_t v) {
      Source& s = sourceOf(v);
      if (s.store) {
        s.store->setLive(v - s.lo, false);
      } else if (--s.used == 0) {
        delete[] s.base;
        sources.erase(sources.begin() + (&s - sources.data()));
      }
    }
    /// A range of n new addresses. When the space (2^32 - 1 addresses, kNone excluded) would
    /// overflow, the live ranges are renumbered from 0 first (ranges freed by refills and
    /// dropped blocks leave gaps behind them).
    std::uint32_t addresses(std::size_t n) {
      constexpr std::uint64_t kSpace = kNone;
      if (std::uint64_t{next} + n > kSpace) {
        std::uint64_t total = n;
        for (const Source& s : sources) total += s.n;
        if (total > kSpace) throw_space(total);
        std::vector<std::uint32_t> old;
        for (const Source& s : sources) old.push_back(s.lo);
        next = 0;
        for (Source& s : sources) {
          s.lo = next;
          next += s.n;  // (at most total <= kSpace)
        }
        for (std::uint32_t& v : at) {
          if (v == kNone) continue;
          for (std::size_t k = 0; k < sources.size(); ++k)
            if (v - old[k] < sources[k].n) {
              v = v - old[k] + sources[k].lo;
              break;
            }
        }
      }
      const std::uint32_t lo = next;
      next += static_cast<std::uint32_t>(n);
      return lo;
    }
  };
  /// The addresses, rebuilt by the one lending store if compacted (any thread).
  void ensure() const {
    if (rep_ && rep_->compacted.load(std::memory_order_acquire)) [[unlikely]]
      restoreAddresses();
  }
  [[gnu::noinline]] void restoreAddresses() const {
    rep_->sources.front().store->compaction()->restoreAll();
    if (rep_->compacted.load(std::memory_order_acquire)) throw_unrestored();
  }
  [[noreturn]] static void throw_unrestored();
  [[noreturn]] static void throw_gap(std::size_t i);
  [[noreturn]] static void throw_stray();
  [[noreturn]] static void throw_space(std::uint64_t total);
  /// Drops entries n.. (see Rep::drop).
  void release(std::size_t n) {
    if (!rep_) return;
    for (std::size_t i = n; i < rep_->at.size(); ++i) rep_->drop(rep_->at[i]);
  }
  // The Rep itself comes from the small-block pool, away from the heap that holds the entry
  // vectors: when a later fill grows those vectors, the old ones, freed side by side, coalesce
  // into space the new ones reuse, instead of staying resident between the Reps.
  struct RepDelete {
    void operator()(Rep* r) const noexcept {
      r->~Rep();
      SmallBlockPool::instance().deallocate(r, sizeof(Rep));
    }
  };
  using RepPtr = std::unique_ptr<Rep, RepDelete>;
  // A pool block of 64 bytes per array (the next size is 128: 0.6 B a synapse at 100 a neuron).
  static_assert(sizeof(Rep) <= 64);
  static RepPtr makeRep() {
    return RepPtr(new (SmallBlockPool::instance().allocate(sizeof(Rep))) Rep());
  }
  RepPtr rep_;
};

template <class F>
void EdgeArray<F>::throw_space(std::uint64_t total) {
  throw ValueError("EdgeArray: an array's own entries and the stores that lend to it hold " +
                   std::to_string(total) +
                   " objects, past the 2^32 - 1 that its 32-bit entries can address (split the "
                   "Sparse messages that fill it, or run on more nodes)");
}

template <class F>
void EdgeArray<F>::throw_stray() {
  throw InternalError(
      "EdgeArray: an entry is neither in the array's own blocks nor a slot of a store that lent "
      "it");
}

template <class F>
void EdgeArray<F>::throw_gap(std::size_t i) {
  throw InternalError("EdgeArray: entry " + std::to_string(i) +
                      " was neither lent nor kept (a message's field indices left a gap)");
}

template <class F>
void EdgeArray<F>::throw_unrestored() {
  throw InternalError(
      "EdgeArray: the message whose store lent an array's entries did not rebuild their "
      "addresses after a run");
}

}  // namespace antler
#pragma GCC visibility pop
