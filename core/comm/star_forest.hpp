#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// StarForest: communication between the roots and leaves of a star forest (Jed Brown's model,
/// as PETSc's PetscSF implements it). Each rank owns some roots and some leaves; a leaf names
/// at most one root anywhere, as (rank, index). Only the leaf side names edges, so a root of any
/// degree costs its owner nothing to describe. Data moves along the edges:
///
///   bcast        root -> each of its leaves (replacing, or combined into the leaf with an op)
///   reduce       each leaf -> its root, combined with an op (sum, prod, max, min, land, lor,
///                band, bor, replace, maxloc, minloc, or any antler reduce class)
///   fetchAndOp   reduce, and each leaf receives its root's value just before its own update
///   gather       every leaf's unit into its own slot at its root (the multi-root forest)
///   scatter      the reverse of gather
///   bcastv       variable-size byte payloads, root -> leaves
///   reducev      variable-size byte payloads, leaves -> root, merged by a byte function
///
///   comm::StarForest sf(c);
///   sf.setGraph(nroots, nleaves, {}, remote);        // leaf i's root is remote[i]
///   sf.setUp();                                      // collective: builds the two-sided graph
///   sf.bcastBegin(std::span<const double>(owned), std::span<double>(ghosts));
///   ... work that needs neither buffer ...
///   sf.bcastEnd(std::span<const double>(owned), std::span<double>(ghosts));
///   sf.reduce(std::span<const double>(ghosts), std::span<double>(owned), comm::ops::sum{});
///
/// Every operation is split into Begin and End, with any number in flight on distinct output
/// buffers (End matches its Begin by operation and output buffer, in any order). While one is in
/// flight its buffers must stay alive and unchanged; its output is undefined until End. Each
/// operation is collective over the forest's communicator: every rank calls every Begin, in
/// the same order (Ends in any order), as with MPI's non-blocking collectives.
///
/// Units: any trivially copyable T, `bs` units per vertex (block size; data of vertex i is
/// [i*bs, i*bs + bs)); any other type antler can serialize (core/buffer.hpp: Boost-serializable
/// classes, strings, vectors) travels serialized, per vertex. An op that does not fit the unit
/// (band on double, maxloc on a plain number) does not compile.
///
/// Determinism, beyond PETSc. reduce, fetchAndOp and reducev apply the leaves of one root in
/// one fixed order: by leaf rank, then by leaf index on that rank, starting from the root's own
/// value (root = (((root . l1) . l2) ...)). fetchAndOp's leaf l_k receives root . l1 ... l_(k-1).
/// So floating-point results and fetched values are bit-identical from run to run, whichever
/// backend moved the bytes and in whatever order messages arrived; and for one global graph
/// whose leaves are numbered in rank order (rank 0's leaves first, a contiguous block per rank)
/// they are the same for any number of ranks. (PETSc documents its FetchAndOp results as
/// non-deterministic, and unpacks its reductions in arrival order where MPI allows.) gather puts
/// a root's leaves in its multi-root slots in the same order.
///
/// Backends (setUp picks one from values every rank agrees on, never from one rank's sizes):
///   p2p         point-to-point messages along the two-sided graph built at setUp (default)
///   neighbour   an MPI distributed-graph communicator and MPI_Ineighbor_alltoallv
///   allgatherv  one allgatherv of every rank's packed data; chosen for small dense graphs
/// setBackend() or ANTLER_SF_BACKEND=p2p|neighbour|allgatherv forces one. All run on
/// comm::Local, whose counters show who sends what. Edges whose leaf and root are on one rank
/// never become messages.
///
/// Bad input — a negative or out-of-range root or leaf, a leaf naming a rank >= P, a leaf listed
/// twice in ilocal — is found by setUp and raised on every rank (IndexError or ValueError naming
/// the leaf, the root and the valid range), never a hang. Misuse of Begin/End (End without
/// Begin, two operations in flight on one output buffer, End with another unit, block size or
/// op than its Begin, any operation before setUp, buffers shorter than the graph needs) is a
/// StateError, ValueError or IndexError on the rank that misused it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "core/buffer.hpp"
#include "core/comm/collectives.hpp"
#include "core/comm/comm.hpp"

