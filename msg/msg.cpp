#include "msg/msg.hpp"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.hpp"
#include "core/huge_pages.hpp"
#include "core/random.hpp"
#include "msg/context.hpp"

namespace antler {

const char* to_string(MsgKind k) {
  for (const MsgKindInfo& i : msg_kinds())
    if (i.kind == k) return i.name;
  return "?";
}

MsgKind parse_msg_kind(std::string_view name, std::string_view op) {
  std::vector<std::string> names;
  for (const MsgKindInfo& i : msg_kinds()) {
    if (name == i.name) return i.kind;
    names.emplace_back(i.name);
  }
  throw MsgError(std::string(op) + ": unknown message kind '" + std::string(name) +
                 "' (kinds: " + join_names(names) + ")");
}

Msg::Msg(std::uint32_t id, MsgKind kind, Element* src, Element* dest, const Finfo* sf,
         const Finfo* df)
    : id_(id), kind_(kind), src_(src), dest_(dest), srcFinfo_(sf), destFinfo_(df) {}

void Msg::deliver(const DestFinfoBase* func, Index d, Index f, const char* args,
                  std::size_t argBytes, Index lo, Index hi) const {
  switch (kind_) {
    case MsgKind::single: {
      auto* m = static_cast<const SingleMsg*>(this);
      const Target from = m->from(), to = m->to();
      if (from.data == d && (!src_->isField() || from.field == f) && to.data >= lo && to.data < hi)
        func->callTargets(dest_, args, argBytes, &to.data, &to.field, 1);
      return;
    }
    case MsgKind::oneToOne: {
      if (d >= lo && d < hi) {
        const Index tf = (src_->isField() && dest_->isField()) ? f : 0;
        func->callTargets(dest_, args, argBytes, &d, &tf, 1);
      }
      return;
    }
    case MsgKind::diagonal: {
      const long j = static_cast<long>(d) + static_cast<const DiagonalMsg*>(this)->stride();
      if (j >= static_cast<long>(lo) && j < static_cast<long>(hi)) {
        const Index t = static_cast<Index>(j);
        func->callTargets(dest_, args, argBytes, &t, nullptr, 1);
      }
      return;
    }
    case MsgKind::oneToAll:
      if (lo < hi) func->callRange(dest_, args, argBytes, lo, hi);
      return;
    case MsgKind::sparse: {
      auto* sm = static_cast<const SparseMsg*>(this);
      auto [first, e] = sm->row(d);
      if (first == e) return;
      const Index* last = e;
      if (!(*first >= lo && *(e - 1) < hi)) {  // not the whole row (always, with one thread)
        // Rows are sorted by data index: skip to this thread's slice, stop past it.
        first = std::lower_bound(first, e, lo);
        last = first;
        while (last != e && *last < hi) ++last;
        if (last == first) return;
      }
      const std::size_t n = static_cast<std::size_t>(last - first);
      if (const EdgeStoreBase* s = sm->store())
        func->callEdges(dest_, args, argBytes, first, n, *s, sm->slotOf(d, first), *sm,
                        sm->entryOf(first));
      else
        func->callTargets(dest_, args, argBytes, first,
                          dest_->isField() ? sm->fieldIndices() + sm->entryOf(first) : nullptr, n);
      return;
    }
    case MsgKind::reduce:
      return;  // reductions do not travel as queued sends
  }
}

std::vector<Target> Msg::targets(Index d, Index f) const {
  std::vector<Target> out;
  const Index n = dest_->numData();
  switch (kind_) {
    case MsgKind::single: {
      auto* m = static_cast<const SingleMsg*>(this);
      if (m->from().data == d && (!src_->isField() || m->from().field == f)) out.push_back(m->to());
      break;
    }
    case MsgKind::oneToOne:
      if (d < n) out.push_back({d, (src_->isField() && dest_->isField()) ? f : 0});
      break;
    case MsgKind::diagonal: {
      const long j = static_cast<long>(d) + static_cast<const DiagonalMsg*>(this)->stride();
      if (j >= 0 && j < static_cast<long>(n)) out.push_back({static_cast<Index>(j), 0});
      break;
    }
    case MsgKind::oneToAll:
      for (Index i = 0; i < n; ++i) out.push_back({i, 0});
      break;
    case MsgKind::sparse: {
      auto* m = static_cast<const SparseMsg*>(this);
      if (d < m->numRows()) {
        auto [b, e] = m->row(d);
        const Index* f = m->fieldIndices() + m->entryOf(b);
        for (const Index* t = b; t != e; ++t) out.push_back({*t, *f++});
      }
      break;
    }
    case MsgKind::reduce:
      break;
  }
  return out;
}

SparseMsg::SparseMsg(std::uint32_t id, Element* src, Element* dest, const Finfo* sf,
                     const Finfo* df)
    : Msg(id, MsgKind::sparse, src, dest, sf, df), rowStart_(src->numData() + 1, 0) {}

// The store is not given back here: MsgTable::erase does that while the destination exists (the
// whole table is destroyed only at exit, when nothing reads the arrays again).
SparseMsg::~SparseMsg() = default;

void SparseMsg::setRandomConnectivity(double p, std::uint64_t seed) {
  if (!(p >= 0.0 && p <= 1.0))
    throw ValueError("setRandomConnectivity: probability " + std::to_string(p) +
                     " is not in [0, 1]");
  const Index nsrc = src()->numData(), ndest = dest()->numData();
  Offsets rs(static_cast<std::size_t>(nsrc) + 1, 0);
  Columns ent;
  if (p > 0.0)
    ent.reserve(static_cast<std::size_t>(p * nsrc * static_cast<double>(ndest) * 1.05) + 16);
  // Each row draws from its own stream keyed by (seed, row), so the matrix does not depend on the
  // node count. Gaps between connections are geometric: O(entries), not O(rows x columns).
  const double logq = p < 1.0 ? std::log1p(-p) : 0.0;
  for (Index i = 0; i < nsrc; ++i) {
    if (p > 0.0) {
      Rng rng(seed, i);
      double j = -1;
      for (;;) {
        if (p >= 1.0)
          j += 1;
        else
          j += 1 + std::floor(std::log(rng.uniformPositive()) / logq);
        if (j >= ndest) break;
        ent.push_back(static_cast<Index>(j));
      }
    }
    rs[i + 1] = ent.size();
  }
  setEntries(std::move(rs), std::move(ent));
}

void SparseMsg::pairFill(std::span<const Index> srcIdx, std::span<const Index> destIdx) {
  if (srcIdx.size() != destIdx.size())
    throw ValueError("pairFill: " + std::to_string(srcIdx.size()) + " source indices but " +
                     std::to_string(destIdx.size()) + " destination indices (they must pair up)");
  const Index nsrc = src()->numData(), ndest = dest()->numData();
  for (std::size_t k = 0; k < srcIdx.size(); ++k) {
    if (srcIdx[k] >= nsrc)
      throw IndexError("pairFill: source index " + std::to_string(srcIdx[k]) +
                       " out of range for " + src()->path() + ", which has " +
                       std::to_string(nsrc) + " entries");
    if (destIdx[k] >= ndest)
      throw IndexError("pairFill: destination index " + std::to_string(destIdx[k]) +
                       " out of range for " + dest()->path() + ", which has " +
                       std::to_string(ndest) + " entries");
  }
  Offsets rs(static_cast<std::size_t>(nsrc) + 1, 0);
  for (Index s : srcIdx) ++rs[s + 1];
  std::partial_sum(rs.begin(), rs.end(), rs.begin());
  Columns ent(srcIdx.size());
  std::vector<std::uint64_t> fill(rs.begin(), rs.end() - 1);
  for (std::size_t k = 0; k < srcIdx.size(); ++k) ent[fill[srcIdx[k]]++] = destIdx[k];
  for (Index i = 0; i < nsrc; ++i)
    std::sort(ent.begin() + static_cast<long>(rs[i]), ent.begin() + static_cast<long>(rs[i + 1]));
  setEntries(std::move(rs), std::move(ent));
}

void SparseMsg::forEachPairField(std::span<const Index> srcIdx, std::span<const Index> destIdx,
                                 const std::function<void(std::size_t, Index)>& fn) const {
  if (!dest()->isField()) throw InternalError("forEachPairField: the destination is not a field");
  auto* fe = static_cast<const FieldElement*>(dest());
  const Index lo = fe->localBegin(), hi = fe->localEnd();
  // A stable counting sort of the pairs by key (the pairs in `in` order, or 0 .. n-1).
  auto by = [&]<class K>(std::span<const Index> key, Index keys, const std::vector<K>* in) {
    std::vector<std::uint64_t> start(static_cast<std::size_t>(keys) + 1, 0);
    for (Index x : key) ++start[x + 1];
    std::partial_sum(start.begin(), start.end(), start.begin());
    std::vector<K> out(key.size());
    for (std::size_t i = 0; i < key.size(); ++i) {
      const K k = in ? (*in)[i] : static_cast<K>(i);
      out[start[key[k]]++] = k;
    }
    return out;
  };
  // Pairs by parent, each parent's in row order (by source, then as given): its field order.
  auto visit = [&]<class K>(K) {
    std::vector<K> order;
    if (std::is_sorted(srcIdx.begin(), srcIdx.end())) {
      order = by(destIdx, dest()->numData(), static_cast<const std::vector<K>*>(nullptr));
    } else {
      const std::vector<K> bySource =
          by(srcIdx, src()->numData(), static_cast<const std::vector<K>*>(nullptr));
      order = by(destIdx, dest()->numData(), &bySource);
    }
    Index parent = lo, f = 0;
    for (K k : order) {
      const Index d = destIdx[k];
      if (d < lo || d >= hi) continue;
      if (d != parent) {
        parent = d;
        f = 0;
      }
      fn(k, (filled_ ? base_[d - lo] : 0) + f++);
    }
  };
  if (srcIdx.size() <= std::numeric_limits<std::uint32_t>::max())
    visit(std::uint32_t{});
  else
    visit(std::uint64_t{});
}

bool SparseMsg::forEachPairSlot(std::span<const Index> srcIdx, std::span<const Index> destIdx,
                                const std::function<void(std::size_t, std::uint64_t)>& fn) const {
  if (!store_ || !std::is_sorted(srcIdx.begin(), srcIdx.end())) return false;
  std::vector<std::size_t> block;
  std::size_t p = 0;
  const std::size_t n = srcIdx.size();
  for (std::size_t r = 0; r < numRows() && p < n; ++r) {
    std::size_t q = p;
    while (q < n && srcIdx[q] == r) ++q;
    if (q == p) continue;
    block.resize(q - p);
    std::iota(block.begin(), block.end(), p);
    std::stable_sort(block.begin(), block.end(),
                     [&](std::size_t a, std::size_t b) { return destIdx[a] < destIdx[b]; });
    const std::size_t first = localFirst_[r] - rowStart_[r];
    const std::uint64_t count = slotStart_[r + 1] - slotStart_[r];
    for (std::uint64_t i = 0; i < count; ++i) fn(block[first + i], slotStart_[r] + i);
    p = q;
  }
  return true;
}

void SparseMsg::setEntries(Offsets rowStart, Columns cols) {
  unlendAll();
  rowStart_ = std::move(rowStart);
  cols_ = std::move(cols);
  {
    std::lock_guard<std::mutex> g(fieldsLock_);
    Columns().swap(fields_);
    fieldsBuilt_.store(false, std::memory_order_release);
  }
  assignFields();
  src()->context().touchTopology();
}

SparseMsg::Columns SparseMsg::computeFields() const {
  // As assignFields counts: a local parent's entries from its count before the first fill, in
  // entry (row) order; a remote parent's from 0 (this node never delivers to those).
  Columns out(cols_.size(), 0);
  if (!dest()->isField()) return out;
  auto* fe = static_cast<const FieldElement*>(dest());
  const Index lo = fe->localBegin(), hi = fe->localEnd();
  std::vector<Index> count(dest()->numData(), 0);
  if (filled_)
    for (Index d = lo; d < hi; ++d) count[d] = base_[d - lo];
  for (std::size_t k = 0; k < cols_.size(); ++k) out[k] = count[cols_[k]]++;
  return out;
}

const Index* SparseMsg::fieldIndices() const {
  if (!fieldsBuilt_.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> g(fieldsLock_);
    if (!fieldsBuilt_.load(std::memory_order_relaxed)) {
      fields_ = computeFields();
      fieldsBuilt_.store(true, std::memory_order_release);
    }
  }
  return fields_.data();
}

void SparseMsg::assignFields() {
  if (!dest()->isField()) return;
  // Field index of an entry = the parent's entries before this message's, plus how many entries of
  // this message reached the same parent before it (in row order): computeFields, when asked.
  // Here each local parent's array is sized to match. Only a parent's owner delivers to it, so
  // only local parents need their real offsets. A refill of this message starts again from the
  // counts before its first fill.
  auto* fe = static_cast<FieldElement*>(dest());
  const Index lo = fe->localBegin(), hi = fe->localEnd();
  if (!filled_) {
    base_.resize(hi - lo);
    for (Index d = lo; d < hi; ++d) base_[d - lo] = fe->numField(d);
    filled_ = true;
  }
  std::vector<Index> count(dest()->numData(), 0);
  for (Index d = lo; d < hi; ++d) count[d] = base_[d - lo];
  std::vector<Index> mine(dest()->numData(), 0);
  for (Index t : cols_) {
    ++count[t];
    ++mine[t];
  }
  // An EdgeArray grows as it is lent the new entries (lendAll): they are born in the message's
  // store, never allocated in the array first. Other arrays, and shrinking, are sized here.
  const bool lends = fe->finfo()->hasEdgeStore();
  for (Index d = lo; d < hi; ++d)
    if (!lends || count[d] < fe->numField(d)) fe->setNumField(d, count[d]);
  lendAll();
#ifdef __GLIBC__
  // Growing the parents' arrays freed their old pointer vectors, small blocks the heap keeps
  // resident; give the whole pages among them back (tens of bytes per synapse on a large fill).
  malloc_trim(0);
#endif
  // fieldDimension is replicated metadata: update it from what every node knows alike (this
  // message's counts); Shell::doSyncDataHandler makes it exact.
  Index mx = fe->fieldDimension();
  for (Index c : mine) mx = std::max(mx, c);
  fe->setFieldDimension(mx);
}

void SparseMsg::lendAll() {
  auto* fe = static_cast<FieldElement*>(dest());
  if (!fe->finfo()->hasEdgeStore()) return;
  const Index lo = fe->localBegin(), hi = fe->localEnd();
  const std::size_t rows = numRows();
  slotStart_.assign(rows + 1, 0);
  localFirst_.assign(rows, 0);
  std::size_t slots = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    // Rows are sorted by data index: this node's entries are one run of each row.
    const Index* b = cols_.data() + rowStart_[r];
    const Index* e = cols_.data() + rowStart_[r + 1];
    const Index* first = std::lower_bound(b, e, lo);
    const Index* last = first;
    while (last != e && *last < hi) ++last;
    localFirst_[r] = static_cast<std::uint64_t>(first - cols_.data());
    slotStart_[r] = slots;
    slots += static_cast<std::size_t>(last - first);
  }
  slotStart_[rows] = slots;
  store_ = fe->finfo()->makeEdgeStore(slots);
  MsgTable& table = msg_context(*dest()).msgs();
  store_->setRestorer([this] { restoreLent(); }, table.compaction());
  table.addLender(id());
  const FieldElementFinfoBase* fi = fe->finfo();
  std::vector<char*> parents;
  std::vector<std::size_t> sizes;
  byParent([&](char* parent, const Index* f, const std::uint64_t* slot,
               std::size_t n) { fi->lend(parent, f, slot, n, *store_); },
           [&](const std::vector<char*>& run, const std::uint64_t* start, const Index* field) {
             // Each array's size once lent its entries; the arrays that grow are regrown together.
             parents.clear();
             sizes.clear();
             for (std::size_t k = 0; k < run.size(); ++k) {
               const std::size_t now = fi->getNum(run[k]);
               std::size_t top = now;
               for (std::uint64_t j = start[k]; j < start[k + 1]; ++j)
                 top = std::max<std::size_t>(top, std::size_t{field[j]} + 1);
               if (top > now) {
                 parents.push_back(run[k]);
                 sizes.push_back(top);
               }
             }
             fi->reserve(parents.data(), sizes.data(), parents.size());
           });
}

