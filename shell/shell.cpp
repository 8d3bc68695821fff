#include "shell/shell.hpp"

#include <cstring>
#include <utility>

#include "core/comm/algorithms.hpp"
#include "core/path.hpp"
#include "msg/msg.hpp"
#include "reduce/reduce_msg.hpp"
#include "reduce/reduce_queue.hpp"
#include "reduce/sync_data_handler.hpp"
#include "shell/clock.hpp"
#include "shell/clock_element.hpp"
#include "shell/detail/handlers.hpp"
#include "shell/simulation.hpp"

namespace antler {

using namespace shell_detail;

namespace {

// ---- wire format helpers ----

ByteBuffer command(Op op) {
  ByteBuffer b;
  Writer(b).put<std::uint32_t>(static_cast<std::uint32_t>(op));
  return b;
}

struct Reply {
  std::uint8_t status = 0;  // 0 ok, 1 antler::Error, 2 other, 3 failed on another node
  ErrorKind kind = ErrorKind::value;
  std::string message;
  ByteBuffer payload;
};

// A reply is the payload followed by a trailer {message, kind u8, status u8, trailer bytes u32},
// so that the payload (a vector of values can be large) is never copied to strip a header.
void put_trailer(ByteBuffer& b, std::uint8_t status, ErrorKind kind, const std::string& message) {
  const std::size_t at = b.size();
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
  if (tb < 4 + 8 + 2 || tb > b.size()) throw CommError("corrupted reply trailer");
  Reader r(b.data() + b.size() - tb, tb - 4);
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
      "quit",       "create",          "delete",    "addMsg",    "setRandomConnectivity",
      "pairFill",   "setStride",       "set",       "get",       "setVec",
      "getVec",     "setVec",          "getLookup", "setLookup", "call",
      "setClock",   "useClock",        "reinit",    "start",     "setNumThreads",
      "clearModel", "syncDataHandler", "reduceNow", "seed",      "loadLibrary",
      "extension"};
  static_assert(std::size(names) == static_cast<std::size_t>(Op::extension) + 1);
  std::uint32_t op = ~0u;
  if (cmd.size() >= 4) std::memcpy(&op, cmd.data(), 4);
  return op < std::size(names) ? names[op] : "command";
}

}  // namespace

Shell::Shell(Simulation& sim) : sim_(sim) {}

int Shell::numNodes() const {
  return sim_.layout().numNodes;
}
int Shell::myNode() const {
  return sim_.layout().node;
}

void Shell::checkIdle(const char* op) const {
  if (sim_.clock().running())
    throw StateError(std::string(op) +
                     ": not allowed while the clock is running (the Shell is not re-entrant)");
}

