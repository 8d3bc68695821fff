// The Shell's handlers for the clock and the run (see shell/detail/handlers.hpp).
#include <algorithm>

#include "core/detail/path.hpp"
#include "msg/msg.hpp"
#include "msg/post_office.hpp"
#include "reduce/detail/sync_data_handler.hpp"
#include "reduce/reduce_msg.hpp"
#include "reduce/reduce_queue.hpp"
#include "shell/clock.hpp"
#include "shell/detail/handlers.hpp"

namespace antler::shell_detail {

void do_set_clock(Simulation& sim, unsigned tick, double dt) {
  sim.clock().setTickDt(tick, dt);
}

/// The pieces of a comma-separated path list ("/a,/b/##"), spaces around them dropped.
std::vector<std::string> split_paths(const std::string& list) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (true) {
    const std::size_t comma = list.find(',', at);
    std::string piece =
        list.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    const auto first = piece.find_first_not_of(" \t");
    const auto last = piece.find_last_not_of(" \t");
    out.push_back(first == std::string::npos ? std::string()
                                             : piece.substr(first, last - first + 1));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

namespace {
/// MOOSE's names for the scheduled functions: anything starting with proc/Proc is the process
/// phase, init/Init the init phase (MOOSE's Shell::innerUseClock accepts the same).
Clock::Phase parse_phase(const std::string& field, const char* op) {
  const std::string head = field.substr(0, 4);
  if (head == "proc" || head == "Proc") return Clock::Phase::process;
  if (head == "init" || head == "Init") return Clock::Phase::init;
  throw FieldError(std::string(op) + ": unknown scheduling field '" + field +
                   "' (valid: process (or proc), init)");
}
}  // namespace

void do_use_clock(Simulation& sim, unsigned tick, const std::string& path,
                  const std::string& field) {
  const bool off = tick == Shell::kNoTick;
  if (!off && tick >= Clock::kNumTicks)
    throw IndexError("useClock: tick " + std::to_string(tick) + " out of range (ticks 0.." +
                     std::to_string(Clock::kNumTicks - 1) + ")");
  const Clock::Phase phase = parse_phase(field, "useClock");
  const char* fname = phase == Clock::Phase::init ? "init" : "proc";
  // Every piece of the list; a wildcard or a list may match elements that have no such phase
  // (a Neutral, a Table's parent): MOOSE skips them, and so does antler. A piece that names one
  // element without wildcards must name one that has it.
  const auto pieces = split_paths(path);
  std::vector<Id> chosen;
  for (const std::string& piece : pieces) {
    if (piece.empty()) throw PathError("useClock: empty path in the list " + quoted(path));
    const auto found = wildcard_find(sim.elements(), piece);
    const bool pattern = piece.find('#') != std::string::npos || pieces.size() > 1;
    if (found.empty()) throw PathError("useClock: no element matches '" + piece + "'");
    for (const ObjId& o : found) {
      const Element* e = sim.elements().get(o.id);
      const bool ok =
          !e->isField() && (phase == Clock::Phase::init ? e->cinfo()->init() : e->cinfo()->proc());
      if (!ok) {
        if (pattern) continue;
        throw FieldError("useClock: " + e->path() + " (a " + e->cinfo()->name() + ") has no '" +
                         fname + "' field; only classes with one can be scheduled" +
                         (phase == Clock::Phase::init ? " in the init phase" : ""));
      }
      if (std::find(chosen.begin(), chosen.end(), o.id) == chosen.end()) chosen.push_back(o.id);
    }
  }
  for (Id id : chosen) {
    if (off)
      sim.clock().unschedule(id, phase);
    else
      sim.clock().schedule(tick, id, phase);
  }
}

void do_reinit(Simulation& sim) {
  sim.clock().reinit();
}
void do_start(Simulation& sim, double runtime) {
  sim.clock().start(runtime);
}
void do_set_threads(Simulation& sim, unsigned n) {
  Clock::checkNumThreads(n);  // before anything changes
  sim.post().setNumThreads(n);
  sim.clock().setNumThreads(n);
}

void do_phase_timers(Simulation& sim, bool on) {
  sim.clock().setPhaseTimers(on);
}

void do_clear(Simulation& sim) {
  sim.msgs().clear();
  sim.elements().clear();
  sim.clock().clear();
  sim.post().clear();
  sim.reduces().clear();
}

Index do_sync(Simulation& sim, Id id) {
  Element* e = require_element(sim, ObjId(id), "syncDataHandler");
  if (!e->isField()) {
    std::vector<std::string> fields;
    for (auto* f : e->cinfo()->fieldElementFinfos()) fields.push_back(e->path() + "/" + f->name());
    throw ValueError(
        "syncDataHandler: " + e->path() + " is not a field element" +
        (fields.empty() ? std::string() : " (its field elements: " + join_names(fields) + ")"));
  }
  return sync_data_handler(static_cast<FieldElement*>(e), sim.clock().numThreads());
}

void do_reduce_now(Simulation& sim, ObjId o, const std::string& field) {
  Element* e = require_element(sim, o, "reduceNow");
  const Finfo* f = e->cinfo()->findFinfo(field);
  if (!f || f->kind() != FinfoKind::reduce)
    throw FieldError("reduceNow: '" + field + "' is not a reduce field of " + e->cinfo()->name() +
                     " (reduce fields: " + join_names(e->cinfo()->fieldNames(FinfoKind::reduce)) +
                     ")");
  check_data_index(e, o.dataIndex, "reduceNow");
  std::vector<ReduceBase*> jobs;
  for (const Conn& c : e->conns(static_cast<const SrcFinfoBase*>(f)->bindIndex()))
    if (static_cast<const ReduceMsg*>(c.msg)->requester() == o.dataIndex)
      jobs.push_back(static_cast<const ReduceMsg*>(c.msg)->job());
  sim.reduces().runNow(jobs, sim.clock().numThreads());
}

}  // namespace antler::shell_detail
