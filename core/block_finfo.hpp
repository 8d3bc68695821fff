#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// BlockFinfo: a class's block rounds, declared like any other field. The Element's entries are
/// the blocks (gid = data index); the Shell's blockReduce and allToAll (shell/blocks.hpp) run the
/// rounds of a pattern on every node and call the declared function on each local entry that
/// takes part in a round:
///
///   struct Hist {
///     std::vector<double> counts;
///     void merge(comm::ReduceProxy& rp, const comm::Partners&) {
///       for (int from : rp.in_link())
///         if (from != rp.gid()) add(rp.dequeue<std::vector<double>>(from));
///       for (int to : rp.out_link()) rp.enqueue(to, counts);
///     }
///   };
///   ClassBuilder<Hist>("Hist", "...").blocks("merge", &Hist::merge, "sums the
///   histograms").build();
///
/// The function is a member `void T::fn(ReduceProxy&, const Partners&)` (or without the
/// Partners), or a free `void fn(T&, ReduceProxy&, const Partners&)`. Blocks on one node run on
/// the clock's threads, so the function may touch its own object and its proxy only.
#include <functional>
#include <string>
#include <type_traits>

#include "core/comm/block_rounds.hpp"
#include "core/comm/partners.hpp"
#include "core/finfo.hpp"

namespace antler {

/// The untyped part: what the Shell calls.
class BlockFinfoBase : public Finfo {
 public:
  BlockFinfoBase(std::string name, std::string doc)
      : Finfo(std::move(name), std::move(doc), FinfoKind::blocks) {}
  std::string type() const override { return "(ReduceProxy&, const Partners&)"; }
  /// Calls the function on one object of the class.
  virtual void call(char* object, comm::ReduceProxy& rp, const comm::Partners& p) const = 0;
};

/// The function Fn on objects of class T.
template <class T, class Fn>
class BlockFinfoT final : public BlockFinfoBase {
 public:
  BlockFinfoT(std::string name, std::string doc, Fn fn)
      : BlockFinfoBase(std::move(name), std::move(doc)), fn_(fn) {}
  std::string type() const override {
    return kWithPartners ? "(ReduceProxy&, const Partners&)" : "(ReduceProxy&)";
  }
  void call(char* object, comm::ReduceProxy& rp, const comm::Partners& p) const override {
    T& o = *reinterpret_cast<T*>(object);
    if constexpr (kWithPartners)
      std::invoke(fn_, o, rp, p);
    else
      std::invoke(fn_, o, rp);
  }

 private:
  static constexpr bool kWithPartners =
      std::is_invocable_v<Fn, T&, comm::ReduceProxy&, const comm::Partners&>;
  Fn fn_;
};

}  // namespace antler
#pragma GCC visibility pop