namespace antler::comm {

/// A leaf's root: the rank that owns it and its index among that rank's roots.
struct SfNode {
  std::int64_t rank = -1;
  std::int64_t index = -1;
  bool operator==(const SfNode&) const = default;
};

namespace ops {
/// The incoming value replaces the old one (MPI_REPLACE). In a reduce, the last leaf in the
/// documented order wins.
struct replace {
  static constexpr OpKind kind = OpKind::none;
  template <class T>
  T operator()(const T&, const T& b) const {
    return b;
  }
};
}  // namespace ops

/// Variable-size byte payloads, one per vertex: payload i is bytes[offsets[i], offsets[i+1]).
class Payloads {
 public:
  Payloads() = default;
  /// n empty payloads.
  explicit Payloads(std::size_t n) : offsets_(n + 1, 0) {}
  std::size_t size() const { return offsets_.size() - 1; }
  std::span<const char> operator[](std::size_t i) const {
    return {bytes_.data() + offsets_[i], offsets_[i + 1] - offsets_[i]};
  }
  /// Appends a payload for the next vertex.
  void push_back(std::span<const char> b) {
    bytes_.insert(bytes_.end(), b.begin(), b.end());
    offsets_.push_back(bytes_.size());
  }
  void push_back(const std::string& s) { push_back(std::span<const char>(s.data(), s.size())); }
  void push_back(const char* s) { push_back(std::string(s)); }
  void clear() {
    bytes_.clear();
    offsets_.assign(1, 0);
  }
  const std::vector<char>& bytes() const { return bytes_; }
  bool operator==(const Payloads&) const = default;

 private:
  std::vector<char> bytes_;
  std::vector<std::size_t> offsets_{0};
};

/// How a forest moves its bytes (see the header comment).
enum class SfBackend : std::uint8_t { automatic, p2p, neighbour, allgatherv };
const char* to_string(SfBackend b);
/// The backend named s ("automatic", "p2p", "neighbour", "allgatherv"; else a ValueError
/// naming the valid names).
SfBackend parse_sf_backend(std::string_view s);

class StarForest {
 public:
  /// A forest over the ranks of c (its own duplicate of c: collective).
  explicit StarForest(const Comm& c);
  ~StarForest();
  StarForest(StarForest&&) noexcept;
  StarForest& operator=(StarForest&&) noexcept;
  StarForest(const StarForest&) = delete;
  StarForest& operator=(const StarForest&) = delete;

  /// This rank's roots (0..nroots-1) and leaves. ilocal: the leaf index of each of the nleaves
  /// leaves that have a root (empty: leaves 0..nleaves-1); iremote: each one's root. Leaf
  /// indices not in ilocal are leaves without a root, left alone by every operation. Checked
  /// by setUp, which must follow (again) before any operation.
  void setGraph(std::int64_t nroots, std::int64_t nleaves, std::vector<std::int64_t> ilocal,
                std::vector<SfNode> iremote);
  /// Forces a backend for the next setUp (automatic: chosen there; see the header).
  void setBackend(SfBackend b);
  /// Checks the graph, learns which ranks reference this rank's roots and in what order (a
  /// non-blocking consensus: comm/consensus.hpp) and chooses the backend. Collective.
  void setUp();
  bool isSetUp() const { return setUp_; }
  /// The backend setUp chose.
  SfBackend backend() const { return chosen_; }
  const Comm& comm() const { return comm_; }

  std::int64_t numRoots() const { return nroots_; }
  std::int64_t numLeaves() const { return nleaves_; }
  /// The number of units per block a leaf buffer needs: the largest leaf index + 1.
  std::int64_t leafExtent() const { return leafExtent_; }
  /// The leaf index of each leaf with a root (i, 0..nleaves-1, when setGraph was given none).
  std::int64_t leafIndex(std::int64_t i) const {
    return ilocal_.empty() ? i : ilocal_[static_cast<std::size_t>(i)];
  }
  std::span<const std::int64_t> ilocal() const { return ilocal_; }
  std::span<const SfNode> iremote() const { return iremote_; }
  /// The ranks owning roots that this rank's leaves reference (PETSc's root ranks), ascending.
  std::span<const int> rootRanks() const { return rootRanks_; }
  /// The ranks whose leaves reference this rank's roots (PETSc's leaf ranks), ascending.
  std::span<const int> leafRanks() const { return leafRanks_; }
  /// Each root's number of leaves (known since setUp: no communication).
  std::vector<std::int64_t> computeDegree() const;
  /// The multi-root forest: root r of this forest becomes degree(r) roots, one per leaf, in the
  /// documented order (leaf rank, then leaf index); its leaves are this forest's, each naming
  /// its own slot. Made on the first call (collective then), kept after.
  StarForest& multiForest();