namespace {

using CommandHandler = void (*)(Simulation&, Reader&, Writer&);

/// The built-in commands (shell/detail/handlers.hpp): a new one is its Op, its handler and one
/// row here.
constexpr std::pair<Op, CommandHandler> kCommands[] = {
    {Op::create, do_create},
    {Op::destroy, do_destroy},
    {Op::addMsg, do_add_msg},
    {Op::setRandomConnectivity, do_random},
    {Op::pairFill, do_pair_fill},
    {Op::setStride, do_set_stride},
    {Op::set, do_set},
    {Op::get, do_get},
    {Op::setVec, do_set_vec},
    {Op::getVec, do_get_vec},
    {Op::setAll, do_set_all},
    {Op::lookupGet, [](Simulation& s, Reader& r, Writer& w) { do_lookup(s, r, w, false); }},
    {Op::lookupSet, [](Simulation& s, Reader& r, Writer& w) { do_lookup(s, r, w, true); }},
    {Op::call, do_call},
    {Op::setClock, do_set_clock},
    {Op::useClock, do_use_clock},
    {Op::reinit, do_reinit},
    {Op::start, do_start},
    {Op::setNumThreads, do_set_threads},
    {Op::clearModel, do_clear},
    {Op::syncDataHandler, do_sync},
    {Op::reduceNow, do_reduce_now},
    {Op::seed, [](Simulation& s, Reader& r, Writer&) { s.setSeed(r.get<std::uint64_t>()); }},
    {Op::loadLibrary, do_load_library},
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

ByteBuffer Shell::execute(const ByteBuffer& cmd) {
  ByteBuffer payload;
  Writer pw(payload);
  std::uint8_t status = 0;
  ErrorKind kind = ErrorKind::value;
  std::string message;
  try {
    run_command(sim_, cmd, pw);
  } catch (const FailedElsewhere& e) {
    status = 3;
    kind = e.kind();
    message = e.what();
  } catch (const Exception& e) {
    status = 1;
    kind = e.kind();
    message = e.what();
  } catch (const std::bad_alloc&) {
    // A request too large for this node's memory that no earlier check caught: the command's
    // handlers allocate before they change anything, so nothing was changed.
    status = 1;
    kind = ErrorKind::value;
    message = std::string(op_name(cmd)) + ": out of memory on node " + std::to_string(myNode()) +
              " (the request is too large)";
  } catch (const std::exception& e) {
    status = 2;
    message = e.what();
  }
  if (status != 0) payload.clear();
  put_trailer(payload, status, kind, message);
  return payload;
}

std::vector<ByteBuffer> Shell::dispatch(const ByteBuffer& cmd) {
  std::vector<Reply> replies;
  if (numNodes() == 1) {
    checkIdle("command");
    replies.push_back(take_reply(execute(cmd)));
  } else {
    if (!isDriver()) throw StateError("Shell commands are issued by the driver (node 0) only");
    checkIdle("command");
    // Out by broadcast (the first message carries the size and a small command whole; a large
    // one, such as setVec of 1e7 values, follows by the algorithm chosen for its size), replies
    // back by gather: one implementation for the driver and the workers (serve below).
    comm::algo::broadcast_any(comm_, const_cast<ByteBuffer&>(cmd), 0);  // the root only reads
    const ByteBuffer rep = execute(cmd);
    ByteBuffer all;
    std::vector<std::size_t> counts;
    comm::algo::gather(comm_, {rep.data(), rep.size()}, 0, all, counts);
    std::size_t at = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      ByteBuffer one;
      one.append(all.data() + at, counts[r]);
      at += counts[r];
      replies.push_back(take_reply(std::move(one)));
    }
  }
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
      if (rep.status == 1 || rep.status == 3) throw_error(rep.kind, msg);
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

// ---- commands ----

ObjId Shell::create(std::string_view className, std::string_view path, Index n, bool global) {
  ByteBuffer c = command(Op::create);
  Writer(c)
      .put<std::string>(std::string(className))
      .put<std::string>(absolute(path))
      .put<Index>(n)
      .put<bool>(global);
  auto rep = dispatch(c);
  Reader r(rep[0]);
  return r.get<ObjId>();
}

void Shell::destroy(std::string_view path) {
  destroy(resolve_path(sim_.elements(), absolute(path), "delete"));
}

void Shell::destroy(ObjId obj) {
  ByteBuffer c = command(Op::destroy);
  Writer(c).put<ObjId>(obj);
  dispatch(c);
}

std::uint32_t Shell::addMsg(std::string_view kind, ObjId src, std::string_view srcField, ObjId dest,
                            std::string_view destField) {
  ByteBuffer c = command(Op::addMsg);
  Writer(c)
      .put<std::string>(std::string(kind))
      .put<ObjId>(src)
      .put<std::string>(std::string(srcField))
      .put<ObjId>(dest)
      .put<std::string>(std::string(destField));
  auto rep = dispatch(c);
  Reader r(rep[0]);
  return r.get<std::uint32_t>();
}

std::uint32_t Shell::addMsg(std::string_view kind, std::string_view src, std::string_view srcField,
                            std::string_view dest, std::string_view destField) {
  return addMsg(kind, resolve_path(sim_.elements(), absolute(src), "addMsg"), srcField,
                resolve_path(sim_.elements(), absolute(dest), "addMsg"), destField);
}

void Shell::setRandomConnectivity(std::uint32_t msg, double probability, std::uint64_t seed) {
  ByteBuffer c = command(Op::setRandomConnectivity);
  Writer(c).put<std::uint32_t>(msg).put<double>(probability).put<std::uint64_t>(seed);
  dispatch(c);
}

void Shell::pairFill(std::uint32_t msg, const std::vector<Index>& src,
                     const std::vector<Index>& dest) {
  ByteBuffer c = command(Op::pairFill);
  Writer(c).put<std::uint32_t>(msg).put(src).put(dest);
  dispatch(c);
}

void Shell::setStride(std::uint32_t msg, long stride) {
  ByteBuffer c = command(Op::setStride);
  Writer(c).put<std::uint32_t>(msg).put<long>(stride);
  dispatch(c);
}

const Msg* Shell::msg(std::uint32_t id) const {
  return sim_.msgs().get(id);
}

void Shell::clearModel() {
  dispatch(command(Op::clearModel));
}

void Shell::ce(std::string_view path) {
  const ObjId o = resolve_path(sim_.elements(), absolute(path), "ce");
  // A field entry exists only if its parent holds that many (known on the parent's node).
  if (sim_.elements().get(o.id)->isField()) {
    try {
      getPacked(o, "name", typeid(std::string));
    } catch (const IndexError& e) {
      throw IndexError("ce: '" + std::string(path) + "': " + e.what());
    }
  }
  cwe_ = o;
}

ObjId Shell::cwe() const {
  // An element that was deleted (its id no longer names an element) leaves the root current.
  const Element* e = sim_.elements().get(cwe_.id);
  if (!e || cwe_.dataIndex >= e->numData()) return ObjId(Id::root());
  return cwe_;
}

std::string Shell::pwd() const {
  // The element's path, or the entry's ("/net/cells[3]") when ce named another entry than 0.
  const ObjId c = cwe();
  const Element* e = sim_.elements().get(c.id);
  return c.dataIndex == 0 && !e->isField() ? e->path() : sim_.elements().path(c);
}

std::string Shell::absolute(std::string_view path) const {
  // An empty path stays empty (and is refused by name where a path is needed).
  if (path.empty() || path.front() == '/') return std::string(path);
  const std::string base = pwd();
  // Below the current element, so that "synapse[2]" under "/net/cells[3]" is entry 3's.
  return (base == "/" ? base : base + "/") + std::string(path);
}

ObjId Shell::find(std::string_view path) const {
  return resolve_path(sim_.elements(), absolute(path), "find");
}

bool Shell::exists(std::string_view path) const {
  try {
    return sim_.elements().get(find_path(sim_.elements(), absolute(path)).id) != nullptr;
  } catch (const Error&) {
    return false;
  }
}

std::vector<ObjId> Shell::children(std::string_view path) const {
  std::vector<ObjId> out;
  const ObjId o = resolve_path(sim_.elements(), absolute(path), "children");
  for (Id c : sim_.elements().get(o.id)->children()) out.emplace_back(c);
  return out;
}

std::string Shell::path(Id id) const {
  return sim_.elements().path(id);
}

std::string Shell::path(const ObjId& o) const {
  return sim_.elements().path(o);
}

std::vector<ObjId> Shell::wildcardFind(std::string_view pattern) const {
  return wildcard_find(sim_.elements(), absolute(pattern));
}

std::vector<std::string> Shell::classNames() {
  return Cinfo::classNames();
}

std::vector<Shell::FieldInfo> Shell::fieldInfo(std::string_view className) {
  const Cinfo* c = Cinfo::require(className, "getFieldNames");
  std::vector<FieldInfo> out;
  for (const Finfo* f : c->finfos())
    out.push_back({f->name(), to_string(f->kind()), f->type(), f->doc()});
  return out;
}

void Shell::setPacked(ObjId obj, std::string_view field, const std::type_info& type,
                      const ByteBuffer& value) {
  ByteBuffer c = command(Op::set);
  Writer w(c);
  w.put<ObjId>(obj).put<std::string>(std::string(field));
  put_type(w, type);
  c.append(value.data(), value.size());
  dispatch(c);
}

ByteBuffer Shell::getPacked(ObjId obj, std::string_view field, const std::type_info& type) {
  ByteBuffer c = command(Op::get);
  Writer w(c);
  w.put<ObjId>(obj).put<std::string>(std::string(field));
  put_type(w, type);
  auto rep = dispatch(c);
  const Element* e = sim_.elements().get(obj.id);
  return std::move(rep[static_cast<std::size_t>(e ? e->owner(obj.dataIndex) : 0)]);
}

ByteBuffer Shell::getVecPacked(ObjId obj, std::string_view field, const std::type_info& type,
                               bool whole) {
  ByteBuffer c = command(Op::getVec);
  Writer w(c);
  w.put<ObjId>(obj).put<std::string>(std::string(field));
  put_type(w, type);
  w.put<bool>(whole);
  auto rep = dispatch(c);
  const Element* e = sim_.elements().get(obj.id);
  if (e->isGlobal() || rep.size() == 1) return std::move(rep[0]);
  ByteBuffer out;
  std::size_t total = 0;
  for (auto& b : rep) total += b.size();
  out.reserve(total);
  for (auto& b : rep) out.append(b.data(), b.size());  // node order is global index order
  return out;
}

void Shell::setVecPacked(ObjId obj, std::string_view field, const std::type_info& type,
                         const ByteBuffer& values, std::uint64_t n, bool whole) {
  ByteBuffer c = command(Op::setVec);
  Writer w(c);
  w.put<ObjId>(obj).put<std::string>(std::string(field));
  put_type(w, type);
  w.put<bool>(whole).put<std::uint64_t>(n);
  c.append(values.data(), values.size());
  dispatch(c);
}

void Shell::setAllPacked(ObjId obj, std::string_view field, const std::type_info& type,
                         const ByteBuffer& value) {
  ByteBuffer c = command(Op::setAll);
  Writer w(c);
  w.put<ObjId>(obj).put<std::string>(std::string(field));
  put_type(w, type);
  c.append(value.data(), value.size());
  dispatch(c);
}

ByteBuffer Shell::lookupGetPacked(ObjId obj, std::string_view field, const std::type_info& keyType,
                                  const ByteBuffer& key, const std::type_info& type) {
  ByteBuffer c = command(Op::lookupGet);
  Writer w(c);
  w.put<ObjId>(obj).put<std::string>(std::string(field));
  put_type(w, keyType);
  put_type(w, type);
  w.put<std::string>(std::string(key.data(), key.size()));
  auto rep = dispatch(c);
  const Element* e = sim_.elements().get(obj.id);
  return std::move(rep[static_cast<std::size_t>(e ? e->owner(obj.dataIndex) : 0)]);
}

void Shell::lookupSetPacked(ObjId obj, std::string_view field, const std::type_info& keyType,
                            const ByteBuffer& key, const std::type_info& type,
                            const ByteBuffer& value) {
  ByteBuffer c = command(Op::lookupSet);
  Writer w(c);
  w.put<ObjId>(obj).put<std::string>(std::string(field));
  put_type(w, keyType);
  put_type(w, type);
  w.put<std::string>(std::string(key.data(), key.size()));
  c.append(value.data(), value.size());
  dispatch(c);
}

void Shell::callPacked(ObjId obj, std::string_view dest,
                       const std::vector<const std::type_info*>& types, const ByteBuffer& args) {
  ByteBuffer c = command(Op::call);
  Writer w(c);
  w.put<ObjId>(obj)
      .put<std::string>(std::string(dest))
      .put<std::uint32_t>(static_cast<std::uint32_t>(types.size()));
  for (auto* t : types) put_type(w, *t);
  c.append(args.data(), args.size());
  dispatch(c);
}

void Shell::setClock(unsigned tick, double dt) {
  ByteBuffer c = command(Op::setClock);
  Writer(c).put<unsigned>(tick).put<double>(dt);
  dispatch(c);
}

void Shell::useClock(unsigned tick, std::string_view path, std::string_view field) {
  // Each piece of a comma-separated list starts at the current element on its own.
  std::string abs;
  const auto pieces = split_paths(std::string(path));
  for (std::size_t i = 0; i < pieces.size(); ++i)
    abs += (i ? "," : "") + (pieces[i].empty() ? pieces[i] : absolute(pieces[i]));
  ByteBuffer c = command(Op::useClock);
  Writer(c).put<unsigned>(tick).put<std::string>(abs).put<std::string>(std::string(field));
  dispatch(c);
}

void Shell::reinit() {
  dispatch(command(Op::reinit));
}

void Shell::start(double runtime) {
  ByteBuffer c = command(Op::start);
  Writer(c).put<double>(runtime);
  dispatch(c);
}

void Shell::stop() {
  if (sim_.clock().running()) sim_.clock().requestStop();
}

double Shell::currentTime() const {
  return sim_.clock().currentTime();
}

void Shell::setNumThreads(unsigned n) {
  ByteBuffer c = command(Op::setNumThreads);
  Writer(c).put<unsigned>(n);
  dispatch(c);
}

unsigned Shell::numThreads() const {
  return sim_.clock().numThreads();
}

std::vector<std::string> Shell::loadLibrary(const std::string& path) {
  ByteBuffer c = command(Op::loadLibrary);
  Writer(c).put<std::string>(path);
  auto rep = dispatch(c);
  Reader r(rep[0]);
  return r.get<std::vector<std::string>>();
}

double Shell::baseDt() const {
  return sim_.clock().baseDt();
}

void Shell::seed(std::uint64_t s) {
  ByteBuffer c = command(Op::seed);
  Writer(c).put<std::uint64_t>(s);
  dispatch(c);
}

Index Shell::doSyncDataHandler(std::string_view path) {
  return doSyncDataHandler(resolve_path(sim_.elements(), absolute(path), "syncDataHandler").id);
}

Index Shell::doSyncDataHandler(Id fe) {
  ByteBuffer c = command(Op::syncDataHandler);
  Writer(c).put<Id>(fe);
  auto rep = dispatch(c);
  Reader r(rep[0]);
  return r.get<Index>();
}

void Shell::reduceNow(ObjId requester, std::string_view field) {
  ByteBuffer c = command(Op::reduceNow);
  Writer(c).put<ObjId>(requester).put<std::string>(std::string(field));
  dispatch(c);
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
