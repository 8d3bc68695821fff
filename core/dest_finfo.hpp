#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Typed DestFinfo: a member function of T that messages and the Shell call. Made by
/// ClassBuilder::dest<&T::fn>(name, doc); the function may take (A...) or (const Eref&, A...).
#include <cstring>
#include <tuple>
#include <type_traits>

#include "core/buffer.hpp"
#include "core/eref.hpp"
#include "core/finfo.hpp"
#include "core/prefetch.hpp"

namespace antler {

namespace detail {
template <class Fn>
struct member_fn;
template <class T, class... A>
struct member_fn<void (T::*)(A...)> {
  using cls = T;
  static constexpr bool with_eref = false;
  using args = std::tuple<std::decay_t<A>...>;
};
template <class T, class... A>
struct member_fn<void (T::*)(const Eref&, A...)> {
  using cls = T;
  static constexpr bool with_eref = true;
  using args = std::tuple<std::decay_t<A>...>;
};

template <class Tuple>
struct unpack;
template <class... A>
struct unpack<std::tuple<A...>> {
  static constexpr bool trivial = (std::is_trivially_copyable_v<A> && ...);
  static std::tuple<A...> read(Reader& r) { return std::tuple<A...>{r.get<A>()...}; }
  /// Arguments packed back to back (trivially copyable types only), without bounds checks: the
  /// caller checked the record size against the port's when it parsed the batch.
  static std::tuple<A...> load(const char* p) {
    std::tuple<A...> t;
    std::apply([&](A&... x) { ((std::memcpy(&x, p, sizeof(A)), p += sizeof(A)), ...); }, t);
    return t;
  }
  static std::tuple<A...> read(const char* p, std::size_t n) {
    if constexpr (trivial) {
      if (n >= (0 + ... + sizeof(A))) return load(p);
    }
    Reader r(p, n);
    return read(r);
  }
  static const std::vector<const std::type_info*>& types() {
    static const std::vector<const std::type_info*> t = type_infos<A...>();
    return t;
  }
};
}  // namespace detail

/// Optional, for a dest function that a Sparse message delivers through its store
/// (core/edge_array.hpp): what the call will touch beyond the entry and its parent object,
/// fetched a few targets ahead. Specialise it next to the class, e.g.
///   template <> struct DestPrefetch<&MySynapse::addSpike> {
///     static void fetch(const Eref& e, const MySynapse& s, double time);
///   };
/// fetch must only read (and may assume nothing the call would check: it is a hint). Add
/// `static constexpr bool kParent = false;` when the call does not read the parent object, so
/// that it is not fetched either, and `static bool active(const Element* dest)` when only some
/// destinations want fetch (asked once per delivery, not per target). Add
/// `static constexpr bool kFieldIndex = false;` when the call (and fetch) never read the Eref's
/// field index: the message then need not keep the entries' field indices (4 bytes per entry),
/// and the Eref carries Eref::kNoField.
template <auto Fn>
struct DestPrefetch {};

/// Optional, for a dest function that a Sparse message delivers through its store: a run of
/// live slots of one row (the objects contiguous, the targets' data indices beside them) in one
/// call, for a class whose per-call work (finding its Element's state, the thread's queue) is the
/// same for every target of the run. Specialise it next to the class, e.g.
///   template <> struct DestRun<&Synapse::addSpike> {
///     static bool accepts(const Element* dest);  // asked once per delivery
///     static void call(const Element* dest, const Index* data, const Synapse* objs,
///                      std::size_t n, double time);
///   };
/// call must do what calling Fn on each target in order would (so the results are the same).
template <auto Fn>
struct DestRun {};

/// The DestFinfo of member function Fn.
template <auto Fn>
class DestFinfoT final : public DestFinfoBase {
  using traits = detail::member_fn<decltype(Fn)>;
  using T = typename traits::cls;
  using Args = typename traits::args;

  static void invoke(const Element* e, Index d, Index f, T& obj, const Args& a) {
    std::apply(
        [&](const auto&... x) {
          if constexpr (traits::with_eref)
            (obj.*Fn)(Eref(e, d, f), x...);
          else
            (obj.*Fn)(x...);
        },
        a);
  }
  void checkField(const Element* dest, Index d, Index f) const {
    if (f >= dest->numField(d))
      throw IndexError(name() + ": no entry " + std::to_string(f) + " in " + dest->path() + "[" +
                       std::to_string(d) + "], which has " + std::to_string(dest->numField(d)) +
                       " entries");
  }

