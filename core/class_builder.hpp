#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// ClassBuilder: declare an element class with one line per field.
///
///   const Cinfo* Neuron::initCinfo() {
///     static const Cinfo* c = ClassBuilder<Neuron>("Neuron", "a leaky neuron")
///         .value("Vm", &Neuron::Vm_, "membrane potential")
///         .readOnly("spikes", &Neuron::spikes_, "spikes so far")
///         .dest<&Neuron::inject>("inject", "adds current")
///         .src(Neuron::spikeOut)
///         .proc<&Neuron::process, &Neuron::reinit>()
///         .build();
///     return c;
///   }
///
/// Every value field X also gets the dest functions setX (one argument) and getX (the target a
/// Reduce message reads), as in MOOSE. The class registers itself in build(); make sure build()
/// runs at load time (e.g. `static const Cinfo* reg = Neuron::initCinfo();` in the .cpp).
#include <cctype>
#include <memory>

#include "core/block_finfo.hpp"
#include "core/cinfo.hpp"
#include "core/dest_finfo.hpp"
#include "core/field_element_finfo.hpp"
#include "core/limits.hpp"
#include "core/neutral.hpp"
#include "core/proc_finfo.hpp"
#include "core/value_finfo.hpp"

namespace antler {

namespace detail {
/// "Vm" -> "setVm", "thresh" -> "setThresh" (MOOSE's names for the value dests).
inline std::string prefixed(const char* prefix, const std::string& name) {
  std::string s = prefix + name;
  const std::size_t i = std::char_traits<char>::length(prefix);
  if (s.size() > i) s[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[i])));
  return s;
}
}  // namespace detail

/// Builds and registers the Cinfo of class T.
template <class T>
class ClassBuilder {
 public:
  /// A class named `name` deriving from `base` (Neutral by default).
  ClassBuilder(std::string name, std::string doc, const Cinfo* base = Neutral::initCinfo())
      : c_(std::make_unique<Cinfo>(std::move(name), std::move(doc), base,
                                   std::make_unique<DinfoT<T>>())) {}

