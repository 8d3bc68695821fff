#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Elements: named arrays of objects of one class, in a tree of paths.
///
/// Every node holds the whole tree (names, classes, sizes, messages): only object data is
/// distributed. A DataElement owns its objects; its N entries are block-distributed over the
/// nodes (a global one holds all N on every node). A FieldElement owns nothing: it views an array
/// field inside each object of its parent DataElement (e.g. each IntFire's synapses), so it is
/// distributed exactly as its parent is.
#include <memory>
#include <string>
#include <vector>

#include "core/cinfo.hpp"
#include "core/error.hpp"
#include "core/id.hpp"
#include "core/layout.hpp"
#include "core/neutral.hpp"

namespace antler {

class Msg;      // msg/ layer; core only stores pointers
class Context;  // core/context.hpp: the simulation an Element lives in

/// One outgoing connection of a SrcFinfo: a message and the function it calls.
struct Conn {
  const Msg* msg = nullptr;
  const DestFinfoBase* func = nullptr;
};

/// Base of the Element kinds.
class Element {
 public:
  Element(Context& context, Id id, std::string name, const Cinfo* cinfo, Id parent);
  virtual ~Element();
  Element(const Element&) = delete;
  Element& operator=(const Element&) = delete;

  /// The simulation this Element belongs to (its tables, layout, seed; the layers above reach
  /// their parts through it: msg_context, reduce_context, simulation_of).
  Context& context() const { return *context_; }
  Id id() const { return id_; }
  const std::string& name() const { return name_; }
  const Cinfo* cinfo() const { return cinfo_; }
  Id parent() const { return parent_; }
  const std::vector<Id>& children() const { return children_; }
  /// Full path of the Element, e.g. "/model/neurons".
  std::string path() const;
  /// The child with this name, or nullptr.
  Element* child(const std::string& name) const;

  /// True for a FieldElement (a plain flag: read once per message on the delivery path).
  bool isField() const { return isField_; }
  /// True for an element antler itself keeps (/clock): clearModel leaves it, and delete, move
  /// and copy refuse it.
  bool isSystem() const { return isSystem_; }
  void setSystem() { isSystem_ = true; }
  /// True if every node holds every entry.
  virtual bool isGlobal() const = 0;
  /// Number of data entries over all nodes (for a FieldElement, its parent's).
  Index numData() const { return numData_; }
  /// First data index held on this node.
  Index localBegin() const { return localBegin_; }
  /// One past the last data index held on this node.
  Index localEnd() const { return localEnd_; }
  Index numLocal() const { return localEnd_ - localBegin_; }
  /// True if data index d is held on this node.
  bool isLocal(Index d) const { return d >= localBegin_ && d < localEnd_; }
  /// The node that owns data index d (for a global element, this node).
  int owner(Index d) const;
  /// This process's node in the Element's simulation.
  int myNode() const;
  /// Object pointer for a local (d, f); d must be local and f in range.
  virtual char* data(Index d, Index f) const = 0;
  /// Entries of the field array at local data index d (1 for a DataElement).
  virtual Index numField(Index d) const = 0;

  /// Outgoing connections by SrcFinfo bind index (empty vector if none).
  const std::vector<Conn>& conns(unsigned bindIndex) const {
    static const std::vector<Conn> none;
    return bindIndex < conns_.size() ? conns_[bindIndex] : none;
  }
  /// True if the SrcFinfo with this bind index has any connection: send() returns early if not.
  bool hasConns(unsigned bindIndex) const {
    return bindIndex < conns_.size() && !conns_[bindIndex].empty();
  }
  void addConn(unsigned bindIndex, Conn c);
  void dropConnsTo(const Msg* m);
  /// Ids of the messages that touch this Element (as source or destination).
  std::vector<std::uint32_t>& msgIds() { return msgIds_; }
  const std::vector<std::uint32_t>& msgIds() const { return msgIds_; }

