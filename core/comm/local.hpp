#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// comm::Local: P simulated ranks inside one process, one thread each, talking through eager
/// mailboxes, with exact per-rank counters (messages, bytes, rounds) and a modelled time.
///
///   auto stats = comm::run_local(256, [](comm::Comm& c) {
///     std::vector<double> v{double(c.rank())};
///     comm::broadcast(c, v, 0, comm::Algorithm::binomial);
///   });
///   // stats[r].rounds, stats[r].messagesSent, ...
///
/// The model: a send costs its sender alpha + beta * bytes and one round; it arrives when the
/// sender is done sending it (sends from one rank are serialised, receives are free); a rank's
/// clock is the later of its own and the arrival of what it receives. The figures do not depend
/// on how the threads are scheduled: only on which messages each rank sends and receives.
/// A receive that no rank can ever satisfy — every rank still running is waiting — is a
/// CommError on every waiting rank naming who waits for whom, never a hang.
#include <functional>
#include <vector>

#include "core/comm/comm.hpp"

namespace antler::comm {

struct LocalOptions {
  double alpha = 1e-6;  ///< seconds per message (latency)
  double beta = 1e-10;  ///< seconds per byte (inverse bandwidth: 10 GB/s)
  /// The largest tag (MPI_TAG_UB): Open MPI's 2^31 - 1 by default; MPI promises only 32767.
  int maxTag = 2147483647;
};

/// Runs fn on P simulated ranks (each gets its own Comm) and returns every rank's counters. If a
/// rank throws, the first exception (lowest rank) is rethrown once every rank has stopped.
std::vector<Stats> run_local(int P, const std::function<void(Comm&)>& fn,
                             const LocalOptions& options = {});

}  // namespace antler::comm
#pragma GCC visibility pop