  /// A value field that is a plain data member.
  template <class F>
  ClassBuilder& value(std::string name, F T::*m, std::string doc = "") {
    return addValue<F>(
        std::move(name), std::move(doc), [m](const T& o) -> F { return o.*m; },
        [m](T& o, const F& v) { o.*m = v; }, m);
  }
  /// A value field read and written by member functions.
  template <class R, class A>
  ClassBuilder& value(std::string name, R (T::*get)() const, void (T::*set)(A),
                      std::string doc = "") {
    using F = std::decay_t<R>;
    return addValue<F>(
        std::move(name), std::move(doc), [get](const T& o) -> F { return (o.*get)(); },
        [set](T& o, const F& v) { (o.*set)(v); }, nullptr);
  }
  /// A value field written by a member function whose only failure is a check of the value alone
  /// (see ValueFinfoBase::checksValueOnly): a multi-entry write checks every value first and
  /// then writes with no undo log, as a plain member's does.
  template <class R, class A>
  ClassBuilder& checkedValue(std::string name, R (T::*get)() const, void (T::*set)(A),
                             std::string doc = "") {
    using F = std::decay_t<R>;
    return addValue<F>(
        std::move(name), std::move(doc), [get](const T& o) -> F { return (o.*get)(); },
        [set](T& o, const F& v) { (o.*set)(v); }, nullptr, false, /*checksValueOnly=*/true);
  }
  /// A value field written by a member function that needs the object's Eref.
  template <class R, class A>
  ClassBuilder& value(std::string name, R (T::*get)() const, void (T::*set)(const Eref&, A),
                      std::string doc = "") {
    using F = std::decay_t<R>;
    return addValue<F>(
        std::move(name), std::move(doc), [get](const T& o) -> F { return (o.*get)(); },
        [set](const Eref& e, T& o, const F& v) { (o.*set)(e, v); }, nullptr);
  }
  /// A read-only field that is a plain data member.
  template <class F>
  ClassBuilder& readOnly(std::string name, F T::*m, std::string doc = "") {
    return addValue<F>(
        std::move(name), std::move(doc), [m](const T& o) -> F { return o.*m; }, nullptr, m);
  }
  /// A read-only field computed by a member function.
  template <class R>
  ClassBuilder& readOnly(std::string name, R (T::*get)() const, std::string doc = "") {
    using F = std::decay_t<R>;
    return addValue<F>(
        std::move(name), std::move(doc), [get](const T& o) -> F { return (o.*get)(); }, nullptr,
        nullptr);
  }
  /// A value field read and written by callables `F(const T&)` and `void(T&, const F&)` (when
  /// several fields share one rule).
  template <class F, class G, class S>
  ClassBuilder& valueFn(std::string name, G get, S set, std::string doc = "") {
    return addValue<F>(std::move(name), std::move(doc), std::move(get), std::move(set),
                       static_cast<F T::*>(nullptr));
  }
  /// A read-only field computed by a callable `F(const Eref&, const T&)`.
  template <class F, class G>
  ClassBuilder& readOnlyFn(std::string name, G get, std::string doc = "") {
    return addValue<F>(std::move(name), std::move(doc), std::move(get), nullptr, nullptr);
  }
  /// A lookup field: `F get(K) const` and (optionally) `void set(K, F)`.
  template <class R, class KG, class KS, class A>
  ClassBuilder& lookup(std::string name, R (T::*get)(KG) const, void (T::*set)(KS, A),
                       std::string doc = "") {
    using F = std::decay_t<R>;
    using K = std::decay_t<KG>;
    auto g = [get](const T& o, const K& k) -> F { return (o.*get)(k); };
    auto s = [set](T& o, const K& k, const F& v) { (o.*set)(k, v); };
    c_->add(std::make_unique<LookupValueFinfoT<T, K, F, decltype(g), decltype(s)>>(
        std::move(name), std::move(doc), g, s));
    return *this;
  }
  /// A lookup field from callables: `F get(const T&, const K&)` and `void set(T&, const K&,
  /// const F&)` (when many fields share one implementation).
  template <class K, class F, class G, class S>
  ClassBuilder& lookupFn(std::string name, G get, S set, std::string doc = "") {
    c_->add(std::make_unique<LookupValueFinfoT<T, K, F, G, S>>(std::move(name), std::move(doc), get,
                                                               set));
    return *this;
  }
  /// A read-only lookup field.
  template <class R, class KG>
  ClassBuilder& lookup(std::string name, R (T::*get)(KG) const, std::string doc = "") {
    using F = std::decay_t<R>;
    using K = std::decay_t<KG>;
    auto g = [get](const T& o, const K& k) -> F { return (o.*get)(k); };
    c_->add(std::make_unique<LookupValueFinfoT<T, K, F, decltype(g), std::nullptr_t>>(
        std::move(name), std::move(doc), g, nullptr));
    return *this;
  }
  /// A function messages can call: `void T::fn(A...)` or `void T::fn(const Eref&, A...)`.
  template <auto Fn>
  ClassBuilder& dest(std::string name, std::string doc = "") {
    c_->add(std::make_unique<DestFinfoT<Fn>>(std::move(name), std::move(doc)));
    return *this;
  }
  /// Block rounds over the Element's entries (core/block_finfo.hpp; run by the Shell's
  /// blockReduce and allToAll): a member `void T::fn(comm::ReduceProxy&, const comm::Partners&)`
  /// or `void T::fn(comm::ReduceProxy&)`, or a free function taking T& first.
  template <class Fn>
  ClassBuilder& blocks(std::string name, Fn fn, std::string doc = "") {
    static_assert(std::is_invocable_v<Fn, T&, comm::ReduceProxy&, const comm::Partners&> ||
                      std::is_invocable_v<Fn, T&, comm::ReduceProxy&>,
                  "a block function takes (ReduceProxy&, const Partners&) or (ReduceProxy&)");
    c_->add(std::make_unique<BlockFinfoT<T, Fn>>(std::move(name), std::move(doc), fn));
    return *this;
  }
  /// An outgoing message port (an inline static SrcFinfo<A...> member of T).
  ClassBuilder& src(const SrcFinfoBase& s) {
    c_->addSrc(s);
    return *this;
  }
  /// A reduce field (an inline static ReduceFinfo<T, F, R> member of T; see
  /// reduce/reduce_finfo.hpp).
  ClassBuilder& reduce(const SrcFinfoBase& r) {
    c_->addSrc(r);
    return *this;
  }
  /// The `proc` shared field: `void process(const Eref&, ProcPtr)` and `void reinit(...)`.
  template <auto Process, auto Reinit>
  ClassBuilder& proc(std::string doc = "process and reinit, called by the clock") {
    c_->add(std::make_unique<ProcFinfoT<T, Process, Reinit>>("proc", std::move(doc)));
    return *this;
  }
  /// The `init` shared field (MOOSE's init phase): the same signatures, called by the clock on
  /// the tick before proc's (Compartment sends its axial values there). No prepare/processBlock.
  template <auto Process, auto Reinit>
  ClassBuilder& init(std::string doc = "init phase: called by the clock on the tick before proc") {
    c_->add(std::make_unique<ProcFinfoT<T, Process, Reinit, false>>("init", std::move(doc)));
    return *this;
  }
  /// A shared message field: connecting it to another shared field connects these source and
  /// destination fields of the class with the other's, in order (see SharedMsgFinfo).
  ClassBuilder& shared(std::string name, std::vector<std::string> srcs,
                       std::vector<std::string> dests, std::string doc = "") {
    c_->add(std::make_unique<SharedMsgFinfo>(std::move(name), std::move(doc), std::move(srcs),
                                             std::move(dests)));
    return *this;
  }
  /// The tick a new Element of this class goes on (MOOSE's default tick; init, if the class has
  /// it, on the tick before). Unset: the base class's; none: not scheduled until useClock.
  ClassBuilder& defaultTick(int tick) {
    c_->setDefaultTick(tick);
    return *this;
  }
  /// An array field (std::vector<F> member) seen as a child FieldElement named `name`; F needs a
  /// Cinfo (F::initCinfo()). If numName is given, a value field with that name reads and sets the
  /// array's size on each object (e.g. numSynapses). An EdgeArray<F> member (core/edge_array.hpp)
  /// works the same, and lets the Sparse messages that fill it keep its entries in their order.
  template <class F>
  ClassBuilder& fieldElement(std::string name, std::vector<F> T::*m, std::string doc = "",
                             std::string numName = "") {
    return addFieldElement<F>(std::move(name), m, std::move(doc), std::move(numName));
  }
  template <class F>
  ClassBuilder& fieldElement(std::string name, EdgeArray<F> T::*m, std::string doc = "",
                             std::string numName = "") {
    return addFieldElement<F>(std::move(name), m, std::move(doc), std::move(numName));
  }
  /// The same for an array the class keeps out of line, reached through a member function.
  template <class F>
  ClassBuilder& fieldElement(std::string name, EdgeArray<F>& (T::*fn)(), std::string doc = "",
                             std::string numName = "") {
    return addFieldElement<F>(std::move(name), detail::ArrayAccess<T, EdgeArray<F>>{nullptr, fn},
                              std::move(doc), std::move(numName));
  }
  /// Adds a Finfo made elsewhere (the extension point other layers use, e.g. ReduceFinfo).
  ClassBuilder& add(std::unique_ptr<Finfo> f) {
    c_->add(std::move(f));
    return *this;
  }
  /// Registers the class and returns its Cinfo (which lives for the rest of the program).
  const Cinfo* build() {
    const Cinfo* c = c_.release();
    Cinfo::registerClass(c);
    return c;
  }

