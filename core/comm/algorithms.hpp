#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// The collective algorithms of core/comm, on bytes. Typed front-ends are in collectives.hpp.
///
/// Every algorithm is named and can be forced; `vendor` is the MPI library's own call (on the
/// Local backend, a linear stand-in); `automatic` chooses from an alpha-beta cost model using
/// only what every rank agrees on (P, the algorithm family, a size every rank knows), never a
/// size one rank alone sees — ranks that chose different algorithms would hang.
///
/// Canonical fold order. For a given P, every reduce and all-reduce algorithm here combines the
/// contributions in one fixed order: the binomial tree over rank order, lower ranks on the left,
///
///     fold[a, a + 2m) = fold[a, a + m) . fold[a + m, a + 2m)   (the right part clipped at P)
///
/// so the result is bit-identical on every rank whichever algorithm moved the bytes, and choosing
/// an algorithm automatically can never change an answer. (The vendor call gives no such promise;
/// automatic uses it for a fold only when the order cannot matter: P <= 2 with a commutative op,
/// or an exact op such as integer sums, min, max, logical and bitwise ops.)
///
/// Ranks that disagree. Every call takes the next sequence number of its communicator, and every
/// message of antler's own algorithms carries (sequence, collective, algorithm, root): a rank
/// that receives a message of another call raises CollectiveMismatch naming both ranks and both
/// calls, and tells the others (detail/call.hpp says what this catches and what it cannot: a
/// disagreement shows only where a message is received, so ranks that only send, or that wait
/// for each other, are not told; then MPI hangs where Local reports a deadlock). The vendor
/// calls (MPI_Bcast, MPI_Allreduce, ... and allgather_inline, any) cannot carry the header: a
/// disagreement inside one is left to MPI, which usually hangs.
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/buffer.hpp"
#include "core/comm/comm.hpp"
#include "core/error.hpp"

namespace antler::comm {

/// Element types the vendor reductions understand.
enum class Prim : std::uint8_t { i8, u8, i16, u16, i32, u32, i64, u64, f32, f64, none };
/// Reduction operators the vendor reductions understand.
enum class OpKind : std::uint8_t { sum, prod, min, max, land, lor, band, bor, none };

namespace detail {
/// The Prim of T (none: not one of them).
template <class T>
constexpr Prim prim_of() {
  if constexpr (std::is_same_v<T, double>)
    return Prim::f64;
  else if constexpr (std::is_same_v<T, float>)
    return Prim::f32;
  else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool> && std::is_signed_v<T>) {
    if constexpr (sizeof(T) == 1)
      return Prim::i8;
    else if constexpr (sizeof(T) == 2)
      return Prim::i16;
    else if constexpr (sizeof(T) == 4)
      return Prim::i32;
    else
      return Prim::i64;
  } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if constexpr (sizeof(T) == 1)
      return Prim::u8;
    else if constexpr (sizeof(T) == 2)
      return Prim::u16;
    else if constexpr (sizeof(T) == 4)
      return Prim::u32;
    else
      return Prim::u64;
  } else {
    return Prim::none;
  }
}
}  // namespace detail

/// The algorithms a caller can force.
enum class Algorithm : std::uint8_t {
  automatic,
  vendor,                    ///< the MPI library's own call
  binomial,                  ///< broadcast, reduce, all-reduce (reduce + broadcast), gather
  linear_pipeline,           ///< broadcast: a chain, the message cut into segments
  fibonacci,                 ///< broadcast: pipelined Fibonacci tree
  scatter_allgather,         ///< broadcast of large messages
  recursive_doubling,        ///< all-reduce, allgather (any P)
  reduce_scatter_allgather,  ///< all-reduce of large vectors (elementwise ops, any P)
  ring,                      ///< allgather
};

/// "binomial", "linear_pipeline", ...
const char* to_string(Algorithm a);
/// The algorithm named s (ValueError naming the valid names otherwise).
Algorithm parse_algorithm(std::string_view s);

/// The collectives, for choosing and for messages.
enum class Collective : std::uint8_t { broadcast, reduce, allreduce, allgather, gather };
const char* to_string(Collective c);

/// The algorithms that implement a collective (vendor and automatic included).
std::vector<Algorithm> algorithms_for(Collective c);

/// One collective call as every message of antler's own algorithms names it (see
/// core/comm/detail/call.hpp): what runs, by which algorithm, from which root, and the call's
/// number on its communicator (every rank counts its collective calls on a Comm alike).
struct CallInfo {
  Collective kind = Collective::broadcast;
  Algorithm algorithm = Algorithm::automatic;
  int root = -1;               ///< -1: a collective without a root
  std::uint64_t sequence = 0;  ///< 0 for the first collective on the communicator, then 1, 2, ...
  bool operator==(const CallInfo&) const = default;
};
/// "broadcast #5 (root 0, binomial)".
std::string to_string(const CallInfo& c);

/// Two ranks disagree on the sequence of collectives: `peer` sent `rank` a message of `theirs`
/// while `rank` runs `mine`. Raised on the rank that sees the message; it then tells every other
/// rank of the communicator, whose next receive from it raises a CommError quoting this text.
struct CollectiveMismatch : CommError {
  CollectiveMismatch(int rank, int peer, const CallInfo& mine, const CallInfo& theirs,
                     const std::string& what)
      : CommError(what), rank(rank), peer(peer), mine(mine), theirs(theirs) {}
  int rank, peer;
  CallInfo mine, theirs;
};

