#include "core/comm/consensus.hpp"

#include <algorithm>
#include <memory>
#include <string>

#include "core/comm/detail/backend.hpp"
#include "core/error.hpp"

namespace antler::comm {

std::vector<Parcel> exchange_sparse(Comm& c, std::vector<Parcel> outgoing) {
  const int P = c.size(), me = c.rank();
  for (const Parcel& p : outgoing)
    if (p.rank < 0 || p.rank >= P)
      throw IndexError("exchange_sparse: a parcel to rank " + std::to_string(p.rank) +
                           " (ranks 0.." + std::to_string(P - 1) + ")",
                       static_cast<std::uint64_t>(p.rank), static_cast<std::uint64_t>(P));
  detail::Backend& b = c.backend();
  // Two tags, alternating by call: a rank that finished call n (its barrier done, so every rank
  // entered call n's barrier) may start call n + 1 while another still drains call n; the
  // second cannot start call n + 2 before that one has finished call n + 1.
  const int tag = Comm::kCollectiveTags - 8 - static_cast<int>(c.nextSequence() % 2);

  std::vector<Parcel> incoming;
  std::vector<std::shared_ptr<void>> sends;
  sends.reserve(outgoing.size());
  for (Parcel& p : outgoing) {
    if (p.rank == me)
      incoming.push_back(Parcel{me, std::move(p.bytes)});
    else
      sends.push_back(b.issend(p.rank, tag, {p.bytes.data(), p.bytes.size()}));
  }
  std::shared_ptr<void> barrier;
  bool inBarrier = false;
  for (;;) {
    const std::uint64_t seen = b.events();
    int from = 0;
    std::size_t n = 0;
    bool progressed = false;
    while (b.iprobe(-1, tag, from, n)) {
      incoming.push_back(Parcel{from, b.recv(from, tag)});
      progressed = true;
    }
    if (!inBarrier) {
      bool all = true;
      for (auto& s : sends) all = b.test(s) && all;
      if (all) {
        barrier = b.ibarrier();
        inBarrier = true;
        progressed = true;
      }
    } else if (b.test(barrier)) {
      break;
    }
    if (!progressed) b.idle(seen);
  }
  // Arrival order is the network's; the result's is by source (stable: one source's order kept).
  std::stable_sort(incoming.begin(), incoming.end(),
                   [](const Parcel& x, const Parcel& y) { return x.rank < y.rank; });
  return incoming;
}

}  // namespace antler::comm
