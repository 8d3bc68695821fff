#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// A recorder's `requestOut` (NSDFWriter, HDF5DataWriter): a reduce field whose messages read a
/// number field of every entry of an Element (a Reduce message) or of one object (Single), the
/// values gathered in global index order through the reduce path to the node that holds the
/// recorder, which gets them with the message's id: `W::store(const Eref&, std::uint32_t msgId,
/// const GatherValues&)`. W::kClassName names the recorder in errors.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "msg/msg.hpp"
#include "reduce/context.hpp"
#include "reduce/reduce_finfo.hpp"
#include "reduce/reduce_msg.hpp"

namespace antler {

/// The values of one field gathered in global index order.
struct GatherValues {
  std::vector<double> values;
  /// Appends one value (targets are folded in index order within a thread's slice).
  void primaryReduce(const double& v) { values.push_back(v); }
  void primaryReduceBlock(const double* p, std::size_t n) { values.insert(values.end(), p, p + n); }
  /// Appends a later thread's or node's values.
  void secondaryReduce(const GatherValues& o) {
    values.insert(values.end(), o.values.begin(), o.values.end());
  }
  void tertiaryReduce(const GatherValues& o) { secondaryReduce(o); }
  /// The identity, keeping the storage (so a step's partials allocate nothing).
  void clear() { values.clear(); }
};

/// GatherValues as bytes: a count and the raw doubles (no Boost archive on this hot path).
template <>
struct Codec<GatherValues, void> {
  static void write(Writer& w, const GatherValues& g) { w.put<std::vector<double>>(g.values); }
  static GatherValues read(Reader& r) { return GatherValues{r.get<std::vector<double>>()}; }
};

/// The reduce field `requestOut` of recorder class W.
template <class W>
class GatherRequestFinfo final : public ReduceFinfoBase {
 public:
  using ReduceFinfoBase::ReduceFinfoBase;
  const std::type_info& reducedType() const override { return typeid(double); }
  std::string reduceClassName() const override { return "GatherValues"; }
  std::unique_ptr<ReduceBase> makeJob(const ReduceMsg& msg) const override {
    const ValueFinfoBase* g = msg.getter();
    auto [loop, one] = detail::select_loop<GatherValues, double>(g->valueType());
    if (!loop)
      throw TypeError(std::string("connect: ") + W::kClassName +
                      ".requestOut records numbers (stored as float64), but " +
                      msg.dest()->cinfo()->name() + "." + g->name() + " is " +
                      type_name(g->valueType()));
    if (!msg.isSingle() && msg.dest()->isField())
      throw MsgError(std::string("connect: ") + W::kClassName +
                     ".requestOut with a Reduce message records every entry of a data Element; " +
                     msg.dest()->path() +
                     " is a field element: connect Single messages to the entries to record");
    return std::make_unique<Job>(msg, loop, one);
  }
  /// The messages recorder e asks through this field, in message id order.
  std::vector<const ReduceMsg*> messagesOf(const Eref& e) const {
    std::vector<const ReduceMsg*> msgs;
    for (const Conn& c : e.element()->conns(bindIndex())) {
      auto* m = static_cast<const ReduceMsg*>(c.msg);
      if (m->requester() == e.dataIndex()) msgs.push_back(m);
    }
    std::sort(msgs.begin(), msgs.end(), [](auto* a, auto* b) { return a->id() < b->id(); });
    return msgs;
  }
  /// Message `id` if it is still one of e's requests, else nullptr (once it, or its target, was
  /// deleted).
  static const ReduceMsg* stillAsks(std::uint32_t id, const Eref& e) {
    const Msg* m = msg_context(*e.element()).msgs().get(id);
    if (!m || m->kind() != MsgKind::reduce || m->src() != e.element()) return nullptr;
    const auto* rm = static_cast<const ReduceMsg*>(m);
    return rm->requester() == e.dataIndex() ? rm : nullptr;
  }
  /// A recorder's step: asks for the values of each of its channels (anything with `msgId` and
  /// a `gone` flag) whose message still exists; a channel whose message was deleted since reinit
  /// (with its target, or alone) is marked gone for good and handed to gone(channel) instead,
  /// which records NaN for it. Returns how many were asked for.
  template <class Channels, class Gone>
  static std::size_t ask(Channels& channels, const Eref& e, Gone&& gone) {
    std::size_t live = 0;
    ReduceQueue& q = reduce_context(*e.element()).reduces();
    for (auto& ch : channels) {
      const ReduceMsg* m = ch.gone ? nullptr : stillAsks(ch.msgId, e);
      ch.gone = !m;
      if (ch.gone) {
        gone(ch);
      } else {
        q.request(m->job());
        ++live;
      }
    }
    return live;
  }

 private:
  /// Gathers the field over the targets and hands the result to the recorder with the
  /// message's id.
  class Job final : public detail::MsgReduceJob<GatherValues, double> {
   public:
    using MsgReduceJob::MsgReduceJob;
    void digest() override {
      if (char* p = requester())
        reinterpret_cast<W*>(p)->store(Eref(msg_.src(), msg_.requester()), msg_.id(), result_);
    }
  };
};

}  // namespace antler
#pragma GCC visibility pop
