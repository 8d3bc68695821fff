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
/// (`attach`, which copies the entry's current value in: a refill keeps values by position, as
/// a vector does). Erasing or refilling the message copies each value back (`detach`); messages
/// touching an element are erased before the element is (Shell delete, clear), so an array never
/// outlives a store it points into. A slot's `live` flag says whether its parent's array still
/// refers to it: shrinking an array (numSynapses) clears it, and delivery to a slot that is not
/// live goes the slow way, through the array, exactly as before (an IndexError past the end).
/// Copying an array copies the values (the copy owns them all); moving keeps the pointers. An
/// array's destructor does not touch the slots it was lent (their message may be gone already at
/// exit); while the program runs, the message is erased first and has taken them back.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/fwd.hpp"
#include "core/huge_pages.hpp"

namespace antler {

/// One entry, in a message's store or in its array's own storage: the object, whether it is its
/// array's entry (for a store's slot), and which own block holds it (kLent for a store's slot).
template <class F>
struct EdgeSlot {
  static constexpr std::uint32_t kLent = 0xFFFFFFFFu;
  F obj{};
  bool live = false;
  std::uint32_t block = kLent;
};

/// A message's store of field objects, type-erased for the message and the delivery loop.
class EdgeStoreBase {
 public:
  virtual ~EdgeStoreBase() = default;
  /// Slot i's object.
  char* object(std::size_t i) const { return base_ + i * stride_; }
  /// Whether slot i is still its parent's entry.
  bool live(const char* obj) const { return *reinterpret_cast<const bool*>(obj + liveOffset_); }
  std::size_t stride() const { return stride_; }
  std::size_t size() const { return size_; }

 protected:
  char* base_ = nullptr;
  std::size_t stride_ = 0, liveOffset_ = 0, size_ = 0;
};

template <class F>
class EdgeStore final : public EdgeStoreBase {
 public:
  explicit EdgeStore(std::size_t n) : slots_(n) {
    base_ = reinterpret_cast<char*>(slots_.data());
    stride_ = sizeof(EdgeSlot<F>);
    liveOffset_ = offsetof(EdgeSlot<F>, live);
    size_ = n;
  }
  EdgeSlot<F>& slot(std::size_t i) { return slots_[i]; }

 private:
  std::vector<EdgeSlot<F>, HugeAllocator<EdgeSlot<F>>> slots_;  // read in message order
};

/// The array member: entries of its own, or lent by a message's store (see the file comment).
/// Eight bytes in the parent object. Each entry is reached through one pointer; own entries are
/// allocated a block per resize, and a block is freed when all its entries have been lent.
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
    auto r = makeRep();
    r->grow(o.size());
    for (std::size_t i = 0; i < o.size(); ++i) r->at[i]->obj = o[i];
    release(0);
    rep_ = std::move(r);
    return *this;
  }

  std::size_t size() const { return rep_ ? rep_->at.size() : 0; }
  F& operator[](std::size_t i) { return rep_->at[i]->obj; }
  const F& operator[](std::size_t i) const { return rep_->at[i]->obj; }
  /// New entries are default-constructed and owned; entries past n are dropped (a lent one's
  /// slot stops being live).
  void resize(std::size_t n) {
    if (n == size()) return;
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
    if (!rep_) rep_ = makeRep();
    const std::size_t old = size();
    std::size_t top = old;
    for (std::size_t j = 0; j < n; ++j) top = std::max<std::size_t>(top, std::size_t{f[j]} + 1);
    if (top > old) {
      rep_->at.reserve(top);  // exactly: a filled array does not grow again
      rep_->at.resize(top, nullptr);
    }
    for (std::size_t j = 0; j < n; ++j) {
      EdgeSlot<F>*& e = rep_->at[f[j]];
      EdgeSlot<F>& s = store.slot(slot[j]);
      if (e) {
        s.obj = e->obj;
        rep_->drop(e);
      }
      s.live = true;
      s.block = EdgeSlot<F>::kLent;
      e = &s;
    }
    for (std::size_t i = old; i < top; ++i)
      if (!rep_->at[i]) throw_gap(i);
  }
  /// Those of entries f[0..n) that are still slots slot[0..n) of `store` become own entries
  /// again (one block for them all), with the slots' values.
  void unlend(const Index* f, const std::uint64_t* slot, std::size_t n, EdgeStore<F>& store) {
    std::size_t mine = 0;
    for (std::size_t j = 0; j < n; ++j)
      mine += f[j] < size() && rep_->at[f[j]] == &store.slot(slot[j]);
    if (mine == 0) return;
    EdgeSlot<F>* own = rep_->allocate(mine);
    for (std::size_t j = 0; j < n; ++j) {
      EdgeSlot<F>& s = store.slot(slot[j]);
      if (f[j] >= size() || rep_->at[f[j]] != &s) continue;
      own->obj = s.obj;
      rep_->at[f[j]] = own++;
      s.live = false;
    }
  }

 private:
  struct Block {
    std::unique_ptr<EdgeSlot<F>[]> mem;
    std::uint32_t used = 0;  // entries of the block that are still their array's
  };
  struct Rep {
    std::vector<EdgeSlot<F>*> at;  // entry i
    std::vector<Block> blocks;     // own storage (a freed block keeps its place: mem == nullptr)
    EdgeSlot<F>* allocate(std::size_t n) {
      const auto b = static_cast<std::uint32_t>(blocks.size());
      blocks.push_back({std::make_unique<EdgeSlot<F>[]>(n), static_cast<std::uint32_t>(n)});
      EdgeSlot<F>* m = blocks.back().mem.get();
      for (std::size_t j = 0; j < n; ++j) m[j].block = b;
      return m;
    }
    void grow(std::size_t n) {
      if (n == 0) return;
      EdgeSlot<F>* m = allocate(n);
      if (n >= at.size()) at.reserve(at.size() + n);  // a big step: exactly (small ones double)
      for (std::size_t j = 0; j < n; ++j) at.push_back(m + j);
    }
    /// The entry stops being this array's: a lent slot is no longer live, an own one's block is
    /// freed with its last entry.
    void drop(EdgeSlot<F>* e) {
      if (e->block == EdgeSlot<F>::kLent) {
        e->live = false;
      } else if (--blocks[e->block].used == 0) {
        blocks[e->block].mem.reset();
      }
    }
  };
  [[noreturn]] static void throw_gap(std::size_t i);
  /// Drops entries n.. (see Rep::drop).
  void release(std::size_t n) {
    if (!rep_) return;
    for (std::size_t i = n; i < rep_->at.size(); ++i) rep_->drop(rep_->at[i]);
  }
  // The Rep itself comes from the small-block pool, away from the heap that holds the entry
  // pointers: when a later fill grows those vectors, the old ones, freed side by side, coalesce
  // into space the new ones reuse, instead of staying resident between the Reps.
  struct RepDelete {
    void operator()(Rep* r) const noexcept {
      r->~Rep();
      SmallBlockPool::instance().deallocate(r, sizeof(Rep));
    }
  };
  using RepPtr = std::unique_ptr<Rep, RepDelete>;
  static RepPtr makeRep() {
    return RepPtr(new (SmallBlockPool::instance().allocate(sizeof(Rep))) Rep());
  }
  RepPtr rep_;
};

template <class F>
void EdgeArray<F>::throw_gap(std::size_t i) {
  throw InternalError("EdgeArray::lend: entry " + std::to_string(i) +
                      " was neither lent nor kept (a message's field indices left a gap)");
}

}  // namespace antler
#pragma GCC visibility pop
