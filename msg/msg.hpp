#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Msg: a typed connection from a SrcFinfo on one Element to a DestFinfo on another, and the
/// index mapping that says which destination entries a send from source entry (d, f) reaches.
/// Message metadata is replicated on every node; each node delivers only to its own entries.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/edge_array.hpp"
#include "core/element.hpp"
#include "core/finfo.hpp"
#include "core/huge_pages.hpp"

namespace antler {

class MsgContext;  // msg/context.hpp

/// The message kinds.
enum class MsgKind : std::uint8_t { single, oneToOne, oneToAll, diagonal, sparse, reduce };

/// "Single", "OneToOne", ... (the names scripts use).
const char* to_string(MsgKind k);
/// Parses a kind name; MsgError listing the valid names if unknown.
MsgKind parse_msg_kind(std::string_view name, std::string_view operation);

/// One row of the message-kind table (msg/connect.cpp): a kind's name, how connect makes one
/// (nullptr: not by connect — a Reduce message starts at a ReduceFinfo), and the Shell commands
/// that configure one after it is made. A new kind is its class, its MsgKind, its case in
/// Msg::deliver and targets, and one row.
struct MsgKindInfo {
  MsgKind kind;
  const char* name;
  /// Checks the ends (indices, sizes) and makes the message; connect has checked the fields.
  std::unique_ptr<Msg> (*make)(std::uint32_t id, Element* src, Element* dest, const Finfo* sf,
                               const Finfo* df, const ObjId& srcObj, const ObjId& destObj);
  const char* configuration;
};
/// Every kind, in MsgKind order.
std::span<const MsgKindInfo> msg_kinds();

/// Base of all messages. The mapping is a closed set of kinds, dispatched by a switch in
/// deliver() so that the per-target call needs no virtual call beyond the destination function.
class Msg {
 public:
  Msg(std::uint32_t id, MsgKind kind, Element* src, Element* dest, const Finfo* srcFinfo,
      const Finfo* destFinfo);
  virtual ~Msg() = default;
  std::uint32_t id() const { return id_; }
  MsgKind kind() const { return kind_; }
  Element* src() const { return src_; }
  Element* dest() const { return dest_; }
  const Finfo* srcFinfo() const { return srcFinfo_; }
  const Finfo* destFinfo() const { return destFinfo_; }

  /// Calls `func` on every target of a send from source entry (d, f) whose data index lies in
  /// [lo, hi) (a thread's slice of the destination's local entries).
  void deliver(const DestFinfoBase* func, Index d, Index f, const char* args, std::size_t argBytes,
               Index lo, Index hi) const;

  /// Every target of source entry (d, f), on any node (for introspection and tests).
  std::vector<Target> targets(Index d, Index f) const;

 private:
  std::uint32_t id_;
  MsgKind kind_;
  Element* src_;
  Element* dest_;
  const Finfo* srcFinfo_;
  const Finfo* destFinfo_;
};

/// One source entry to one destination entry.
class SingleMsg final : public Msg {
 public:
  SingleMsg(std::uint32_t id, Element* src, Element* dest, const Finfo* sf, const Finfo* df,
            Target from, Target to)
      : Msg(id, MsgKind::single, src, dest, sf, df), from_(from), to_(to) {}
  Target from() const { return from_; }
  Target to() const { return to_; }

 private:
  Target from_, to_;
};

/// Source data entry i to destination data entry i (field i too when both are field elements).
class OneToOneMsg final : public Msg {
 public:
  OneToOneMsg(std::uint32_t id, Element* src, Element* dest, const Finfo* sf, const Finfo* df)
      : Msg(id, MsgKind::oneToOne, src, dest, sf, df) {}
};

/// Every source entry to every destination entry.
class OneToAllMsg final : public Msg {
 public:
  OneToAllMsg(std::uint32_t id, Element* src, Element* dest, const Finfo* sf, const Finfo* df)
      : Msg(id, MsgKind::oneToAll, src, dest, sf, df) {}
};

/// Source data entry i to destination data entry i + stride (when that exists).
class DiagonalMsg final : public Msg {
 public:
  DiagonalMsg(std::uint32_t id, Element* src, Element* dest, const Finfo* sf, const Finfo* df,
              long stride)
      : Msg(id, MsgKind::diagonal, src, dest, sf, df), stride_(stride) {}
  long stride() const { return stride_; }
  void setStride(long s);