void SparseMsg::restoreLent() const {
  const FieldElementFinfoBase* fi = static_cast<const FieldElement*>(dest())->finfo();
  byParent([&](char* parent, const Index* f, const std::uint64_t* slot, std::size_t n) {
    fi->restore(parent, f, slot, n, *store_);
  });
}

std::size_t SparseMsg::compactLent() {
  if (!store_ || !store_->sweepNow()) return 0;
  auto* fe = static_cast<FieldElement*>(dest());
  const FieldElementFinfoBase* fi = fe->finfo();
  const DataElement* parent = fe->parentData();
  std::size_t n = 0;
  for (Index d = fe->localBegin(); d < fe->localEnd(); ++d)
    n += fi->compact(parent->localData(d), *store_);
  store_->setSwept();
  return n;
}

void SparseMsg::unlendAll() {
  if (!store_) return;
  if (EdgeCompaction* c = store_->compaction()) c->restoreAll();  // unlend reads the addresses
  auto* fe = static_cast<FieldElement*>(dest());
  byParent([&](char* parent, const Index* f, const std::uint64_t* slot, std::size_t n) {
    fe->finfo()->unlend(parent, f, slot, n, *store_);
  });
  store_.reset();
}

template <class Fn>
void SparseMsg::byParent(Fn fn) const {
  byParent(fn, [](const std::vector<char*>&, const std::uint64_t*, const Index*) {});
}

