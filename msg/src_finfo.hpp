#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// SrcFinfo<A...>: an outgoing message port. Declare it as an inline static member of your class
/// and add it with ClassBuilder::src:
///
///   class IntFire {
///    public:
///     inline static SrcFinfo<double> spikeOut{"spikeOut", "sends the spike time"};
///     void process(const Eref& e, ProcPtr p) { ... spikeOut.send(e, p->currTime); }
///   };
///
/// send() queues the arguments on the calling thread's outbox; they are delivered to every
/// connected destination before the next process phase (see msg/post_office.hpp).
///
/// A class whose process sends one message from every object every step (a compartment's Vm, a
/// benchmark's sender) can instead return the value from process and register it with
/// proc_sending (below): the clock's loop over a slice then writes the slice's messages as one
/// batch (SrcFinfo::sendEach), with no per-message checks.
#include <cstring>
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>

#include "core/element.hpp"
#include "core/eref.hpp"
#include "core/finfo.hpp"
#include "core/proc_finfo.hpp"
#include "msg/post_office.hpp"

namespace antler {

namespace detail {
template <class... A>
struct send_value {
  using type = std::tuple<A...>;
};
template <class A>
struct send_value<A> {
  using type = A;
};
}  // namespace detail

template <class... A>
class SrcFinfo final : public SrcFinfoBase {
 public:
  SrcFinfo(std::string name, std::string doc) : SrcFinfoBase(std::move(name), std::move(doc)) {}
  const std::vector<const std::type_info*>& argTypes() const override {
    static const std::vector<const std::type_info*> t = type_infos<A...>();
    return t;
  }
  std::ptrdiff_t fixedArgBytes() const override {
    if constexpr ((std::is_trivially_copyable_v<A> && ...))
      return static_cast<std::ptrdiff_t>((0 + ... + sizeof(A)));
    else
      return -1;
  }
  /// Sends (a...) from object e to every destination connected to this port.
  void send(const Eref& e, const A&... a) const {
    if (Outbox* ob = PostOffice::current())
      if (ob->extendDense(e.element()->id().value, bindIndex(), e.dataIndex(), e.fieldIndex(),
                          a...))
        return;
    if (!e.element()->hasConns(bindIndex())) return;
    PostOffice::outbox(*e.element())
        .append(e.element()->id().value, bindIndex(), e.dataIndex(), e.fieldIndex(), a...);
  }

  /// What arg(i) of sendEach returns: the argument, or a std::tuple of them for several.
  using Value = typename detail::send_value<A...>::type;

  /// The bulk send: one message from each object lo, lo + 1, ..., hi - 1 of data Element e, in that
  /// order, object i's carrying arg(i) (a Value). The same messages in the same order as
  /// send(Eref(e, i), arg(i)) for each i; during a process phase they are written as one dense
  /// batch. arg is called exactly once per object, in order, whether or not anything is connected,
  /// and must not send (MsgError if it does).
  template <class F>
  void sendEach(const Element* e, Index lo, Index hi, F&& arg) const {
    if (lo >= hi) return;
    Outbox* const ob = PostOffice::current();
    const bool connected = e->hasConns(bindIndex());
    if constexpr ((std::is_trivially_copyable_v<A> && ...)) {
      if (ob && connected && !e->isField()) {
        constexpr std::uint32_t rec = padded((0 + ... + sizeof(A)));
        char* p = ob->reserveDense(e->id().value, bindIndex(), lo, hi - lo, rec);
        try {
          BulkGuard g(ob, name());
          for (Index i = lo; i < hi; ++i, p += rec) store(p, static_cast<Value>(arg(i)));
        } catch (...) {
          ob->rewind(p);  // keep the messages of the objects before the one that threw
          throw;
        }
        return;
      }
    }
    if (!connected) {
      BulkGuard g(ob, name());
      for (Index i = lo; i < hi; ++i) (void)arg(i);
      return;
    }
    // Outside a process phase, or arguments that are not plain bytes: one send per object.
    for (Index i = lo; i < hi; ++i) {
      std::optional<Value> v;
      {
        BulkGuard g(ob, name());
        v.emplace(arg(i));
      }
      if constexpr (sizeof...(A) == 1)
        send(Eref(e, i), *v);
      else
        std::apply([&](const A&... a) { send(Eref(e, i), a...); }, *v);
    }
  }

 private:
  /// While alive, sends from the calling thread throw (see PostOffice::setBulkPort).
  struct BulkGuard {
    Outbox* ob;
    BulkGuard(Outbox* o, const std::string& port) : ob(o) {
      PostOffice::setCurrent(nullptr);
      PostOffice::setBulkPort(port.c_str());
    }
    ~BulkGuard() {
      PostOffice::setBulkPort(nullptr);
      PostOffice::setCurrent(ob);
    }
    BulkGuard(const BulkGuard&) = delete;
    BulkGuard& operator=(const BulkGuard&) = delete;
  };
  /// Writes one record's arguments (packed, as Outbox::append does).
  static void store(char* p, const Value& v) {
    if constexpr (sizeof...(A) == 1) {
      std::memcpy(p, &v, sizeof v);
    } else {
      std::apply([&](const A&... a) { ((std::memcpy(p, &a, sizeof(A)), p += sizeof(A)), ...); }, v);
    }
  }
};

namespace detail {
template <class M>
struct member_class;
template <class R, class C, class... X>
struct member_class<R (C::*)(X...)> {
  using type = C;
};
}  // namespace detail

/// The `proc` shared field of a class whose process returns what each object sends on `port`
/// every step (see proc_sending).
template <class T, auto Process, auto Reinit, class... A>
class SendingProcFinfo final : public ProcFinfoBase {
 public:
  SendingProcFinfo(const SrcFinfo<A...>& port, std::string doc)
      : ProcFinfoBase("proc", std::move(doc)), port_(port) {}
  void process(const Element* e, Index lo, Index hi, const ProcInfo& p) const override {
    T* base = reinterpret_cast<T*>(static_cast<const DataElement*>(e)->localData(lo));
    port_.sendEach(e, lo, hi, [&](Index i) { return (base[i - lo].*Process)(Eref(e, i), &p); });
  }
  void reinit(const Element* e, Index lo, Index hi, const ProcInfo& p) const override {
    T* base = reinterpret_cast<T*>(static_cast<const DataElement*>(e)->localData(lo));
    for (Index i = lo; i < hi; ++i) (base[i - lo].*Reinit)(Eref(e, i), &p);
  }

 private:
  const SrcFinfo<A...>& port_;
};

/// The `proc` field for a class that sends one message from every object every step:
/// `V process(const Eref&, ProcPtr)` returns what the object sends on `port` (its argument, or a
/// std::tuple for several) and does not call send itself; `void reinit(const Eref&, ProcPtr)` as
/// for ClassBuilder::proc. Add the port with src() as usual:
///
///   .src(Neuron::VmOut)
///   .add(proc_sending<&Neuron::process, &Neuron::reinit>(Neuron::VmOut))
template <auto Process, auto Reinit, class... A>
std::unique_ptr<ProcFinfoBase> proc_sending(
    const SrcFinfo<A...>& port,
    std::string doc = "process (returns what each object sends) and reinit, called by the clock") {
  using T = typename detail::member_class<decltype(Process)>::type;
  return std::make_unique<SendingProcFinfo<T, Process, Reinit, A...>>(port, std::move(doc));
}

}  // namespace antler
#pragma GCC visibility pop
