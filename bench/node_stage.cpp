// bench/node_stage: how does the node stage of a reduction grow with P and the partials' size?
//
// The three strategies of reduce/reduce_queue.hpp, run on the Local backend (P simulated ranks in
// one process, exact counts): allgather (every node gets every partial: the exchange's pattern,
// here by recursive doubling, the fewest rounds an allgather can take), tree (binomial reduce to
// the requester's node, here the last one, so the result is forwarded once) and recursive
// doubling (an all-reduce). The partial is S bytes folded as doubles. Per row: the slowest rank's
// rounds, the busiest rank's bytes sent and received, the modelled time (alpha-beta, the Local
// defaults), and what `automatic` picks for a requester on one node when the partials ride in an
// exchange that happens anyway (piggy) and when they do not (alone). The baseline of each row is
// the allgather in the same run: the ratio column is modelled time / allgather's.
//
//   ./build/bench/node_stage [maxP]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "bench/machine.hpp"
#include "core/comm/algorithms.hpp"
#include "core/comm/local.hpp"
#include "reduce/reduce_queue.hpp"

using namespace antler;
using namespace antler::comm;

namespace {

Fold sum_doubles() {
  Fold f;
  f.elemSize = sizeof(double);
  f.fold = [](ByteBuffer& acc, std::span<const char> other, bool otherOnLeft) {
    const std::size_t n = std::min(acc.size(), other.size()) / sizeof(double);
    for (std::size_t i = 0; i < n; ++i) {
      double a, b;
      std::memcpy(&a, acc.data() + 8 * i, 8);
      std::memcpy(&b, other.data() + 8 * i, 8);
      a = otherOnLeft ? b + a : a + b;
      std::memcpy(acc.data() + 8 * i, &a, 8);
    }
  };
  return f;
}

struct Row {
  std::uint64_t rounds = 0, sent = 0, received = 0;
  double model = 0;
};

Row measure(int P, std::size_t S, NodeStage stage) {
  const Fold f = sum_doubles();
  auto stats = run_local(P, [&](Comm& c) {
    ByteBuffer data;
    data.resize(S);
    std::memset(data.data(), 0, S);
    switch (stage) {
      case NodeStage::allgather: {
        ByteBuffer out;
        std::vector<std::size_t> counts;
        algo::allgather(c, {data.data(), S}, out, counts,
                        Options{Algorithm::recursive_doubling, 0, S});
        break;
      }
      case NodeStage::tree:
        algo::reduce(c, data, P - 1, f, Options{Algorithm::binomial, 0, S});
        break;
      default:
        algo::allreduce(c, data, f, Options{Algorithm::recursive_doubling, 0, S});
        break;
    }
  });
  Row r;
  for (const auto& s : stats) {
    r.rounds = std::max(r.rounds, s.rounds);
    r.sent = std::max(r.sent, s.bytesSent);
    r.received = std::max(r.received, s.bytesReceived);
    r.model = std::max(r.model, s.modelSeconds);
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  bench::print_machine();
  const int maxP = argc > 1 ? std::atoi(argv[1]) : 1024;
  const LocalOptions lo;
  const CostModel cm{lo.alpha, lo.beta};
  std::printf(
      "Node stage on the Local backend (alpha %.1f us, beta %.2f ns/B); requester on the last "
      "node.\n\n",
      lo.alpha * 1e6, lo.beta * 1e9);
  std::printf("%8s %6s %-19s %7s %12s %12s %11s %7s   %s\n", "partial", "P", "stage", "rounds",
              "max sent", "max recv", "model (us)", "ratio", "automatic: piggy / alone");
  for (std::size_t S : {std::size_t{48}, std::size_t{4} << 10, std::size_t{64} << 10}) {
    for (int P : {2, 3, 4, 16, 64, 256, 1024}) {
      if (P > maxP) break;
      if (static_cast<double>(S) * P * P > 4e9) continue;  // allgather memory: P copies per rank
      const Row base = measure(P, S, NodeStage::allgather);
      const char* piggy = to_string(choose_node_stage(P, S, P - 1, true, cm));
      const char* alone = to_string(choose_node_stage(P, S, P - 1, false, cm));
      for (NodeStage st : {NodeStage::allgather, NodeStage::tree, NodeStage::recursive_doubling}) {
        const Row r = st == NodeStage::allgather ? base : measure(P, S, st);
        std::printf("%8zu %6d %-19s %7llu %12llu %12llu %11.1f %7.2f   %s\n", S, P, to_string(st),
                    static_cast<unsigned long long>(r.rounds),
                    static_cast<unsigned long long>(r.sent),
                    static_cast<unsigned long long>(r.received), r.model * 1e6,
                    base.model > 0 ? r.model / base.model : 0.0,
                    st == NodeStage::allgather ? (std::string(piggy) + " / " + alone).c_str() : "");
      }
    }
  }
  return 0;
}
