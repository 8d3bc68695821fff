// The Shell's command channel: the driver broadcasts a command, every node runs its handler
// (the built-in commands' table below, or an extension command), and the replies come back by
// gather with each node's error, if any, in a trailer. A handler either succeeds or throws before
// changing anything, on every node.
#include <cstring>
#include <utility>

#include "core/comm/algorithms.hpp"
#include "shell/detail/command.hpp"
#include "shell/detail/handlers.hpp"
#include "shell/shell.hpp"
#include "shell/simulation.hpp"

namespace antler {

using namespace shell_detail;

namespace {

struct Reply {
  std::uint8_t status = 0;  // 0 ok, 1 antler::Error, 2 other, 3 failed on another node
  ErrorKind kind = ErrorKind::value;
  std::string message;
  ErrorDetails details;
  ByteBuffer payload;
};

// A reply is the payload followed by a trailer {details (u32 count, then key and value per
// fact), message, kind u8, status u8, trailer bytes u32}, so that the payload (a vector of
// values can be large) is never copied to strip a header.
void put_trailer(ByteBuffer& b, std::uint8_t status, ErrorKind kind, const std::string& message,
                 const ErrorDetails& details) {
  const std::size_t at = b.size();
  Writer w(b);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(details.size()));
  for (const auto& [k, v] : details) w.put<std::string>(k).put<std::string>(v);
  Writer(b)
      .put<std::string>(message)
      .put<std::uint8_t>(static_cast<std::uint8_t>(kind))
      .put<std::uint8_t>(status);
  Writer(b).put<std::uint32_t>(static_cast<std::uint32_t>(b.size() - at + 4));
}

/// Parses the trailer of a reply and cuts it off (payload = what is left).
Reply take_reply(ByteBuffer&& b) {
  Reply out;
  if (b.size() < 4) throw CommError("corrupted reply: " + std::to_string(b.size()) + " bytes");
  std::uint32_t tb = 0;
  std::memcpy(&tb, b.data() + b.size() - 4, 4);
  if (tb < 4 + 4 + 8 + 2 || tb > b.size()) throw CommError("corrupted reply trailer");
  Reader r(b.data() + b.size() - tb, tb - 4);
  const auto n = r.get<std::uint32_t>();
  if (n > r.left() / 16) throw CommError("corrupted reply trailer");
  for (std::uint32_t i = 0; i < n; ++i) {
    std::string k = r.get<std::string>();
    out.details.emplace_back(std::move(k), r.get<std::string>());
  }
  out.message = r.get<std::string>();
  out.kind = static_cast<ErrorKind>(r.get<std::uint8_t>());
  out.status = r.get<std::uint8_t>();
  b.resize(b.size() - tb);
  out.payload = std::move(b);
  return out;
}

/// The name of a command's operation, for messages.
const char* op_name(const ByteBuffer& cmd) {
  static const char* const names[] = {
      "quit",        "create",          "delete",      "addMsg",    "setRandomConnectivity",
      "pairFill",    "setStride",       "set",         "get",       "setVec",
      "getVec",      "setVec",          "getLookup",   "setLookup", "call",
      "setClock",    "useClock",        "reinit",      "start",     "setNumThreads",
      "clearModel",  "syncDataHandler", "reduceNow",   "seed",      "loadLibrary",
      "blockReduce", "allToAll",        "phaseTimers", "pairFill",  "extension"};
  static_assert(std::size(names) == static_cast<std::size_t>(Op::extension) + 1);
  std::uint32_t op = ~0u;
  if (cmd.size() >= 4) std::memcpy(&op, cmd.data(), 4);
  return op < std::size(names) ? names[op] : "command";
}

}  // namespace

namespace {

/// The built-in commands (shell/detail/handlers.hpp): a new one is its Op, its descriptor, its
/// handler and one row here.
constexpr std::pair<Op, CommandHandler> kCommands[] = {
    {Op::create, handler<Create, do_create>()},
    {Op::destroy, handler<Destroy, do_destroy>()},
    {Op::addMsg, handler<AddMsg, do_add_msg>()},
    {Op::setRandomConnectivity, handler<SetRandomConnectivity, do_random>()},
    {Op::pairFill, handler<PairFill, do_pair_fill>()},
    {Op::setStride, handler<SetStride, do_set_stride>()},
    {Op::set, do_set},
    {Op::get, do_get},
    {Op::setVec, do_set_vec},
    {Op::getVec, do_get_vec},
    {Op::setAll, do_set_all},
    {Op::lookupGet, [](Simulation& s, Reader& r, Writer& w) { do_lookup(s, r, w, false); }},
    {Op::lookupSet, [](Simulation& s, Reader& r, Writer& w) { do_lookup(s, r, w, true); }},
    {Op::call, do_call},
    {Op::setClock, handler<SetClock, do_set_clock>()},
    {Op::useClock, handler<UseClock, do_use_clock>()},
    {Op::reinit, handler<Reinit, do_reinit>()},
    {Op::start, handler<Start, do_start>()},
    {Op::setNumThreads, handler<SetNumThreads, do_set_threads>()},
    {Op::clearModel, handler<ClearModel, do_clear>()},
    {Op::syncDataHandler, handler<SyncDataHandler, do_sync>()},
    {Op::reduceNow, handler<ReduceNow, do_reduce_now>()},
    {Op::seed, handler<Seed, [](Simulation& s, std::uint64_t v) { s.setSeed(v); }>()},
    {Op::loadLibrary, handler<LoadLibrary, do_load_library>()},
    {Op::blockReduce, block_reduce_handler},
    {Op::allToAll, all_to_all_handler},
    {Op::phaseTimers, handler<PhaseTimers, do_phase_timers>()},
    {Op::pairFillValues, do_pair_fill_values},
    {Op::extension, do_extension},
};

/// Runs one command's handler on this node, its reply in w.
void run_command(Simulation& sim, const ByteBuffer& cmd, Writer& w) {
  Reader r(cmd);
  const auto op = static_cast<Op>(r.get<std::uint32_t>());
  for (const auto& [o, handler] : kCommands)
    if (o == op) return handler(sim, r, w);
  throw CommError("unknown command " + std::to_string(static_cast<std::uint32_t>(op)));
}

}  // namespace

