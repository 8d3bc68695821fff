#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Finfo: one declared field of a class. This header holds the type-erased bases of every kind;
/// the typed implementations live in value_finfo.hpp, dest_finfo.hpp, proc_finfo.hpp and
/// field_element_finfo.hpp, and are made for you by ClassBuilder.
#include <cstddef>
#include <memory>
#include <string>
#include <typeinfo>
#include <vector>

#include "core/edge_array.hpp"
#include "core/fwd.hpp"
#include "core/type_name.hpp"

namespace antler {

/// The kinds of field a class can declare.
enum class FinfoKind : std::uint8_t {
  value,          ///< get + set
  readOnlyValue,  ///< get only
  lookupValue,    ///< get/set with a key
  dest,           ///< a function messages (and the Shell) can call
  src,            ///< an outgoing message port
  shared,         ///< a bundle of functions (e.g. proc = process + reinit)
  fieldElement,   ///< an array field viewed as a child Element
  reduce,         ///< a reduction requested by this object
  blocks,         ///< block rounds over the Element's entries (core/block_finfo.hpp)
};

/// "value", "dest", ...
const char* to_string(FinfoKind k);

/// Base of all Finfos.
class Finfo {
 public:
  Finfo(std::string name, std::string doc, FinfoKind kind)
      : name_(std::move(name)), doc_(std::move(doc)), kind_(kind) {}
  virtual ~Finfo() = default;
  const std::string& name() const { return name_; }
  const std::string& doc() const { return doc_; }
  FinfoKind kind() const { return kind_; }
  /// Readable type: the value type, or the argument list of a function.
  virtual std::string type() const = 0;

 private:
  std::string name_, doc_;
  FinfoKind kind_;
};

/// A ValueFinfo or ReadOnlyValueFinfo: a typed field read (and written) on one object.
class ValueFinfoBase : public Finfo {
 public:
  using Finfo::Finfo;
  bool readOnly() const { return kind() == FinfoKind::readOnlyValue; }
  /// The C++ type of the value.
  virtual const std::type_info& valueType() const = 0;
  std::string type() const override { return type_name(valueType()); }
  /// Appends the value of local object (d, f) of e.
  virtual void get(const Element* e, Index d, Index f, Writer& w) const = 0;
  /// Sets the value of local object (d, f) of e from r.
  virtual void set(const Element* e, Index d, Index f, Reader& r) const = 0;
  /// Appends the values of every local entry with data index in [lo, hi), in order (every field
  /// entry of those parents for a FieldElement). A plain member of a DataElement is copied in one
  /// strided loop: this is what vec.Vm reads.
  virtual void getRange(const Element* e, Index lo, Index hi, Writer& w) const = 0;
  /// Reads one value from r and drops it.
  virtual void skip(Reader& r) const = 0;
  /// True if the field is a plain data member: then *offset is its byte offset in the object,
  /// measured on the object at `sample` (so the reduce loop can read it as a strided load).
  virtual bool memberOffset(const char* sample, std::ptrdiff_t* offset) const = 0;
  /// True if setting the field only assigns a plain data member: it cannot fail or have effects
  /// beyond that member, so a multi-entry write needs no undo log (see Shell setVec).
  virtual bool assignsOnly() const = 0;
  /// Reads n values from r and runs the field's setter on each, on a scratch object of the
  /// class (never on a real one): throws what a real write would throw for a value the setter
  /// refuses. Setters that need the object's Eref are not run (their values are only skipped).
  virtual void validate(Reader& r, std::uint64_t n) const = 0;
  /// True if a multi-entry write must validate every value before writing any: the setter cannot
  /// be undone by setting the old value again (a count that resizes an array loses the entries
  /// it cut). Other setters are undone from the undo log.
  bool validatesFirst() const { return validatesFirst_; }
  void setValidatesFirst() { validatesFirst_ = true; }
  /// True if the setter's only failure is a check of the value alone (a range), made before it
  /// changes anything: a multi-entry write validates every value first, which proves that every
  /// write will succeed, and then writes with no undo log (ClassBuilder::checkedValue).
  bool checksValueOnly() const { return checksValueOnly_; }
  void setChecksValueOnly() { checksValueOnly_ = true; }
  /// Writes values from r to the local entries [lo, hi) of a DataElement in one loop, appending
  /// each old value to `undo` first (if given) and counting the entries written in `written` (so
  /// that a failure part-way leaves a record of what to put back).
  virtual void writeRange(const Element* e, Index lo, Index hi, Reader& r, ByteBuffer* undo,
                          std::uint64_t& written) const = 0;