  /// The forest from a's roots to c's leaves, where ab's leaves are bc's roots (leaf index i of
  /// ab is root i of bc): a leaf of bc whose root is a leaf of ab with a root keeps that root;
  /// other leaves of bc are dropped (PetscSFCompose). Collective.
  static StarForest compose(StarForest& ab, StarForest& bc);
  /// The forest with only the edges whose root is one of `roots` (this rank's root indices;
  /// PetscSFCreateEmbeddedRootSF). Collective.
  StarForest embedRoots(std::span<const std::int64_t> roots);

  /// Operations in flight.
  std::size_t inFlight() const { return pending_.size(); }

  // ---- bcast: root -> leaf, leaf = op(leaf, root) (replace: leaf = root) ----
  template <class T, class Op = ops::replace>
  void bcastBegin(std::span<const T> rootdata, std::span<T> leafdata, Op op = {},
                  std::size_t bs = 1);
  template <class T, class Op = ops::replace>
  void bcastEnd(std::span<const T> rootdata, std::span<T> leafdata, Op op = {}, std::size_t bs = 1);
  template <class T, class Op = ops::replace>
  void bcast(std::span<const T> rootdata, std::span<T> leafdata, Op op = {}, std::size_t bs = 1) {
    bcastBegin(rootdata, leafdata, op, bs);
    bcastEnd(rootdata, leafdata, op, bs);
  }

  // ---- reduce: leaf -> root, root = op(root, leaf) in the documented order ----
  template <class T, class Op>
  void reduceBegin(std::span<const T> leafdata, std::span<T> rootdata, Op op, std::size_t bs = 1);
  template <class T, class Op>
  void reduceEnd(std::span<const T> leafdata, std::span<T> rootdata, Op op, std::size_t bs = 1);
  template <class T, class Op>
  void reduce(std::span<const T> leafdata, std::span<T> rootdata, Op op, std::size_t bs = 1) {
    reduceBegin(leafdata, rootdata, op, bs);
    reduceEnd(leafdata, rootdata, op, bs);
  }

  // ---- fetchAndOp: leafupdate = the root's value before this leaf's update ----
  template <class T, class Op>
  void fetchAndOpBegin(std::span<T> rootdata, std::span<const T> leafdata, std::span<T> leafupdate,
                       Op op, std::size_t bs = 1);
  template <class T, class Op>
  void fetchAndOpEnd(std::span<T> rootdata, std::span<const T> leafdata, std::span<T> leafupdate,
                     Op op, std::size_t bs = 1);
  template <class T, class Op>
  void fetchAndOp(std::span<T> rootdata, std::span<const T> leafdata, std::span<T> leafupdate,
                  Op op, std::size_t bs = 1) {
    fetchAndOpBegin(rootdata, leafdata, leafupdate, op, bs);
    fetchAndOpEnd(rootdata, leafdata, leafupdate, op, bs);
  }

  // ---- gather / scatter: leaves <-> their own slots at the root (multiForest's roots) ----
  template <class T>
  void gatherBegin(std::span<const T> leafdata, std::span<T> multirootdata, std::size_t bs = 1) {
    multiForest().reduceBegin(leafdata, multirootdata, ops::replace{}, bs);
  }
  template <class T>
  void gatherEnd(std::span<const T> leafdata, std::span<T> multirootdata, std::size_t bs = 1) {
    multiForest().reduceEnd(leafdata, multirootdata, ops::replace{}, bs);
  }
  template <class T>
  void gather(std::span<const T> leafdata, std::span<T> multirootdata, std::size_t bs = 1) {
    gatherBegin(leafdata, multirootdata, bs);
    gatherEnd(leafdata, multirootdata, bs);
  }
  template <class T>
  void scatterBegin(std::span<const T> multirootdata, std::span<T> leafdata, std::size_t bs = 1) {
    multiForest().bcastBegin(multirootdata, leafdata, ops::replace{}, bs);
  }
  template <class T>
  void scatterEnd(std::span<const T> multirootdata, std::span<T> leafdata, std::size_t bs = 1) {
    multiForest().bcastEnd(multirootdata, leafdata, ops::replace{}, bs);
  }
  template <class T>
  void scatter(std::span<const T> multirootdata, std::span<T> leafdata, std::size_t bs = 1) {
    scatterBegin(multirootdata, leafdata, bs);
    scatterEnd(multirootdata, leafdata, bs);
  }