  // Tree maintenance (used by the element table).
  void addChild(Id c) { children_.push_back(c); }
  void removeChild(Id c);
  /// Re-links the Element under another parent (the caller updates both parents' children).
  void setParent(Id p) { parent_ = p; }

 protected:
  void setIsField() { isField_ = true; }
  void setRange(Index n, Index b, Index e) {
    numData_ = n;
    localBegin_ = b;
    localEnd_ = e;
  }

 private:
  Context* context_;
  Id id_;
  std::string name_;
  const Cinfo* cinfo_;
  Id parent_;
  std::vector<Id> children_;
  Index numData_ = 0, localBegin_ = 0, localEnd_ = 0;
  bool isField_ = false;
  bool isSystem_ = false;
  std::vector<std::vector<Conn>> conns_;
  std::vector<std::uint32_t> msgIds_;
};

/// A reduction that a class's process sweep feeds as it writes a data member out, so that the
/// reduction need not read the objects again (ElementState::sweepStamp; the job of a Reduce
/// message offers itself as one: reduce/reduce_finfo.hpp). Clock thread t's sweep of its slice
/// [lo, hi) calls sweepBegin and, if it answers true, sweepBlock for consecutive blocks of at
/// most 512 values from lo (the member's type, as the sweep left them), then sweepEnd with a
/// stamp that no other sweep of the Element carries. Each call reaches thread t's partial only.
/// (A sink answers false where its feeds go unused: a reduction asked for less often.)
class SweepSink {
 public:
  virtual bool sweepBegin(unsigned t, Index lo, Index hi) = 0;
  virtual void sweepBlock(unsigned t, const void* values, Index m, Index first) = 0;
  virtual void sweepEnd(unsigned t, std::uint64_t stamp) = 0;

 protected:
  ~SweepSink() = default;
};

/// What a class keeps for a whole Element rather than per object (IntFire: the queues its
/// neurons' events wait in). The class creates it (ProcFinfoBase::prepare, between
/// runs, on one thread) and reaches it through the DataElement; it dies with the Element and is
/// not copied with it.
class ElementState {
 public:
  virtual ~ElementState() = default;
  /// A Shell command wrote to the Element's objects outside a run (a set, setVec or setLookup of
  /// a field, a `call` of a destination function: e.g. a spike sent straight to a synapse): what
  /// the state knows about its objects may no longer hold. Messages during a run do not call it
  /// (a class whose state depends on them sees them itself).
  virtual void calledOutsideRun() {}
  /// During a run: a copy of the data member at `offset` in the node's objects, one value per
  /// local object in index order, equal to the members now, or nullptr. A class whose process
  /// sweep writes a member out as it goes (IntFire's Vm) spares a reduction reading that member
  /// a second, strided pass over the objects (reduce/reduce_finfo.hpp, reduce_loop). The state
  /// answers only when nothing but its own process changes the member during a run, and forgets
  /// the copy when a Shell command writes to its objects (calledOutsideRun).
  virtual const void* memberCopy(std::ptrdiff_t /*offset*/) const { return nullptr; }
  /// The stamp of clock thread t's last sweep that fed its SweepSinks, while the member it fed
  /// is still as that sweep left it in t's slice; 0 otherwise. A sink whose partial carries this
  /// stamp for the same slice holds the fold of the objects' present values.
  virtual std::uint64_t sweepStamp(unsigned /*t*/) const { return 0; }
};

/// An Element that owns N objects of its class, block-distributed over the nodes (or all of them
/// on every node when global).
class DataElement final : public Element {
 public:
  /// n entries, split over the nodes of context's layout (every node holds all when global).
  DataElement(Context& context, Id id, std::string name, const Cinfo* cinfo, Id parent, Index n,
              bool global);
  ~DataElement() override;
  bool isGlobal() const override { return global_; }
  char* data(Index d, Index) const override { return localData(d); }
  Index numField(Index) const override { return 1; }
  /// Object pointer of local data index d (no checks: the hot path).
  char* localData(Index d) const {
    return base_ + static_cast<std::size_t>(d - localBegin()) * size_;
  }
  /// Start of the local objects' array.
  char* base() const { return base_; }
  /// Bytes per object.
  std::size_t objectSize() const { return size_; }
  /// The class's state for the whole Element, or nullptr (see ElementState).
  ElementState* state() const { return state_.get(); }
  /// Replaces it (between runs only: the clock's threads read it without a lock).
  void setState(std::unique_ptr<ElementState> s) const { state_ = std::move(s); }