 private:
  long stride_;
};

/// A sparse matrix in CSR form: row = source data index, entries = destination data indices,
/// each row sorted (so a thread finds its slice by binary search). When the destination is a
/// FieldElement, filling the matrix assigns each entry the next free field index of its
/// destination parent and sizes the parents' arrays to match: several Sparse messages can feed
/// one synapse array, each appending after those filled before it. Fill each message once (a
/// refill replaces its own entries and keeps earlier messages').
///
/// An entry's field index follows from the order (the parent's entries before this message's
/// first fill, plus the entries of this message that reached the same parent before it, row by
/// row), so it is not kept beside the data index: fieldIndices() computes them all on first use
/// (introspection, a dest function that reads its Eref's field index, a field element without
/// a store, a slot no longer live) and keeps them until the next fill.
///
/// When the field element is an EdgeArray (core/edge_array.hpp; IntFire's synapse), the message
/// also holds the objects of its local entries, in its own order (slot = rank of the entry among
/// this node's entries, row by row), and lends them to the parents' arrays: delivering a row then
/// reads them sequentially. unlendAll() gives them back (erase, refill).
class SparseMsg final : public Msg, public FieldIndices {
 public:
  SparseMsg(std::uint32_t id, Element* src, Element* dest, const Finfo* sf, const Finfo* df);
  ~SparseMsg() override;
  /// The per-entry and per-row arrays, on huge pages (core/huge_pages.hpp): delivery reaches a
  /// spiking source's row, its starts and its first entries at random (with 4 KiB pages, a
  /// message of 1e8 entries paid page walks on every row: at 1e6 neurons, delivery took 3.0-3.4
  /// ms a step against 1.3-1.6 on huge pages).
  using Columns = std::vector<Index, HugeAllocator<Index>>;
  using Offsets = std::vector<std::uint64_t, HugeAllocator<std::uint64_t>>;
  /// Each (source, destination) pair connected independently with this probability; the same
  /// matrix for a given seed whatever the node count. Replaces any previous entries.
  void setRandomConnectivity(double probability, std::uint64_t seed);
  /// Connects srcIndices[k] to destIndices[k] for every k. Replaces any previous entries.
  void pairFill(std::span<const Index> srcIndices, std::span<const Index> destIndices);
  /// Calls fn(k, field index) for every pair k of the last pairFill (its pairs given again)
  /// whose destination is one of this node's parents, parent by parent and each parent's entries
  /// in field order (the order that reaches their objects fastest): the field index of the entry
  /// pair k made. A parent's entries are those it had before this message's, then this
  /// message's in row order, that is by source, a pair given twice in the order given (so values
  /// given in pair order reach the entry their pair made). The destination must be a field
  /// element. Costs 4 bytes a pair while it runs (8 when the pairs are not in source order).
  void forEachPairField(std::span<const Index> srcIdx, std::span<const Index> destIdx,
                        const std::function<void(std::size_t, Index)>& fn) const;
  /// Calls fn(k, slot) for every pair k of the last pairFill (its pairs given again) whose entry
  /// is this node's, in slot order: the slot in store() of the entry pair k made (each row's
  /// pairs matched to its entries by destination, a pair given twice in the order given, as
  /// forEachPairField). The objects then go by in order, and the values of one row's pairs lie
  /// together. False, calling nothing, without a store or with the pairs not in source order.
  bool forEachPairSlot(std::span<const Index> srcIdx, std::span<const Index> destIdx,
                       const std::function<void(std::size_t, std::uint64_t)>& fn) const;
  /// Number of entries.
  std::size_t numEntries() const { return cols_.size(); }
  /// The destination data indices of row d's entries.
  std::pair<const Index*, const Index*> row(Index d) const {
    return {cols_.data() + rowStart_[d], cols_.data() + rowStart_[d + 1]};
  }
  std::size_t numRows() const { return rowStart_.size() - 1; }
  /// Which entry `entry` (a pointer into a row) is: its index in fieldIndices().
  std::size_t entryOf(const Index* entry) const {
    return static_cast<std::size_t>(entry - cols_.data());
  }
  /// Every entry's field index, in entry order (0 for a DataElement destination); built on the
  /// first call, from any thread, and kept until the next fill. Exact for the entries of this
  /// node's parents (the only ones a node delivers to).
  const Index* fieldIndices() const override;
  /// Whether fieldIndices() has been built (and holds 4 bytes per entry) since the last fill.
  bool keepsFieldIndices() const { return fieldsBuilt_.load(std::memory_order_acquire); }
  /// The store of this node's entries (nullptr unless the destination is an EdgeArray).
  const EdgeStoreBase* store() const { return store_.get(); }
  /// The slot of local entry `entry` (a pointer into row d).
  std::size_t slotOf(Index d, const Index* entry) const {
    return slotStart_[d] + static_cast<std::size_t>(entry - (cols_.data() + localFirst_[d]));
  }
  /// Calls fn(destination data index, slot) for each of this node's entries, in slot order
  /// (the store's: row by row). Nothing without a store.
  template <class Fn>
  void forEachSlot(Fn fn) const {
    if (!store_) return;
    for (std::size_t r = 0; r + 1 < slotStart_.size(); ++r) {
      const Index* t = cols_.data() + localFirst_[r];
      for (std::uint64_t k = slotStart_[r]; k < slotStart_[r + 1]; ++k, ++t) fn(*t, k);
    }
  }
  /// Every lent entry goes back to its parent's array, with its value; the store is dropped.
  void unlendAll();
  /// Before a run: each local parent's array whose entries are all this store's drops their
  /// addresses, rebuilt when next needed (core/edge_array.hpp, "While the model runs"). Once
  /// per fill or rebuild; the number of arrays that did.
  std::size_t compactLent();
  /// Delivery hints for a row about to be delivered (they change nothing). A row is found
  /// through per-row arrays and starts in the column and the store at places no earlier row
  /// left in cache: fetchRow(d), a few rows ahead, asks for row d's starts; fetchEntries(d), a
  /// row or two ahead (when those have come), for its first data indices, slots and live bits.
  void fetchRow(Index d) const {
    prefetch(rowStart_.data() + d);
    if (store_) {
      prefetch(slotStart_.data() + d);
      prefetch(localFirst_.data() + d);
    }
  }
  void fetchEntries(Index d) const {
    prefetch(cols_.data() + rowStart_[d]);
    if (store_) store_->prefetchSlot(slotStart_[d]);
  }

