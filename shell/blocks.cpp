#include "shell/blocks.hpp"

#include <limits>

#include "core/detail/path.hpp"
#include "core/layout.hpp"
#include "shell/clock.hpp"
#include "shell/detail/command.hpp"
#include "shell/detail/handlers.hpp"
#include "shell/simulation.hpp"

namespace antler::blocks {

namespace {

const DataElement& data_element(const Element& e, const char* op) {
  if (e.isField())
    throw ValueError(std::string(op) + ": " + e.path() +
                     " is a field element; block rounds run over the entries of a data element");
  if (e.isGlobal())
    throw ValueError(std::string(op) + ": " + e.path() +
                     " is global (every node holds every entry); block rounds need a "
                     "distributed element, each entry on one node");
  if (e.numData() > static_cast<Index>(std::numeric_limits<int>::max()))
    throw ValueError(std::string(op) + ": " + e.path() + " has " + std::to_string(e.numData()) +
                     " entries; block rounds take at most 2^31 - 1 blocks");
  return static_cast<const DataElement&>(e);
}

/// The clock's threads, as OS threads on this node's cores (Clock::workers).
unsigned threads_of(const Element& e, const char* op) {
  Simulation& sim = simulation_of(e);
  if (sim.clock().running())
    throw StateError(std::string(op) + ": the clock is running (block rounds run between runs)");
  return Clock::workers(sim.clock().numThreads());
}

}  // namespace

comm::BlockOwners owners(const Element& e, const char* op) {
  const DataElement& d = data_element(e, op);
  const int P = d.context().layout().numNodes;
  std::vector<int> firsts(static_cast<std::size_t>(P) + 1);
  for (int r = 0; r < P; ++r)
    firsts[static_cast<std::size_t>(r)] = static_cast<int>(block_range(d.numData(), P, r).first);
  firsts.back() = static_cast<int>(d.numData());
  return comm::BlockOwners(std::move(firsts));
}

void run(const Element& e, const comm::Partners& p, const ObjectFn& fn, const char* op) {
  const comm::BlockOwners o = owners(e, op);
  if (p.nblocks() != o.nblocks())
    throw ValueError(std::string(op) + ": the partners' grid has " + std::to_string(p.nblocks()) +
                     " blocks, " + e.path() + " has " + std::to_string(o.nblocks()) +
                     " entries (one block per entry: divisions must multiply to the entry count)");
  const unsigned threads = threads_of(e, op);
  const auto& d = static_cast<const DataElement&>(e);
  simulation_of(e).blockRounds().reduce(
      o, p, [&](int gid, comm::ReduceProxy& rp) { fn(d.localData(static_cast<Index>(gid)), rp); },
      threads);
}

void run_all_to_all(const Element& e, int k, const ObjectFn& fn, const char* op) {
  const comm::BlockOwners o = owners(e, op);
  if (k < 2)
    throw ValueError(std::string(op) + ": k = " + std::to_string(k) +
                     " (the radix must be >= 2: groups of k blocks per round)");
  const unsigned threads = threads_of(e, op);
  const auto& d = static_cast<const DataElement&>(e);
  simulation_of(e).blockRounds().all_to_all(
      o, [&](int gid, comm::ReduceProxy& rp) { fn(d.localData(static_cast<Index>(gid)), rp); }, k,
      threads);
}

}  // namespace antler::blocks

// ---- the Shell's commands ----