  // ---- variable-size payloads ----
  /// Merges a leaf's payload into its root's: acc holds the root's bytes so far.
  using ByteMerge = std::function<void(ByteBuffer& acc, std::span<const char> leaf)>;
  /// Appends the leaf's bytes (the default merge of reducev).
  static void append(ByteBuffer& acc, std::span<const char> leaf) {
    acc.append(leaf.data(), leaf.size());
  }
  /// leafdata becomes leafExtent() payloads: each leaf's root's payload (a leaf without a root
  /// keeps its payload from leafdata when leafdata had one, else an empty one).
  void bcastvBegin(const Payloads& rootdata, Payloads& leafdata);
  void bcastvEnd(const Payloads& rootdata, Payloads& leafdata);
  void bcastv(const Payloads& rootdata, Payloads& leafdata) {
    bcastvBegin(rootdata, leafdata);
    bcastvEnd(rootdata, leafdata);
  }
  /// rootdata (nroots payloads, or none: all empty) becomes each root's payload merged with its
  /// leaves' payloads in the documented order.
  void reducevBegin(const Payloads& leafdata, Payloads& rootdata);
  void reducevEnd(const Payloads& leafdata, Payloads& rootdata, const ByteMerge& merge = append);
  void reducev(const Payloads& leafdata, Payloads& rootdata, const ByteMerge& merge = append) {
    reducevBegin(leafdata, rootdata);
    reducevEnd(leafdata, rootdata, merge);
  }

 private:
  enum class Dir : std::uint8_t { rootToLeaf, leafToRoot };
  enum class Kind : std::uint8_t { bcast, reduce, fetchAndOp, bcastv, reducev };
  struct Transfer;  // bytes of one operation on their way (star_forest.cpp)
  struct Pending {  // one operation between Begin and End
    Kind kind;
    const void* out;   // the output buffer (the key End finds it by)
    const void* out2;  // fetchAndOp's leafupdate
    std::size_t outBytes = 0, out2Bytes = 0;
    const std::type_info* unit;
    const std::type_info* op;
    std::size_t bs;
    bool variable;  // payloads of any size (serialized units, bcastv, reducev)
    std::unique_ptr<Transfer> transfer;
    ~Pending();
  };
  struct Plan;

  // Non-template parts (star_forest.cpp).
  void requireSetUp(const char* op) const;
  /// Records an operation and sizes its transfer; the caller packs send() and calls start().
  Pending& begin(Kind k, Dir d, const char* name, const void* out, std::size_t outBytes,
                 const void* out2, std::size_t out2Bytes, const std::type_info& unit,
                 const std::type_info& op, std::size_t bs, std::size_t unitBytes, bool variable);
  /// Finds the operation End names (checking unit, bs and op), completes its transfer (unless
  /// told not to wait: then complete() does) and takes it out of flight. It stays valid until
  /// the next Begin, which reuses its buffers.
  Pending* end(Kind k, const char* name, const void* out, const std::type_info& unit,
               const std::type_info& op, std::size_t bs, bool wait = true);
  /// Completes the transfer of an operation end() took out of flight without waiting.
  void complete(Pending& p);
  ByteBuffer& sendBuffer(Pending& p);
  const ByteBuffer& recvBuffer(const Pending& p) const;
  void start(Pending& p);
  /// fetchAndOp's reply: the fetched values go back along the edges (inside End).
  void reply(Pending& p);
  void checkLength(const char* op, const char* what, std::size_t have, std::int64_t vertices,
                   std::size_t bs) const;

