#include "shell/shell.hpp"

#include <utility>

#include "core/comm/algorithms.hpp"
#include "core/detail/path.hpp"
#include "core/field_element_finfo.hpp"
#include "msg/msg.hpp"
#include "reduce/detail/sync_data_handler.hpp"
#include "reduce/reduce_msg.hpp"
#include "reduce/reduce_queue.hpp"
#include "shell/clock.hpp"
#include "shell/detail/command.hpp"
#include "shell/detail/handlers.hpp"
#include "shell/simulation.hpp"

namespace antler {

using namespace shell_detail;

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

// ---- commands ----

namespace {
/// Runs command C with these arguments on every node; returns node 0's reply (every node's is
/// the same for these commands).
template <class C, class... A>
typename C::ReplyType run(Shell& s, const A&... args) {
  const std::vector<ByteBuffer> rep = s.dispatch(C::encode(args...));
  if constexpr (!std::is_void_v<typename C::ReplyType>) {
    Reader r(rep[0]);
    return r.get<typename C::ReplyType>();
  }
}
}  // namespace

ObjId Shell::create(std::string_view className, std::string_view path, Index n, bool global) {
  return run<Create>(*this, std::string(className), absolute(path), n, global);
}

void Shell::destroy(std::string_view path) {
  destroy(resolve_path(sim_.elements(), absolute(path), "delete"));
}

void Shell::destroy(ObjId obj) {
  run<Destroy>(*this, obj);
}

std::uint32_t Shell::addMsg(std::string_view kind, ObjId src, std::string_view srcField, ObjId dest,
                            std::string_view destField) {
  return run<AddMsg>(*this, std::string(kind), src, std::string(srcField), dest,
                     std::string(destField));
}

std::uint32_t Shell::addMsg(std::string_view kind, std::string_view src, std::string_view srcField,
                            std::string_view dest, std::string_view destField) {
  return addMsg(kind, resolve_path(sim_.elements(), absolute(src), "addMsg"), srcField,
                resolve_path(sim_.elements(), absolute(dest), "addMsg"), destField);
}

void Shell::setRandomConnectivity(std::uint32_t msg, double probability, std::uint64_t seed) {
  run<SetRandomConnectivity>(*this, msg, probability, seed);
}

void Shell::pairFill(std::uint32_t msg, std::span<const Index> src, std::span<const Index> dest) {
  const ArrayView<Index> s(src), d(dest);
  if (runHere("pairFill", [&](Simulation& sim) { do_pair_fill(sim, msg, s, d); })) return;
  run<PairFill>(*this, msg, s, d);
}

void Shell::pairFill(std::uint32_t msg, const std::vector<Index>& src,
                     const std::vector<Index>& dest) {
  pairFill(msg, std::span<const Index>(src), std::span<const Index>(dest));
}

void Shell::setStride(std::uint32_t msg, long stride) {
  run<SetStride>(*this, msg, stride);
}

const Msg* Shell::msg(std::uint32_t id) const {
  return sim_.msgs().get(id);
}

void Shell::clearModel() {
  run<ClearModel>(*this);
}

void Shell::ce(std::string_view path) {
  const ObjId o = resolve_path(sim_.elements(), absolute(path), "ce");
  // A field entry exists only if its parent holds that many (known on the parent's node).
  if (sim_.elements().get(o.id)->isField()) {
    try {
      getPacked(o, "name", typeid(std::string));
    } catch (const IndexError& e) {
      throw IndexError("ce: '" + std::string(path) + "': " + e.what(), e.details());
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

std::vector<Shell::FieldInfo> Shell::fieldInfo(std::string_view className,
                                               std::string_view operation) {
  const Cinfo* c = Cinfo::require(className, operation);
  std::vector<FieldInfo> out;
  for (const Finfo* f : c->finfos())
    out.push_back({f->name(), to_string(f->kind()), f->type(), f->doc(),
                   f->kind() == FinfoKind::fieldElement
                       ? static_cast<const FieldElementFinfoBase*>(f)->numName()
                       : std::string()});
  return out;
}
void Shell::setClock(unsigned tick, double dt) {
  run<SetClock>(*this, tick, dt);
}

void Shell::useClock(unsigned tick, std::string_view path, std::string_view field) {
  // Each piece of a comma-separated list starts at the current element on its own.
  std::string abs;
  const auto pieces = split_paths(std::string(path));
  for (std::size_t i = 0; i < pieces.size(); ++i)
    abs += (i ? "," : "") + (pieces[i].empty() ? pieces[i] : absolute(pieces[i]));
  run<UseClock>(*this, tick, abs, std::string(field));
}

void Shell::reinit() {
  run<Reinit>(*this);
}

void Shell::start(double runtime) {
  run<Start>(*this, runtime);
}

void Shell::stop() {
  if (sim_.clock().running()) sim_.clock().requestStop();
}

double Shell::currentTime() const {
  return sim_.clock().currentTime();
}

void Shell::setNumThreads(unsigned n) {
  run<SetNumThreads>(*this, n);
}

unsigned Shell::numThreads() const {
  return sim_.clock().numThreads();
}

void Shell::setPhaseTimers(bool on) {
  run<PhaseTimers>(*this, on);
}

const PhaseTimes& Shell::phaseTimes() const {
  return sim_.clock().phaseTimes();
}

std::vector<std::string> Shell::loadLibrary(const std::string& path) {
  return run<LoadLibrary>(*this, path);
}

double Shell::baseDt() const {
  return sim_.clock().baseDt();
}

void Shell::seed(std::uint64_t s) {
  run<Seed>(*this, s);
}

Index Shell::doSyncDataHandler(std::string_view path) {
  return doSyncDataHandler(resolve_path(sim_.elements(), absolute(path), "syncDataHandler").id);
}

Index Shell::doSyncDataHandler(Id fe) {
  return run<SyncDataHandler>(*this, fe);
}

void Shell::reduceNow(ObjId requester, std::string_view field) {
  run<ReduceNow>(*this, requester, std::string(field));
}

}  // namespace antler