template <class Fn, class Before>
void SparseMsg::byParent(Fn fn, Before before) const {
  // The local entries grouped by parent (a counting sort), so that each parent's array is
  // visited once, in order. The parents go in runs of about kRun entries, so that the grouped
  // copy of fields and slots is 12 MB at most whatever the message's size (not 12 B for each of
  // its 1e8 synapses); rows are sorted by data index, so each row's cursor carries over from one
  // run to the next.
  constexpr std::size_t kRun = std::size_t{1} << 20;
  auto* fe = static_cast<FieldElement*>(dest());
  const Index lo = fe->localBegin(), hi = fe->localEnd();
  const std::size_t rows = numRows();
  std::vector<std::uint64_t> count(static_cast<std::size_t>(hi - lo), 0);
  for (std::size_t r = 0; r < rows; ++r) {
    const Index* t = cols_.data() + localFirst_[r];
    for (std::uint64_t k = slotStart_[r]; k < slotStart_[r + 1]; ++k, ++t) ++count[*t - lo];
  }
  std::vector<std::uint64_t> cursor(slotStart_.begin(),
                                    slotStart_.end() - 1);  // next slot, per row
  std::vector<std::uint64_t> start, fill;
  // Mapped on their own (HugeAllocator): a run's 12 MB go back to the system when done.
  std::vector<Index, HugeAllocator<Index>> field;
  std::vector<std::uint64_t, HugeAllocator<std::uint64_t>> slot;
  std::vector<char*> run;
  const DataElement* parent = fe->parentData();
  for (Index d0 = lo; d0 < hi;) {
    Index d1 = d0;
    std::size_t n = 0;
    while (d1 < hi && (d1 == d0 || n + count[d1 - lo] <= kRun)) n += count[d1++ - lo];
    start.assign(static_cast<std::size_t>(d1 - d0) + 1, 0);
    for (Index d = d0; d < d1; ++d) start[d - d0 + 1] = start[d - d0] + count[d - lo];
    fill.assign(start.begin(), start.end() - 1);
    field.resize(n);
    slot.resize(n);
    for (std::size_t r = 0; r < rows; ++r) {
      std::uint64_t k = cursor[r];
      const Index* t = cols_.data() + localFirst_[r] + (k - slotStart_[r]);
      for (; k < slotStart_[r + 1] && *t < d1; ++k, ++t) {
        // Parent *t's entries come in row order, as assignFields counted them: the rank of this
        // one among them gives its field index.
        const std::uint64_t at = fill[*t - d0]++;
        field[at] = base_[*t - lo] + static_cast<Index>(at - start[*t - d0]);
        slot[at] = k;
      }
      cursor[r] = k;
    }
    // The run's parents with entries, and where their entries start (before(run, start, field)
    // sees the same: parent k's fields are field[start[k] .. start[k + 1])).
    run.clear();
    std::size_t kept = 0;
    for (Index d = d0; d < d1; ++d)
      if (start[d - d0] != start[d - d0 + 1]) {
        run.push_back(parent->localData(d));
        start[kept++] = start[d - d0];
      }
    start[kept] = n;
    before(run, start.data(), field.data());
    for (std::size_t k = 0; k < run.size(); ++k)
      fn(run[k], field.data() + start[k], slot.data() + start[k], start[k + 1] - start[k]);
    d0 = d1;
  }
}

