#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Sparse data exchange without knowing who sends to whom: each rank names the ranks it sends
/// to, and learns who sends to it only from the messages that arrive. The algorithm is the
/// non-blocking consensus (NBX) of Hoefler, Siebert and Lumsdaine (PPoPP 2010):
///
///   1. every parcel leaves as a synchronous-mode send (complete once the receiver matched it);
///   2. a rank receives whatever arrives for it, and once all of its own sends have been
///      matched it enters a non-blocking barrier;
///   3. it keeps receiving until the barrier completes: every rank then has had all of its sends
///      matched, so nothing more is on its way.
///
/// Each rank sends and receives only its own parcels plus a barrier's log2 P messages, and
/// keeps no array over all ranks: the cost grows with a rank's own neighbours, not with P (a
/// census by all-reduce of P counts, the classic alternative, moves P words per rank). Progress
/// happens inside the call; it returns once this rank is done.
#include <cstddef>
#include <vector>

#include "core/buffer.hpp"
#include "core/comm/comm.hpp"

namespace antler::comm {

/// A message to (outgoing) or from (incoming) one rank.
struct Parcel {
  int rank = 0;
  ByteBuffer bytes;
};

/// Sends every outgoing parcel to its rank (several to one rank allowed; to itself: delivered
/// without a message) and returns the parcels sent to this rank, ordered by source rank and,
/// from one source, in its send order. Collective over c: every rank calls it, in the same
/// order relative to c's other collectives. A parcel to a rank outside 0..P-1 is an IndexError
/// before anything is sent.
std::vector<Parcel> exchange_sparse(Comm& c, std::vector<Parcel> outgoing);

}  // namespace antler::comm
#pragma GCC visibility pop
