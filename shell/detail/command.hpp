#pragma once
// The Shell's commands as typed descriptors: a command is its op and the types of its arguments
// (and of its reply), and one codec — Writer::put<T> on the driver, Reader::get<T> on every node
// (core/buffer.hpp) — carries them, so the client method and the handler cannot disagree on the
// order or the types. A handler is a plain function of the Simulation and the arguments:
//
//   using Create = Command<Op::create, ObjId(std::string, std::string, Index, bool)>;
//   ObjId do_create(Simulation&, const std::string& cls, const std::string& path, Index, bool);
//   kCommands row:   handler<Create, do_create>()
//   client method:   return call<Create>(std::string(cls), absolute(path), n, global);
//
// The field commands (set, get, vectors, lookup, call: handlers_fields.cpp) carry values packed
// by the field's own type, which only the node that holds the object reads, so they are written
// and read by hand after their typed head.
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "core/buffer.hpp"
#include "core/id.hpp"
#include "shell/shell.hpp"

namespace antler {
class Simulation;
}

namespace antler::shell_detail {

template <Op O, class Signature>
struct Command;

template <Op O, class Reply, class... Args>
struct Command<O, Reply(Args...)> {
  static constexpr Op op = O;
  using ReplyType = Reply;
  /// The command's bytes: its op, then each argument.
  static ByteBuffer encode(const Args&... args) {
    ByteBuffer b;
    Writer w(b);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(O));
    (w.put<Args>(args), ...);
    return b;
  }
  /// The arguments, read in order (a braced list evaluates left to right).
  static std::tuple<Args...> decode(Reader& r) { return std::tuple<Args...>{r.get<Args>()...}; }
};

using CommandHandler = void (*)(Simulation&, Reader&, Writer&);

/// The handler that decodes C's arguments, calls Fn(sim, args...) and writes its reply.
template <class C, auto Fn>
constexpr CommandHandler handler() {
  return [](Simulation& sim, Reader& r, Writer& w) {
    auto args = C::decode(r);
    auto call = [&](auto&... a) { return Fn(sim, a...); };
    if constexpr (std::is_void_v<typename C::ReplyType>)
      std::apply(call, args);
    else
      w.put<typename C::ReplyType>(std::apply(call, args));
  };
}

// ---- the built-in commands with typed arguments ----
using Create = Command<Op::create, ObjId(std::string, std::string, Index, bool)>;
using Destroy = Command<Op::destroy, void(ObjId)>;
using AddMsg =
    Command<Op::addMsg, std::uint32_t(std::string, ObjId, std::string, ObjId, std::string)>;
using SetRandomConnectivity =
    Command<Op::setRandomConnectivity, void(std::uint32_t, double, std::uint64_t)>;
// The indices travel as views: a fill of 1e7 synapses holds them once, in the command's bytes.
using PairFill = Command<Op::pairFill, void(std::uint32_t, ArrayView<Index>, ArrayView<Index>)>;
using SetStride = Command<Op::setStride, void(std::uint32_t, long)>;
using SetClock = Command<Op::setClock, void(unsigned, double)>;
using UseClock = Command<Op::useClock, void(unsigned, std::string, std::string)>;
using Reinit = Command<Op::reinit, void()>;
using Start = Command<Op::start, void(double)>;
using SetNumThreads = Command<Op::setNumThreads, void(unsigned)>;
using PhaseTimers = Command<Op::phaseTimers, void(bool)>;
using ClearModel = Command<Op::clearModel, void()>;
using SyncDataHandler = Command<Op::syncDataHandler, Index(Id)>;
using ReduceNow = Command<Op::reduceNow, void(ObjId, std::string)>;
using Seed = Command<Op::seed, void(std::uint64_t)>;
using LoadLibrary = Command<Op::loadLibrary, std::vector<std::string>(std::string)>;
// shell/blocks.cpp: explicit rounds travel as (dimension, group size) pairs, flattened.
using BlockReduce =
    Command<Op::blockReduce, void(Id, std::string, std::uint8_t, std::int32_t, bool,
                                  std::vector<std::int32_t>, std::vector<std::int32_t>)>;
using AllToAll = Command<Op::allToAll, void(Id, std::string, std::int32_t)>;
void block_reduce_handler(Simulation&, Reader&, Writer&);
void all_to_all_handler(Simulation&, Reader&, Writer&);

}  // namespace antler::shell_detail