 private:
  template <class F, class Array>
  ClassBuilder& addFieldElement(std::string name, Array T::*m, std::string doc,
                                std::string numName) {
    return addFieldElement<F>(std::move(name), detail::ArrayAccess<T, Array>{m, nullptr},
                              std::move(doc), std::move(numName));
  }
  template <class F, class Array>
  ClassBuilder& addFieldElement(std::string name, detail::ArrayAccess<T, Array> m, std::string doc,
                                std::string numName) {
    auto fe =
        std::make_unique<FieldElementFinfoT<T, F, Array>>(name, std::move(doc), F::initCinfo(), m);
    fe->setNumName(numName);
    c_->add(std::move(fe));
    if (!numName.empty()) {
      const std::string op = "set " + c_->name() + "." + numName;
      addValue<unsigned>(
          std::move(numName), "number of " + name + " entries",
          [m](const T& o) -> unsigned {
            return static_cast<unsigned>(m(reinterpret_cast<char*>(const_cast<T*>(&o))).size());
          },
          [m, op](T& o, const unsigned& n) {
            check_allocation(op, F::initCinfo()->name(), n, sizeof(F));
            m(reinterpret_cast<char*>(&o)).resize(n);
          },
          nullptr, /*validatesFirst=*/true);
    }
    return *this;
  }
  template <class F, class G, class S>
  ClassBuilder& addValue(std::string name, std::string doc, G get, S set, F T::*m,
                         bool validatesFirst = false, bool checksValueOnly = false) {
    using VF = ValueFinfoT<T, F, G, S>;
    auto vf = std::make_unique<VF>(name, std::move(doc), std::move(get), std::move(set), m);
    if (validatesFirst) vf->setValidatesFirst();
    if (checksValueOnly) vf->setChecksValueOnly();
    const VF* raw = vf.get();
    c_->add(std::move(vf));
    if constexpr (!VF::kReadOnly) {
      auto setter = [raw](const Eref& e, T&, const F& v) {
        raw->write(e.element(), e.dataIndex(), e.fieldIndex(), v);
      };
      c_->add(std::make_unique<LambdaDestFinfo<T, decltype(setter), F>>(
          detail::prefixed("set", name), "sets " + name, setter));
    }
    auto getter = [](const Eref&, T&) {};
    c_->add(std::make_unique<LambdaDestFinfo<T, decltype(getter)>>(
        detail::prefixed("get", name), "reads " + name + " (target of Reduce messages)", getter,
        raw));
    return *this;
  }

  std::unique_ptr<Cinfo> c_;
};

}  // namespace antler
#pragma GCC visibility pop