Msg* MsgTable::insert(std::unique_ptr<Msg> m, const SrcFinfoBase* srcFinfo,
                      const DestFinfoBase* func) {
  if (m->id() != nextId()) throw InternalError("message inserted out of id order");
  Msg* raw = m.get();
  msgs_.push_back(std::move(m));
  if (srcFinfo) raw->src()->addConn(srcFinfo->bindIndex(), Conn{raw, func});
  raw->src()->msgIds().push_back(raw->id());
  if (raw->dest() != raw->src()) raw->dest()->msgIds().push_back(raw->id());
  raw->src()->context().touchTopology();
  return raw;
}

void MsgTable::erase(std::uint32_t id, bool destStays) {
  Msg* m = get(id);
  if (!m) return;
  if (destStays && m->kind() == MsgKind::sparse) static_cast<SparseMsg*>(m)->unlendAll();
  m->src()->dropConnsTo(m);
  std::erase(m->src()->msgIds(), id);
  std::erase(m->dest()->msgIds(), id);
  m->src()->context().touchTopology();
  msgs_[id].reset();
}

void MsgTable::addLender(std::uint32_t id) {
  if (std::find(lenders_.begin(), lenders_.end(), id) == lenders_.end()) lenders_.push_back(id);
}

std::size_t MsgTable::compactEdgeArrays() {
  std::size_t n = 0;
  std::lock_guard<std::mutex> g(compaction_.lock());
  std::erase_if(lenders_, [&](std::uint32_t id) {
    Msg* m = get(id);
    if (!m || m->kind() != MsgKind::sparse || !static_cast<SparseMsg*>(m)->store()) return true;
    n += static_cast<SparseMsg*>(m)->compactLent();
    return false;
  });
#ifdef __GLIBC__
  if (n) malloc_trim(0);  // the arrays' address vectors, freed side by side
#endif
  return n;
}