 private:
  bool global_;
  std::size_t size_;
  char* base_ = nullptr;
  mutable std::unique_ptr<ElementState> state_;
};

/// The Element's state of class S (a class's ElementState), made with S(e) if it has none yet
/// (on the one thread that prepares the Element).
template <class S>
S* make_state(const DataElement* e) {
  if (auto* s = static_cast<S*>(e->state())) return s;
  auto made = std::make_unique<S>(e);
  S* s = made.get();
  e->setState(std::move(made));
  return s;
}

/// An Element that views an array field inside each object of its parent DataElement.
class FieldElement final : public Element {
 public:
  FieldElement(Id id, std::string name, const Cinfo* cinfo, DataElement* parent,
               const FieldElementFinfoBase* finfo);
  bool isGlobal() const override { return parentData_->isGlobal(); }
  char* data(Index d, Index f) const override;
  Index numField(Index d) const override;
  /// Sets the number of entries of the local parent d.
  void setNumField(Index d, Index n) const;
  /// Largest number of entries of any parent on any node, as last set by a sync.
  Index fieldDimension() const { return fieldDimension_; }
  void setFieldDimension(Index n) { fieldDimension_ = n; }
  const FieldElementFinfoBase* finfo() const { return finfo_; }
  DataElement* parentData() const { return parentData_; }

 private:
  DataElement* parentData_;
  const FieldElementFinfoBase* finfo_;
  Index fieldDimension_ = 0;
};

/// A simulation's table of Elements, indexed by Id (its Context owns it). Ids are never reused,
/// so a stale Id resolves to nullptr rather than to another Element.
class ElementTable {
 public:
  /// The table of `context`, holding its root element.
  explicit ElementTable(Context& context);
  Context& context() const { return *context_; }
  Element* get(Id id) const {
    return id.value < elements_.size() ? elements_[id.value].get() : nullptr;
  }
  /// Next Id that create() will hand out.
  Id nextId() const { return Id(static_cast<std::uint32_t>(elements_.size())); }
  /// Takes ownership of e (whose id must be nextId()) and links it to its parent.
  Element* insert(std::unique_ptr<Element> e);
  /// Deletes e and its whole subtree (children first).
  void erase(Id id);
  /// Deletes everything but the root.
  void clear();
  /// All live Elements, in Id order.
  std::vector<Element*> all() const;
  /// The Element's full path ("/model/neurons"), or "/<deleted:N>" if it is gone.
  std::string path(Id id) const;
  /// The object's path with indices ("/model/neurons[3]/synapse[2]").
  std::string path(const ObjId& o) const;

 private:
  Context* context_;
  std::vector<std::unique_ptr<Element>> elements_;
};

/// The object of (e, d, f) cast to T.
template <class T>
T* object(const Element* e, Index d, Index f = 0) {
  return reinterpret_cast<T*>(e->data(d, f));
}

}  // namespace antler

namespace antler {
/// [begin, end) of the data indices of e's local entries that thread t of T handles.
inline std::pair<Index, Index> thread_slice(const Element* e, unsigned t, unsigned T) {
  auto [b, end] = block_range(e->numLocal(), static_cast<int>(T), static_cast<int>(t));
  return {e->localBegin() + b, e->localBegin() + end};
}
}  // namespace antler
#pragma GCC visibility pop
