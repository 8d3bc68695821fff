#pragma once
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
#include <type_traits>

#include "core/eref.hpp"
#include "core/finfo.hpp"
#include "msg/post_office.hpp"

namespace antler {

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
    PostOffice::instance().outbox().append(e.element()->id().value, bindIndex(), e.dataIndex(),
                                           e.fieldIndex(), a...);
  }
};

}  // namespace antler