namespace antler {

namespace {

const BlockFinfoBase* block_field(const Element* e, const std::string& field, const char* op) {
  const Finfo* f = e->cinfo()->findFinfo(field);
  if (!f || f->kind() != FinfoKind::blocks) {
    const auto valid = e->cinfo()->fieldNames(FinfoKind::blocks);
    throw FieldError(
        std::string(op) + ": '" + field + "' is not a block field of " + e->cinfo()->name() +
            " (block fields: " + (valid.empty() ? std::string("none") : join_names(valid)) + ")",
        e->cinfo()->name(), field, valid);
  }
  return static_cast<const BlockFinfoBase*>(f);
}

comm::Partners partners_of(const Element* e, const BlockSpec& s) {
  comm::BlockGrid grid = s.divisions.empty() ? comm::BlockGrid::line(static_cast<int>(e->numData()))
                                             : comm::BlockGrid(s.divisions);
  if (s.rounds.empty()) return comm::Partners(s.pattern, std::move(grid), s.k, s.contiguous);
  return comm::Partners(s.pattern, std::move(grid), s.rounds, s.contiguous);
}

void do_block_reduce(Simulation& sim, Id id, const std::string& field, std::uint8_t pattern,
                     std::int32_t k, bool contiguous, const std::vector<std::int32_t>& divisions,
                     const std::vector<std::int32_t>& rounds) {
  const char* op = "blockReduce";
  Element* e = shell_detail::require_element(sim, ObjId(id), op);
  blocks::owners(*e, op);  // a distributed data element, before the field's checks
  const BlockFinfoBase* bf = block_field(e, field, op);
  if (pattern > static_cast<std::uint8_t>(comm::Pattern::allReduce))
    throw ValueError("blockReduce: unknown pattern " + std::to_string(pattern) +
                     " (merge, swap, broadcast, allReduce)");
  if (rounds.size() % 2)
    throw ValueError("blockReduce: explicit rounds come as (dimension, group size) pairs");
  BlockSpec s;
  s.pattern = static_cast<comm::Pattern>(pattern);
  s.k = k;
  s.contiguous = contiguous;
  s.divisions.assign(divisions.begin(), divisions.end());
  for (std::size_t i = 0; i + 1 < rounds.size(); i += 2)
    s.rounds.push_back({rounds[i], rounds[i + 1]});
  const comm::Partners p = partners_of(e, s);
  blocks::run(
      *e, p, [&](char* o, comm::ReduceProxy& rp) { bf->call(o, rp, p); }, op);
}

void do_all_to_all(Simulation& sim, Id id, const std::string& field, std::int32_t k) {
  const char* op = "allToAll";
  Element* e = shell_detail::require_element(sim, ObjId(id), op);
  blocks::owners(*e, op);
  const BlockFinfoBase* bf = block_field(e, field, op);
  if (k < 2)
    throw ValueError("allToAll: k = " + std::to_string(k) +
                     " (the radix must be >= 2: groups of k blocks per round)");
  // The partners the rounds run on, for a function that takes them (a line, distance halving).
  const comm::Partners p(comm::Pattern::swap,
                         comm::BlockGrid::line(std::max<int>(1, static_cast<int>(e->numData()))), k,
                         false);
  blocks::run_all_to_all(
      *e, k, [&](char* o, comm::ReduceProxy& rp) { bf->call(o, rp, p); }, op);
}

}  // namespace

namespace shell_detail {
void block_reduce_handler(Simulation& sim, Reader& r, Writer& w) {
  handler<BlockReduce, do_block_reduce>()(sim, r, w);
}
void all_to_all_handler(Simulation& sim, Reader& r, Writer& w) {
  handler<AllToAll, do_all_to_all>()(sim, r, w);
}
}  // namespace shell_detail

void Shell::blockReduce(ObjId element, std::string_view field, const BlockSpec& spec) {
  std::vector<std::int32_t> rounds;
  for (const comm::RoundK& r : spec.rounds) {
    rounds.push_back(r.dim);
    rounds.push_back(r.size);
  }
  std::vector<std::int32_t> div(spec.divisions.begin(), spec.divisions.end());
  dispatch(shell_detail::BlockReduce::encode(
      element.id, std::string(field), static_cast<std::uint8_t>(spec.pattern),
      static_cast<std::int32_t>(spec.k), spec.contiguous, div, rounds));
}

void Shell::blockReduce(std::string_view path, std::string_view field, const BlockSpec& spec) {
  blockReduce(resolve_path(sim_.elements(), absolute(path), "blockReduce"), field, spec);
}

void Shell::allToAll(ObjId element, std::string_view field, int k) {
  dispatch(
      shell_detail::AllToAll::encode(element.id, std::string(field), static_cast<std::int32_t>(k)));
}

void Shell::allToAll(std::string_view path, std::string_view field, int k) {
  allToAll(resolve_path(sim_.elements(), absolute(path), "allToAll"), field, k);
}

}  // namespace antler