/// How contributions combine: acc = other . acc if otherOnLeft, else acc . other. An
/// elementwise fold (elemSize > 0) works on any whole number of elements, which lets
/// reduce_scatter_allgather fold slices; vendor needs prim and op.
struct Fold {
  std::function<void(ByteBuffer& acc, std::span<const char> other, bool otherOnLeft)> fold;
  std::size_t elemSize = 0;  ///< > 0: an elementwise fold over elements of this size
  Prim prim = Prim::none;    ///< the element type, for vendor (none: vendor cannot fold)
  OpKind op = OpKind::none;  ///< the operator, for vendor
  bool exact = false;        ///< the order cannot change the result (integer sum, min, max, ...)
  bool commutative = true;   ///< a . b == b . a exactly (false for most reduce classes)
};

/// Knobs of one call.
struct Options {
  Algorithm algorithm = Algorithm::automatic;
  int segments = 0;  ///< pipelined broadcasts: segments (0: chosen by the cost model)
  /// Where sizes may differ between ranks (gathers, folds of serialized values), automatic
  /// chooses by this bound, which every rank must pass alike (0: unknown, assume small).
  std::size_t sizeBound = 0;
};

/// The model automatic chooses with: a message of n bytes costs alpha + beta n on the wire, and
/// antler's own algorithms add what their implementation costs beyond that: perMessage of
/// software per message (the collective header, the call's bookkeeping) and perByte for every
/// local pass over a byte (copying a message behind its header, a fold, a snapshot). Where more
/// ranks run than cores (oversubscribed), the CPU work of all ranks — every message costs its
/// sender and its receiver — is shared by `parallel` ranks at a time, and a collective takes at
/// least that total divided by `parallel`.
///
/// alpha and beta are measured once per communicator family by a short ping-pong
/// (measure_cost_model), perByte by timing a copy, parallel from the ranks on rank 0's node and
/// its hardware threads; perMessage is a constant measured with bench/collectives (see
/// bench/README.md). Environment: ANTLER_COMM_ALPHA, ANTLER_COMM_BETA, ANTLER_COMM_PER_MESSAGE,
/// ANTLER_COMM_PER_BYTE (seconds), ANTLER_COMM_PARALLEL (ranks); ANTLER_COMM_ALGORITHM=<name>
/// forces one algorithm wherever it applies.
struct CostModel {
  double alpha = 2e-6;
  double beta = 1e-10;
  double perMessage = 1e-7;
  double perByte = 1e-10;
  double parallel = 0;  ///< ranks that can run at once (0: every rank)
};
/// The model in use (environment variables, else the last measurement, else the defaults).
CostModel cost_model();
/// Measures alpha and beta between ranks 0 and 1 of c (collective; every rank gets the result).
CostModel measure_cost_model(Comm& c);
/// Sets the model (every rank must set the same).
void set_cost_model(const CostModel& m);

/// Modelled seconds of a collective of n bytes per rank on P ranks with algorithm a (segments
/// k for pipelines; 0: the best k). +inf if a cannot run.
double modelled_cost(Collective c, Algorithm a, int P, std::size_t n, const CostModel& m,
                     int k = 0);
/// The algorithm automatic picks (never automatic), and for pipelines the segment count.
struct Choice {
  Algorithm algorithm;
  int segments = 1;
};
Choice choose(Collective c, int P, std::size_t n, const Fold* fold, bool vendorAvailable,
              const Options& o);

namespace algo {

/// Broadcast of data, whose size every rank knows (and has allocated), from root.
void broadcast(Comm& c, std::span<char> data, int root, const Options& o = {});
/// Broadcast of a buffer whose size only root knows: the first message carries the size and up
/// to `inlineBytes` of data (one binomial pass for small messages); the rest follows by the
/// algorithm chosen for its size.
void broadcast_any(Comm& c, ByteBuffer& data, int root, const Options& o = {},
                   std::size_t inlineBytes = 1024);
/// data becomes the fold of every rank's data on root (left alone elsewhere). Sizes must agree
/// for elementwise folds.
void reduce(Comm& c, ByteBuffer& data, int root, const Fold& f, const Options& o = {});
/// data becomes the fold of every rank's data on every rank.
void allreduce(Comm& c, ByteBuffer& data, const Fold& f, const Options& o = {});
/// Every rank's bytes (sizes may differ), concatenated in rank order; counts: each rank's size.
void allgather(Comm& c, std::span<const char> mine, ByteBuffer& out,
               std::vector<std::size_t>& counts, const Options& o = {});
/// Allgather for small, frequent exchanges (a step's messages, a round's partials): one
/// vendor allgather of fixed blocks of `inlineBytes` when every rank's bytes fit — one collective,
/// the common case — and a second (allgatherv of the overflow) only when some rank's do not.
/// Every rank learns whether the second is needed from the first, so all make the same calls.
void allgather_inline(Comm& c, std::span<const char> mine, std::size_t inlineBytes,
                      std::vector<std::size_t>& counts, std::vector<char>& out);
/// True on every rank if `mine` is true on any rank (one vendor all-reduce).
bool any(Comm& c, bool mine);
/// As allgather, onto root only (out and counts empty elsewhere).
void gather(Comm& c, std::span<const char> mine, int root, ByteBuffer& out,
            std::vector<std::size_t>& counts, const Options& o = {});

}  // namespace algo
}  // namespace antler::comm
#pragma GCC visibility pop
