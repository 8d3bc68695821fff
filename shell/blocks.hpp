#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Block rounds over the entries of an Element (DIY's merge, swap, broadcast, all-reduce and
/// all-to-all; core/comm/block_rounds.hpp runs them, core/comm/partners.hpp says who talks to
/// whom). The blocks are the entries of a DataElement of any class: gid = data index, held by the
/// node that holds the entry; a node's blocks run on the clock's threads.
///
/// Two ways in:
///   - From a script or a driver program (any node count): declare the function on the class
///     (ClassBuilder::blocks, core/block_finfo.hpp) and call Shell::blockReduce or
///     Shell::allToAll with its name; every node runs the rounds over its own entries.
///   - From C++ code that every node runs at the same time (an extension command, a plain
///     program that makes a Simulation on every rank): the templates below, with any callable.
///
///   blocks::reduce<Hist>(element, comm::Partners::allReduce(comm::BlockGrid::line(n), 4),
///       [](Hist& h, comm::ReduceProxy& rp, const comm::Partners&) { ... });
///
/// Results are the same for any split of the entries over nodes and threads (every block sees
/// the same messages in the same order); messages between entries on one node never touch MPI.
/// Not while the clock runs. Errors (a global or field element, a grid whose block count is not
/// the element's entry count, a callback that throws on any node) are raised on every node.
#include <functional>

#include "core/block_finfo.hpp"
#include "core/cinfo.hpp"
#include "core/comm/block_rounds.hpp"
#include "core/comm/partners.hpp"
#include "core/element.hpp"

namespace antler {
class Simulation;
}

namespace antler::blocks {

/// The node that holds each entry of e (its block distribution), as BlockOwners. e must be a
/// DataElement that is not global.
comm::BlockOwners owners(const Element& e, const char* op = "blocks");

/// The untyped runners: fn(object, proxy) on each local entry active in each round.
using ObjectFn = std::function<void(char* object, comm::ReduceProxy&)>;
void run(const Element& e, const comm::Partners& p, const ObjectFn& fn, const char* op);
void run_all_to_all(const Element& e, int k, const ObjectFn& fn, const char* op);

namespace detail {
template <class T>
void check_class(const Element& e, const char* op) {
  if (!dynamic_cast<const DinfoT<T>*>(&e.cinfo()->dinfo()))
    throw TypeError(std::string(op) + ": " + e.path() + " holds " + e.cinfo()->name() +
                        " objects, not the callback's block type",
                    e.cinfo()->name(), "another C++ type");
}
}  // namespace detail

/// Runs the rounds of p over e's entries: cb(T& block, ReduceProxy&, const Partners&) for each
/// of this node's entries active in each round. Every node calls it together.
template <class T, class F>
void reduce(const Element& e, const comm::Partners& p, F&& cb) {
  detail::check_class<T>(e, "blocks::reduce");
  run(
      e, p, [&](char* o, comm::ReduceProxy& rp) { cb(*reinterpret_cast<T*>(o), rp, p); },
      "blocks::reduce");
}

/// DIY's all_to_all over e's entries: cb(T& block, ReduceProxy&) once with every gid as the
/// out-link (round 0), once with every gid as the in-link (round 1), k-ary rounds between.
template <class T, class F>
void all_to_all(const Element& e, F&& cb, int k = 2) {
  detail::check_class<T>(e, "blocks::all_to_all");
  run_all_to_all(
      e, k, [&](char* o, comm::ReduceProxy& rp) { cb(*reinterpret_cast<T*>(o), rp); },
      "blocks::all_to_all");
}

}  // namespace antler::blocks
#pragma GCC visibility pop