 public:
  using DestFinfoBase::DestFinfoBase;
  const std::vector<const std::type_info*>& argTypes() const override {
    return detail::unpack<Args>::types();
  }
  void call(const Element* e, Index d, Index f, Reader& r) const override {
    const Args a = detail::unpack<Args>::read(r);
    invoke(e, d, f, *reinterpret_cast<T*>(e->data(d, f)), a);
  }
  void callTargets(const Element* dest, const char* args, std::size_t argBytes, const Index* data,
                   const Index* field, std::size_t n) const override {
    const Args a = detail::unpack<Args>::read(args, argBytes);
    if (!dest->isField()) {
      auto* de = static_cast<const DataElement*>(dest);
      for (std::size_t i = 0; i < n; ++i)
        invoke(dest, data[i], 0, *reinterpret_cast<T*>(de->localData(data[i])), a);
    } else {
      for (std::size_t i = 0; i < n; ++i) {
        const Index f = field ? field[i] : 0;
        checkField(dest, data[i], f);
        invoke(dest, data[i], f, *reinterpret_cast<T*>(dest->data(data[i], f)), a);
      }
    }
  }
  void callEdges(const Element* dest, const char* args, std::size_t argBytes, const Index* data,
                 std::size_t n, const EdgeStoreBase& s, std::size_t slot0,
                 const FieldIndices& fields, std::size_t entry0) const override {
    const Args a = detail::unpack<Args>::read(args, argBytes);
    // The slots are read in order; the parents are fetched 2 * kAhead targets ahead, and what
    // the call reaches through them (DestPrefetch::fetch, where a class declares it) kAhead targets
    // ahead.
    const DataElement* parent = static_cast<const FieldElement*>(dest)->parentData();
    constexpr std::size_t kAhead = 8;
    constexpr bool kHook = requires {
      &DestPrefetch<Fn>::fetch;
    };
    constexpr bool kParent = [] {
      if constexpr (requires { DestPrefetch<Fn>::kParent; })
        return DestPrefetch<Fn>::kParent;
      else
        return true;
    }();
    constexpr bool kField = [] {
      if constexpr (requires { DestPrefetch<Fn>::kFieldIndex; })
        return DestPrefetch<Fn>::kFieldIndex;
      else
        return true;
    }();
    // The field indices, when the call reads them (else the message need not build them).
    const Index* field = kField ? fields.fieldIndices() + entry0 : nullptr;
    auto fieldOf = [&](std::size_t i) { return kField ? field[i] : Eref::kNoField; };
    // A hook may say, once per call, whether this destination wants it at all.
    bool hookOn = kHook;
    if constexpr (requires { DestPrefetch<Fn>::active(dest); })
      hookOn = DestPrefetch<Fn>::active(dest);
    // Runs of live slots in one call, where the class takes them (and wants no fetch per target).
    constexpr bool kRun = requires {
      DestRun<Fn>::accepts(dest);
    };
    bool runOn = false;
    if constexpr (kRun) runOn = !hookOn && DestRun<Fn>::accepts(dest);
    auto hook = [&](std::size_t j) {
      if constexpr (kHook) {
        const char* ahead = s.object(slot0 + j);
        if (s.live(slot0 + j))
          std::apply(
              [&](const auto&... x) {
                DestPrefetch<Fn>::fetch(Eref(dest, data[j], fieldOf(j)),
                                        *reinterpret_cast<const T*>(ahead), x...);
              },
              a);
      }
    };
    // A row starts cold: ask for its first parents, then for what the first calls reach.
    if constexpr (kParent)
      for (std::size_t j = 0; j < std::min(n, 2 * kAhead); ++j)
        prefetch(parent->localData(data[j]));
    if constexpr (kHook)
      if (hookOn)
        for (std::size_t j = 0; j < std::min(n, kAhead); ++j) hook(j);
    // The slots' live bits are read a word at a time: a run of slots up to the next multiple
    // of 64 that are all live (the rule) is called without a test per slot.
    for (std::size_t i = 0; i < n;) {
      const std::size_t k = slot0 + i;
      const std::size_t end = std::min(n, i + (64 - (k & 63)));
      const bool all = s.allLive(k, end - i);
      if constexpr (kRun) {
        if (runOn && all) {
          std::apply(
              [&](const auto&... x) {
                DestRun<Fn>::call(dest, data + i, reinterpret_cast<const T*>(s.object(k)), end - i,
                                  x...);
              },
              a);
          i = end;
          continue;
        }
      }
      for (; i < end; ++i) {
        if constexpr (kParent)
          if (i + 2 * kAhead < n) prefetch(parent->localData(data[i + 2 * kAhead]));
        if constexpr (kHook)
          if (hookOn && i + kAhead < n) hook(i + kAhead);
        char* obj = s.object(slot0 + i);
        Index f = fieldOf(i);
        if (!all && !s.live(slot0 + i)) [[unlikely]] {
          // The entry is its parent's array's own again (or gone): reach it by its field index.
          f = fields.fieldIndices()[entry0 + i];
          checkField(dest, data[i], f);
          obj = dest->data(data[i], f);
        }
        invoke(dest, data[i], f, *reinterpret_cast<T*>(obj), a);
      }
    }
  }
  void callDense(const Element* dest, const char* args, std::size_t stride, Index first,
                 std::size_t n) const override {
    auto* de = static_cast<const DataElement*>(dest);
    T* obj = reinterpret_cast<T*>(de->localData(first));
    if constexpr (detail::unpack<Args>::trivial) {
      for (std::size_t i = 0; i < n; ++i)
        invoke(dest, first + static_cast<Index>(i), 0, obj[i],
               detail::unpack<Args>::load(args + i * stride));
    } else {
      for (std::size_t i = 0; i < n; ++i)
        invoke(dest, first + static_cast<Index>(i), 0, obj[i],
               detail::unpack<Args>::read(args + i * stride, stride));
    }
  }
  void callRange(const Element* dest, const char* args, std::size_t argBytes, Index lo,
                 Index hi) const override {
    const Args a = detail::unpack<Args>::read(args, argBytes);
    if (!dest->isField()) {
      auto* de = static_cast<const DataElement*>(dest);
      for (Index d = lo; d < hi; ++d)
        invoke(dest, d, 0, *reinterpret_cast<T*>(de->localData(d)), a);
    } else {
      for (Index d = lo; d < hi; ++d) {
        const Index nf = dest->numField(d);
        for (Index f = 0; f < nf; ++f)
          invoke(dest, d, f, *reinterpret_cast<T*>(dest->data(d, f)), a);
      }
    }
  }
};

/// A DestFinfo made from a callable `void(const Eref&, T&, const A&...)` (used for setX).
template <class T, class Fn, class... A>
class LambdaDestFinfo final : public DestFinfoBase {
 public:
  LambdaDestFinfo(std::string name, std::string doc, Fn fn,
                  const ValueFinfoBase* getterOf = nullptr)
      : DestFinfoBase(std::move(name), std::move(doc)), fn_(std::move(fn)), getterOf_(getterOf) {}
  const std::vector<const std::type_info*>& argTypes() const override {
    return detail::unpack<std::tuple<A...>>::types();
  }
  const ValueFinfoBase* getterOf() const override { return getterOf_; }
  void callDense(const Element* dest, const char* args, std::size_t stride, Index first,
                 std::size_t n) const override {
    for (std::size_t i = 0; i < n; ++i) {
      const auto a = detail::unpack<std::tuple<A...>>::read(args + i * stride, stride);
      apply(dest, first + static_cast<Index>(i), 0, a);
    }
  }
  void call(const Element* e, Index d, Index f, Reader& r) const override {
    const auto a = detail::unpack<std::tuple<A...>>::read(r);
    apply(e, d, f, a);
  }
  void callTargets(const Element* dest, const char* args, std::size_t argBytes, const Index* data,
                   const Index* field, std::size_t n) const override {
    Reader r(args, argBytes);
    const auto a = detail::unpack<std::tuple<A...>>::read(r);
    for (std::size_t i = 0; i < n; ++i) {
      const Index f = field ? field[i] : 0;
      if (f >= dest->numField(data[i]))
        throw IndexError(name() + ": no entry " + std::to_string(f) + " in " + dest->path() + "[" +
                         std::to_string(data[i]) + "]");
      apply(dest, data[i], f, a);
    }
  }
  void callRange(const Element* dest, const char* args, std::size_t argBytes, Index lo,
                 Index hi) const override {
    Reader r(args, argBytes);
    const auto a = detail::unpack<std::tuple<A...>>::read(r);
    for (Index d = lo; d < hi; ++d) {
      const Index nf = dest->numField(d);
      for (Index f = 0; f < nf; ++f) apply(dest, d, f, a);
    }
  }

 private:
  void apply(const Element* e, Index d, Index f, const std::tuple<A...>& a) const {
    T& obj = *reinterpret_cast<T*>(e->data(d, f));
    std::apply([&](const A&... x) { fn_(Eref(e, d, f), obj, x...); }, a);
  }
  Fn fn_;
  const ValueFinfoBase* getterOf_;
};

}  // namespace antler
#pragma GCC visibility pop