 private:
  bool validatesFirst_ = false;
  bool checksValueOnly_ = false;
};

/// A field read and written with a key (e.g. a table entry by index).
class LookupValueFinfoBase : public Finfo {
 public:
  LookupValueFinfoBase(std::string name, std::string doc)
      : Finfo(std::move(name), std::move(doc), FinfoKind::lookupValue) {}
  virtual const std::type_info& keyType() const = 0;
  virtual const std::type_info& valueType() const = 0;
  std::string type() const override { return type_name(keyType()) + "->" + type_name(valueType()); }
  virtual void get(const Element* e, Index d, Index f, Reader& key, Writer& w) const = 0;
  virtual void set(const Element* e, Index d, Index f, Reader& key, Reader& value) const = 0;
  virtual bool hasSetter() const = 0;
};

/// The field indices of a Sparse message's entries (msg/msg.hpp), which it does not keep beside
/// its data indices: built on the first call (thread-safe), 4 bytes per entry from then on.
class FieldIndices {
 public:
  /// Entry k's field index is fieldIndices()[k].
  virtual const Index* fieldIndices() const = 0;

 protected:
  ~FieldIndices() = default;
};

/// A function that messages and the Shell can call.
///
/// Arguments arrive packed by Codec (memcpy for trivially copyable types). callTargets and
/// callRange are what message delivery uses: one virtual call per batch of targets, the loop over
/// targets inlined in the typed implementation.
class DestFinfoBase : public Finfo {
 public:
  DestFinfoBase(std::string name, std::string doc)
      : Finfo(std::move(name), std::move(doc), FinfoKind::dest) {}
  /// The argument types, in order.
  virtual const std::vector<const std::type_info*>& argTypes() const = 0;
  std::string type() const override { return type_list_name(argTypes()); }
  /// Calls the function on one local object with arguments read from r.
  virtual void call(const Element* e, Index d, Index f, Reader& r) const = 0;
  /// Calls the function with the same packed arguments on each local target of dest: target i is
  /// data entry data[i], field entry field[i] (field == nullptr: entry 0, a DataElement's).
  virtual void callTargets(const Element* dest, const char* args, std::size_t argBytes,
                           const Index* data, const Index* field, std::size_t n) const = 0;
  /// callTargets for targets whose objects a Sparse message keeps in its store (target i is
  /// slot slot0 + i of s: core/edge_array.hpp). The message keeps only the data indices; a call
  /// that needs a target's field index (a slot no longer live goes through dest; an Eref's
  /// field) asks `fields` for entry entry0 + i's.
  virtual void callEdges(const Element* dest, const char* args, std::size_t argBytes,
                         const Index* data, std::size_t n, const EdgeStoreBase& /*s*/,
                         std::size_t /*slot0*/, const FieldIndices& fields,
                         std::size_t entry0) const {
    callTargets(dest, args, argBytes, data, fields.fieldIndices() + entry0, n);
  }
  /// Calls the function on every local entry with data index in [lo, hi) (all field entries of
  /// those parents when dest is a FieldElement).
  virtual void callRange(const Element* dest, const char* args, std::size_t argBytes, Index lo,
                         Index hi) const = 0;
  /// Calls the function on local data entries first, first + 1, ..., first + n - 1 of a
  /// DataElement, entry i with the arguments packed at args + i * stride (a dense batch).
  virtual void callDense(const Element* dest, const char* args, std::size_t stride, Index first,
                         std::size_t n) const = 0;
  /// For the "getX" function that every value field provides: that field; else nullptr.
  virtual const ValueFinfoBase* getterOf() const { return nullptr; }
};

/// An outgoing message port. Declare one as an inline static member of your class (see
/// msg/src_finfo.hpp) and add it to the class with ClassBuilder::src.
class SrcFinfoBase : public Finfo {
 public:
  SrcFinfoBase(std::string name, std::string doc, FinfoKind kind = FinfoKind::src)
      : Finfo(std::move(name), std::move(doc), kind) {}
  virtual const std::vector<const std::type_info*>& argTypes() const = 0;
  std::string type() const override { return type_list_name(argTypes()); }
  /// Bytes of one packed argument list if fixed (all trivially copyable), else -1.
  virtual std::ptrdiff_t fixedArgBytes() const = 0;
  /// Index of this port's connection list in every Element of the class.
  unsigned bindIndex() const { return bindIndex_; }
  /// Assigned once, by the first class that adds the port (derived classes inherit it).
  void setBindIndex(unsigned i) const { bindIndex_ = i; }
  bool hasBindIndex() const { return bindIndex_ != ~0u; }