ByteBuffer Shell::guarded(const char* op, const std::function<void(Writer&)>& body) {
  ByteBuffer payload;
  Writer pw(payload);
  std::uint8_t status = 0;
  ErrorKind kind = ErrorKind::value;
  std::string message;
  ErrorDetails details;
  try {
    body(pw);
  } catch (const FailedElsewhere& e) {
    status = 3;
    kind = e.kind();
    message = e.what();
  } catch (const Exception& e) {
    status = 1;
    kind = e.kind();
    message = e.what();
    details = e.details();
  } catch (const std::bad_alloc&) {
    // A request too large for this node's memory that no earlier check caught: the command's
    // handlers allocate before they change anything, so nothing was changed.
    status = 1;
    kind = ErrorKind::value;
    message = std::string(op) + ": out of memory on node " + std::to_string(myNode()) +
              " (the request is too large)";
  } catch (const std::exception& e) {
    status = 2;
    message = e.what();
  }
  if (status != 0) payload.clear();
  put_trailer(payload, status, kind, message, details);
  return payload;
}

ByteBuffer Shell::execute(const ByteBuffer& cmd) {
  return guarded(op_name(cmd), [&](Writer& w) { run_command(sim_, cmd, w); });
}

bool Shell::runHere(const char* op, const std::function<void(Simulation&)>& body) {
  if (numNodes() != 1) return false;
  checkIdle("command");
  std::vector<ByteBuffer> rep;
  rep.push_back(guarded(op, [&](Writer&) { body(sim_); }));
  settle(std::move(rep));
  return true;
}

std::vector<ByteBuffer> Shell::dispatch(const ByteBuffer& cmd) {
  std::vector<ByteBuffer> all;
  if (numNodes() == 1) {
    checkIdle("command");
    all.push_back(execute(cmd));
  } else {
    if (!isDriver()) throw StateError("Shell commands are issued by the driver (node 0) only");
    checkIdle("command");
    // Out by broadcast (the first message carries the size and a small command whole; a large
    // one, such as setVec of 1e7 values, follows by the algorithm chosen for its size), replies
    // back by gather: one implementation for the driver and the workers (serve below).
    comm::algo::broadcast_any(comm_, const_cast<ByteBuffer&>(cmd), 0);  // the root only reads
    const ByteBuffer rep = execute(cmd);
    ByteBuffer gathered;
    std::vector<std::size_t> counts;
    comm::algo::gather(comm_, {rep.data(), rep.size()}, 0, gathered, counts);
    std::size_t at = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      ByteBuffer one;
      one.append(gathered.data() + at, counts[r]);
      at += counts[r];
      all.push_back(std::move(one));
    }
  }
  return settle(std::move(all));
}

std::vector<ByteBuffer> Shell::settle(std::vector<ByteBuffer> all) {
  std::vector<Reply> replies;
  for (ByteBuffer& b : all) replies.push_back(take_reply(std::move(b)));
  // Report the first node's own error; a node that only saw another node fail (status 3) speaks
  // only if no node says why.
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t r = 0; r < replies.size(); ++r) {
      const Reply& rep = replies[r];
      if (rep.status == 0 || (pass == 0 && rep.status == 3)) continue;
      std::string msg = rep.message;
      // The same error on every node (a check on replicated metadata) reads as one error; an error
      // that only one node saw names that node.
      bool everywhere = true;
      for (const Reply& o : replies)
        everywhere = everywhere && o.status == rep.status && o.message == rep.message;
      if (!everywhere && numNodes() > 1) msg += " (on node " + std::to_string(r) + ")";
      if (rep.status == 1 || rep.status == 3) throw_error(rep.kind, msg, rep.details);
      throw InternalError(msg);
    }
  std::vector<ByteBuffer> out;
  for (auto& rep : replies) out.push_back(std::move(rep.payload));
  return out;
}

int Shell::serve() {
  if (numNodes() == 1 || isDriver()) return 0;
  for (;;) {
    ByteBuffer cmd;
    comm::algo::broadcast_any(comm_, cmd, 0);
    Reader r(cmd);
    if (static_cast<Op>(r.get<std::uint32_t>()) == Op::quit) return r.get<int>();
    const ByteBuffer rep = execute(cmd);
    ByteBuffer all;
    std::vector<std::size_t> counts;
    comm::algo::gather(comm_, {rep.data(), rep.size()}, 0, all, counts);
  }
}

void Shell::quitWorkers(int exitCode) {
  if (numNodes() == 1 || !isDriver()) return;
  ByteBuffer cmd = command(Op::quit);
  Writer(cmd).put<int>(exitCode);
  comm::algo::broadcast_any(comm_, cmd, 0);
}

void Shell::registerCommand(const std::string& name, Handler h) {
  extensions()[name] = h;
}

std::vector<ByteBuffer> Shell::dispatchExtension(const std::string& name, const ByteBuffer& args) {
  ByteBuffer c = command(Op::extension);
  Writer(c).put<std::string>(name);
  c.append(args.data(), args.size());
  return dispatch(c);
}

}  // namespace antler