  // The two-sided graph (filled by setUp). Remote edges only; edges within this rank are self*.
  // Leaf side: rranks_ (the root ranks, ascending), roff_ (CSR over them), rleaf_ (the leaf
  // index of each edge, ascending within a rank). Root side: lranks_, loff_, lroot_ (the root
  // index of each edge, in the sending rank's leaf order). lselfAt_: where in lroot_ the ranks
  // above this one start (the self edges go between, in the documented order).
  // Indices within one rank are 32-bit (setUp refuses more than 2^31 - 1 roots or leaves per
  // rank): half the memory traffic of the pack and unpack loops.
  using Idx = std::int32_t;
  std::vector<int> rranks_, lranks_;
  std::vector<std::int64_t> roff_{0}, loff_{0};
  std::vector<Idx> rleaf_, lroot_;
  std::vector<Idx> selfLeaf_, selfRoot_;
  std::size_t lselfAt_ = 0;

  /// out = the units of data at idx[0..n), in order (serialized types: [u64 length][bytes]).
  template <class T>
  static void pack(const T* data, const Idx* idx, std::size_t n, ByteBuffer& out, std::size_t bs);
  /// data[idx[k]] = op(data[idx[k]], unit k of the bytes at from), k = 0..n-1, in order; returns
  /// where the bytes read end.
  template <class T, class Op>
  static const char* unpack(T* data, const Idx* idx, std::size_t n, const char* from,
                            const char* end, std::size_t bs, Op& op);
  /// to[toIdx[k]] = op(to[toIdx[k]], from[fromIdx[k]]) for the edges within this rank.
  template <class T, class Op>
  static void local(T* to, const Idx* toIdx, const T* from, const Idx* fromIdx, std::size_t n,
                    std::size_t bs, Op& op);

  template <class T>
  static constexpr bool kFixed = std::is_trivially_copyable_v<T>;
  template <class T>
  static void load(T* out, const char* from, std::size_t bs) {
    std::memcpy(static_cast<void*>(out), from, sizeof(T) * bs);
  }
  template <class T>
  static void storeVertex(char* to, const T* v, std::size_t bs) {
    std::memcpy(to, static_cast<const void*>(v), sizeof(T) * bs);
  }
  /// Serialized units: one payload per edge, [u64 length][Codec bytes of bs units].
  template <class T>
  static void putVertex(ByteBuffer& b, const T* v, std::size_t bs) {
    const std::size_t at = b.size();
    b.grow(8);
    Writer w(b);
    for (std::size_t j = 0; j < bs; ++j) w.put<T>(v[j]);
    const std::uint64_t n = b.size() - at - 8;
    std::memcpy(b.data() + at, &n, 8);
  }
  template <class T>
  static void getVertex(Reader& r, T* v, std::size_t bs) {
    std::uint64_t n = 0;
    std::memcpy(&n, r.take(8), 8);
    Reader one(r.take(n), n);
    for (std::size_t j = 0; j < bs; ++j) v[j] = one.get<T>();
    if (one.left())
      throw CommError("StarForest: a unit of " + std::to_string(n) + " bytes read short");
  }
  template <class T, class Op>
  static void combine(T* acc, const T* v, std::size_t bs, Op& op) {
    for (std::size_t j = 0; j < bs; ++j) acc[j] = op(acc[j], v[j]);
  }