void MsgTable::eraseTouching(Element* e) {
  // A message into the subtree need not give its destination's entries back.
  const ElementTable& t = e->context().elements();
  auto inside = [e, &t](const Element* x) {
    for (;;) {
      if (x == e) return true;
      if (x->id() == Id::root()) return false;
      x = t.get(x->parent());
    }
  };
  std::vector<Element*> stack{e};
  while (!stack.empty()) {
    Element* x = stack.back();
    stack.pop_back();
    for (Id c : x->children())
      if (Element* k = t.get(c)) stack.push_back(k);
    const std::vector<std::uint32_t> ids = x->msgIds();
    for (auto id : ids)
      if (Msg* m = get(id)) erase(id, !inside(m->dest()));
  }
}

void DiagonalMsg::setStride(long s) {
  stride_ = s;
  src()->context().touchTopology();
}

MsgContext::MsgContext(NodeLayout layout) : Context(layout), post_(*this) {}

MsgContext::~MsgContext() {
  msgs_.clear();
}

void MsgTable::clear() {
  for (std::uint32_t i = 0; i < msgs_.size(); ++i) erase(i, /*destStays=*/false);
}

std::vector<Msg*> MsgTable::all() const {
  std::vector<Msg*> out;
  for (auto& m : msgs_)
    if (m) out.push_back(m.get());
  return out;
}

}  // namespace antler