 private:
  void assignFields();
  void lendAll();
  /// The store's restorer: every compacted array's addresses, from the column (as lendAll).
  void restoreLent() const;
  /// The entries' field indices, computed (no lock: the caller holds fieldsLock_ or is alone).
  Columns computeFields() const;
  /// Replaces the entries (a fill): the field indices are computed again when next asked for.
  void setEntries(Offsets rowStart, Columns cols);
  /// Calls fn(parent object, field indices, slots, n) for each local parent with entries here,
  /// in runs of parents; before(parents, start, fields) sees each run first (parent k's field
  /// indices are fields[start[k] .. start[k + 1])).
  template <class Fn>
  void byParent(Fn fn) const;
  template <class Fn, class Before>
  void byParent(Fn fn, Before before) const;
  Offsets rowStart_;
  Columns cols_;             // destination data index per entry
  std::vector<Index> base_;  // local parents' entry counts before this message's first fill
  bool filled_ = false;
  std::unique_ptr<EdgeStoreBase> store_;  // this node's entries' objects (EdgeArray only)
  Offsets slotStart_;                     // per row: the slot of its first local entry
  Offsets localFirst_;                    // per row: the index of its first local entry
  mutable std::mutex fieldsLock_;
  mutable Columns fields_;                        // fieldIndices(), once built
  mutable std::atomic<bool> fieldsBuilt_{false};  // whether fields_ holds them
};

/// Owns every message of a simulation, indexed by message id (ids are never reused).
class MsgTable {
 public:
  MsgTable() = default;
  MsgTable(const MsgTable&) = delete;
  MsgTable& operator=(const MsgTable&) = delete;
  /// The message with this id, or nullptr.
  Msg* get(std::uint32_t id) const { return id < msgs_.size() ? msgs_[id].get() : nullptr; }
  std::uint32_t nextId() const { return static_cast<std::uint32_t>(msgs_.size()); }
  /// Takes ownership and links the message into its source's connection list.
  Msg* insert(std::unique_ptr<Msg> m, const SrcFinfoBase* srcFinfo, const DestFinfoBase* func);
  /// Removes one message and unlinks it. destStays = false: its destination is being destroyed
  /// too, so a Sparse message need not give back the entries it holds (core/edge_array.hpp).
  void erase(std::uint32_t id, bool destStays = true);
  /// Removes every message that touches e or any element of its subtree.
  void eraseTouching(Element* e);
  /// Removes every message.
  void clear();
  /// Live messages, in id order.
  std::vector<Msg*> all() const;
  /// A Sparse message that lends its entries (SparseMsg::lendAll) asks to be swept before runs.
  void addLender(std::uint32_t id);
  /// Before a run (Clock): every lending message's compactLent; the heap's freed pages go back
  /// to the system when any array compacted. The number of arrays that did.
  std::size_t compactEdgeArrays();
  /// The compaction of this simulation's arrays (core/edge_array.hpp).
  EdgeCompaction& compaction() { return compaction_; }

 private:
  EdgeCompaction compaction_;  // before msgs_: the stores in them refer to it as they go
  std::vector<std::unique_ptr<Msg>> msgs_;
  std::vector<std::uint32_t> lenders_;  // ids of Sparse messages that have lent (some since gone)
};

/// Checks and creates a message `kind` from (src, srcField) to (dest, destField): the fields
/// must exist and be a SrcFinfo and a DestFinfo with the same argument types, indices must be in
/// range. Every failure is an Error naming the thing and the valid choices; nothing changes then.
Msg* connect(MsgContext& sim, std::string_view kind, const ObjId& src, std::string_view srcField,
             const ObjId& dest, std::string_view destField);

}  // namespace antler
#pragma GCC visibility pop