 private:
  mutable unsigned bindIndex_ = ~0u;
};

/// The clock's entry points into a class: process and reinit over a contiguous slice.
class ProcFinfoBase : public Finfo {
 public:
  ProcFinfoBase(std::string name, std::string doc)
      : Finfo(std::move(name), std::move(doc), FinfoKind::shared) {}
  std::string type() const override { return "process,reinit"; }
  /// Runs process on local data entries [lo, hi) of e.
  virtual void process(const Element* e, Index lo, Index hi, const ProcInfo& p) const = 0;
  /// Runs reinit on local data entries [lo, hi) of e.
  virtual void reinit(const Element* e, Index lo, Index hi, const ProcInfo& p) const = 0;
  /// Called by the clock on one thread before a run's threads start (reinit: true for the
  /// reinit round), once per scheduled Element, with the ProcInfo of its tick (currTime: the
  /// time the run starts at). A class that keeps state for the whole Element sets it up here.
  virtual void prepare(const Element* /*e*/, const ProcInfo& /*p*/, bool /*reinit*/) const {}
};

/// A shared message field (MOOSE's SharedFinfo): named source and destination fields of the
/// class that one connect pairs with those of another shared field, in order: the first's
/// sources with the second's destinations, and the second's sources with the first's
/// destinations (Compartment's raxial and axial, for instance).
class SharedMsgFinfo : public Finfo {
 public:
  SharedMsgFinfo(std::string name, std::string doc, std::vector<std::string> srcs,
                 std::vector<std::string> dests)
      : Finfo(std::move(name), std::move(doc), FinfoKind::shared),
        srcs_(std::move(srcs)),
        dests_(std::move(dests)) {}
  std::string type() const override;
  const std::vector<std::string>& srcs() const { return srcs_; }
  const std::vector<std::string>& dests() const { return dests_; }

 private:
  std::vector<std::string> srcs_, dests_;
};

/// An array field of each object, seen as a child FieldElement (e.g. IntFire's synapse).
class FieldElementFinfoBase : public Finfo {
 public:
  FieldElementFinfoBase(std::string name, std::string doc, const Cinfo* fieldCinfo)
      : Finfo(std::move(name), std::move(doc), FinfoKind::fieldElement), fieldCinfo_(fieldCinfo) {}
  /// Class of the entries.
  const Cinfo* fieldCinfo() const { return fieldCinfo_; }
  /// The parent's value field holding the entry count ("numSynapses" for "synapse"), or "".
  const std::string& numName() const { return numName_; }
  void setNumName(std::string n) { numName_ = std::move(n); }
  std::string type() const override;
  /// Entries held by the parent object.
  virtual Index getNum(const char* parent) const = 0;
  /// Resizes the parent object's array.
  virtual void setNum(char* parent, Index n) const = 0;
  /// Entry i of the parent object's array (i < getNum).
  virtual char* lookup(char* parent, Index i) const = 0;
  /// For an EdgeArray member (core/edge_array.hpp): a store of n entries that a Sparse message
  /// fills and lends to the parents' arrays; nullptr for a plain std::vector member.
  virtual std::unique_ptr<EdgeStoreBase> makeEdgeStore(std::size_t /*n*/) const { return nullptr; }
  /// Whether makeEdgeStore makes one.
  virtual bool hasEdgeStore() const { return false; }
  /// Entries f[0..n) of the parent's array become slots slot[0..n) of s (taking the values).
  virtual void lend(char* /*parent*/, const Index* /*f*/, const std::uint64_t* /*slot*/,
                    std::size_t /*n*/, EdgeStoreBase& /*s*/) const {}
  /// Before lending to several parents: parents[k]'s array will hold sizes[k] entries (more than
  /// now). Their entry vectors are regrown together, all set aside and then all allocated again,
  /// so that the new ones reuse the old ones' space (freed one at a time as each array grew,
  /// they would stay resident as holes between the new ones: tens of bytes per synapse).
  virtual void reserve(char* const* /*parents*/, const std::size_t* /*sizes*/,
                       std::size_t /*n*/) const {}
  /// Those of entries f[0..n) that are still slots slot[0..n) of s take their values back.
  virtual void unlend(char* /*parent*/, const Index* /*f*/, const std::uint64_t* /*slot*/,
                      std::size_t /*n*/, EdgeStoreBase& /*s*/) const {}
  /// Between runs: the parent's array drops its entries' addresses if all its entries are slots
  /// of s (EdgeArray::compact); whether it did.
  virtual bool compact(char* /*parent*/, EdgeStoreBase& /*s*/) const { return false; }
  /// The addresses compact dropped, rebuilt from the slots of s that the parent's entries are
  /// (EdgeArray::restore; f and slot as lend had them).
  virtual void restore(char* /*parent*/, const Index* /*f*/, const std::uint64_t* /*slot*/,
                       std::size_t /*n*/, EdgeStoreBase& /*s*/) const {}

 private:
  const Cinfo* fieldCinfo_;
  std::string numName_;
};

}  // namespace antler
#pragma GCC visibility pop