  Comm comm_;
  std::int64_t nroots_ = 0, nleaves_ = 0, leafExtent_ = 0;
  std::vector<std::int64_t> ilocal_;
  std::vector<SfNode> iremote_;
  std::vector<int> rootRanks_, leafRanks_;
  bool graphSet_ = false, setUp_ = false;
  SfBackend forced_ = SfBackend::automatic, chosen_ = SfBackend::p2p;
  std::shared_ptr<void> hoodRootToLeaf_, hoodLeafToRoot_;  // neighbour backend
  std::uint64_t transfers_ = 0;                            // started on this forest (tags)
  std::vector<std::unique_ptr<Pending>> pending_;
  std::vector<std::unique_ptr<Pending>> finished_;  // ended: their buffers serve the next ones
  std::unique_ptr<StarForest> multi_;
  std::vector<ByteBuffer> reducevAcc_;  // reducevEnd's per-root accumulators, kept between calls
};

// ---- templates ----

template <class T>
void StarForest::pack(const T* data, const Idx* idx, std::size_t n, ByteBuffer& out,
                      std::size_t bs) {
  if constexpr (kFixed<T>) {
    out.resize(n * sizeof(T) * bs);
    char* to = out.data();
    if (bs == 1) {
      for (std::size_t k = 0; k < n; ++k, to += sizeof(T))
        std::memcpy(to, static_cast<const void*>(data + idx[k]), sizeof(T));
    } else {
      for (std::size_t k = 0; k < n; ++k, to += sizeof(T) * bs)
        std::memcpy(to, static_cast<const void*>(data + static_cast<std::size_t>(idx[k]) * bs),
                    sizeof(T) * bs);
    }
  } else {
    out.clear();
    for (std::size_t k = 0; k < n; ++k)
      putVertex(out, data + static_cast<std::size_t>(idx[k]) * bs, bs);
  }
}

template <class T, class Op>
const char* StarForest::unpack(T* data, const Idx* idx, std::size_t n, const char* from,
                               const char* end, std::size_t bs, Op& op) {
  if constexpr (kFixed<T>) {
    (void)end;
    if (bs == 1) {
      for (std::size_t k = 0; k < n; ++k, from += sizeof(T)) {
        T v;
        std::memcpy(static_cast<void*>(&v), from, sizeof(T));
        T& d = data[idx[k]];
        d = op(d, v);
      }
    } else {
      for (std::size_t k = 0; k < n; ++k) {
        T* d = data + static_cast<std::size_t>(idx[k]) * bs;
        for (std::size_t j = 0; j < bs; ++j, from += sizeof(T)) {
          T v;
          std::memcpy(static_cast<void*>(&v), from, sizeof(T));
          d[j] = op(d[j], v);
        }
      }
    }
    return from;
  } else {
    Reader r(from, static_cast<std::size_t>(end - from));
    std::vector<T> v(bs);
    for (std::size_t k = 0; k < n; ++k) {
      getVertex(r, v.data(), bs);
      combine(data + static_cast<std::size_t>(idx[k]) * bs, v.data(), bs, op);
    }
    return r.position();
  }
}

template <class T, class Op>
void StarForest::local(T* to, const Idx* toIdx, const T* from, const Idx* fromIdx, std::size_t n,
                       std::size_t bs, Op& op) {
  if (bs == 1) {
    for (std::size_t k = 0; k < n; ++k) {
      T& d = to[toIdx[k]];
      d = op(d, from[fromIdx[k]]);
    }
  } else {
    for (std::size_t k = 0; k < n; ++k)
      combine(to + static_cast<std::size_t>(toIdx[k]) * bs,
              from + static_cast<std::size_t>(fromIdx[k]) * bs, bs, op);
  }
}

template <class T, class Op>
void StarForest::bcastBegin(std::span<const T> root, std::span<T> leaf, Op, std::size_t bs) {
  requireSetUp("bcastBegin");
  checkLength("bcastBegin", "rootdata", root.size(), nroots_, bs);
  checkLength("bcastBegin", "leafdata", leaf.size(), leafExtent_, bs);
  Pending& p =
      begin(Kind::bcast, Dir::rootToLeaf, "bcastBegin", leaf.data(), leaf.size() * sizeof(T),
            nullptr, 0, typeid(T), typeid(Op), bs, sizeof(T) * bs, !kFixed<T>);
  pack(root.data(), lroot_.data(), lroot_.size(), sendBuffer(p), bs);
  start(p);
}

template <class T, class Op>
void StarForest::bcastEnd(std::span<const T> root, std::span<T> leaf, Op op, std::size_t bs) {
  auto p = end(Kind::bcast, "bcastEnd", leaf.data(), typeid(T), typeid(Op), bs, false);
  // This rank's own edges while the messages are still on their way.
  local(leaf.data(), selfLeaf_.data(), root.data(), selfRoot_.data(), selfLeaf_.size(), bs, op);
  complete(*p);
  const ByteBuffer& in = recvBuffer(*p);
  unpack(leaf.data(), rleaf_.data(), rleaf_.size(), in.data(), in.data() + in.size(), bs, op);
}

template <class T, class Op>
void StarForest::reduceBegin(std::span<const T> leaf, std::span<T> root, Op, std::size_t bs) {
  requireSetUp("reduceBegin");
  checkLength("reduceBegin", "leafdata", leaf.size(), leafExtent_, bs);
  checkLength("reduceBegin", "rootdata", root.size(), nroots_, bs);
  Pending& p =
      begin(Kind::reduce, Dir::leafToRoot, "reduceBegin", root.data(), root.size() * sizeof(T),
            nullptr, 0, typeid(T), typeid(Op), bs, sizeof(T) * bs, !kFixed<T>);
  pack(leaf.data(), rleaf_.data(), rleaf_.size(), sendBuffer(p), bs);
  start(p);
}

template <class T, class Op>
void StarForest::reduceEnd(std::span<const T> leaf, std::span<T> root, Op op, std::size_t bs) {
  auto p = end(Kind::reduce, "reduceEnd", root.data(), typeid(T), typeid(Op), bs);
  const ByteBuffer& in = recvBuffer(*p);
  const char* end = in.data() + in.size();
  // Ranks below this one, this rank's own leaves, ranks above: the documented order.
  const char* from = unpack(root.data(), lroot_.data(), lselfAt_, in.data(), end, bs, op);
  local(root.data(), selfRoot_.data(), leaf.data(), selfLeaf_.data(), selfLeaf_.size(), bs, op);
  unpack(root.data(), lroot_.data() + lselfAt_, lroot_.size() - lselfAt_, from, end, bs, op);
}

template <class T, class Op>
void StarForest::fetchAndOpBegin(std::span<T> root, std::span<const T> leaf,
                                 std::span<T> leafupdate, Op, std::size_t bs) {
  requireSetUp("fetchAndOpBegin");
  checkLength("fetchAndOpBegin", "rootdata", root.size(), nroots_, bs);
  checkLength("fetchAndOpBegin", "leafdata", leaf.size(), leafExtent_, bs);
  checkLength("fetchAndOpBegin", "leafupdate", leafupdate.size(), leafExtent_, bs);
  Pending& p = begin(Kind::fetchAndOp, Dir::leafToRoot, "fetchAndOpBegin", root.data(),
                     root.size() * sizeof(T), leafupdate.data(), leafupdate.size() * sizeof(T),
                     typeid(T), typeid(Op), bs, sizeof(T) * bs, !kFixed<T>);
  pack(leaf.data(), rleaf_.data(), rleaf_.size(), sendBuffer(p), bs);
  start(p);
}

template <class T, class Op>
void StarForest::fetchAndOpEnd(std::span<T> root, std::span<const T> leaf, std::span<T> leafupdate,
                               Op op, std::size_t bs) {
  auto p = end(Kind::fetchAndOp, "fetchAndOpEnd", root.data(), typeid(T), typeid(Op), bs);
  // At the roots, in the documented order: fetch, then update; the fetched values of remote
  // edges go back in the reply.
  const ByteBuffer& in = recvBuffer(*p);
  ByteBuffer fetched;
  std::vector<T> v(bs);
  const char* from = in.data();
  std::unique_ptr<Reader> reader;
  if constexpr (!kFixed<T>) reader = std::make_unique<Reader>(in);
  if constexpr (kFixed<T>) fetched.resize(lroot_.size() * sizeof(T) * bs);
  char* to = fetched.data();
  auto remote = [&](std::size_t k0, std::size_t k1) {
    for (std::size_t k = k0; k < k1; ++k) {
      T* r = root.data() + static_cast<std::size_t>(lroot_[k]) * bs;
      if constexpr (kFixed<T>) {
        load(v.data(), from, bs);
        from += sizeof(T) * bs;
        storeVertex(to, r, bs);
        to += sizeof(T) * bs;
      } else {
        getVertex(*reader, v.data(), bs);
        putVertex(fetched, r, bs);
      }
      combine(r, v.data(), bs, op);
    }
  };
  remote(0, lselfAt_);
  for (std::size_t k = 0; k < selfLeaf_.size(); ++k) {
    T* r = root.data() + static_cast<std::size_t>(selfRoot_[k]) * bs;
    const std::size_t l = static_cast<std::size_t>(selfLeaf_[k]) * bs;
    for (std::size_t j = 0; j < bs; ++j) v[j] = leaf[l + j];  // leafupdate may alias leafdata
    for (std::size_t j = 0; j < bs; ++j) leafupdate[l + j] = r[j];
    combine(r, v.data(), bs, op);
  }
  remote(lselfAt_, lroot_.size());
  (void)to;
  sendBuffer(*p) = std::move(fetched);
  reply(*p);
  const ByteBuffer& back = recvBuffer(*p);
  ops::replace put;
  unpack(leafupdate.data(), rleaf_.data(), rleaf_.size(), back.data(), back.data() + back.size(),
         bs, put);
}

}  // namespace antler::comm
#pragma GCC visibility pop
