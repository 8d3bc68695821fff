// Question: how do core/comm's collective algorithms compare with the MPI library's own calls,
// measured in the same run, and how does each algorithm's cost grow with P past what MPI can
// show on this machine?
//
//   mpirun -n 2 ./build/bench/collectives            # MPI: every algorithm / the vendor call
//   mpirun -n 2 ./build/bench/collectives --max-bytes 1024   # only the rows up to 1 KiB
//   ./build/bench/collectives --local [maxP]         # Local: rounds, messages, bytes, model time
//
// MPI mode: broadcast, reduce, all-reduce and allgather of 8 B, 1 KiB, 64 KiB, 1 MiB and 16 MiB
// per rank (allgather: per rank's block), every algorithm that applies and `automatic`; each time
// is the best of several repetitions of the slowest rank's time (per call, over a batch of calls
// for sizes up to 64 KiB); the ratio is to the vendor call
// in the same run. Above -n 2 on a 2-core machine the ranks are oversubscribed: those rows measure
// the scheduler as much as the algorithm, and are marked so.
#include "core/comm/collectives.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench/machine.hpp"
#include "core/comm/local.hpp"
#include "core/comm/mpi.hpp"

using namespace antler;
using namespace antler::comm;

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Fold sum_doubles() {
  Fold f;
  f.elemSize = sizeof(double);
  f.prim = Prim::f64;
  f.op = OpKind::sum;
  f.fold = [](ByteBuffer& acc, std::span<const char> other, bool otherOnLeft) {
    const std::size_t n = acc.size() / sizeof(double);
    auto* a = reinterpret_cast<double*>(acc.data());
    const auto* b = reinterpret_cast<const double*>(other.data());
    for (std::size_t i = 0; i < n; ++i) a[i] = otherOnLeft ? b[i] + a[i] : a[i] + b[i];
  };
  return f;
}

// Seconds of one call: the best of reps batches of `batch` calls back to back (after a barrier),
// each batch's time the slowest rank's, divided by batch. Batches make sub-microsecond calls
// measurable (one call alone is about the clock's and the barrier's noise).
template <class Fn>
double timed(Comm& c, int reps, int batch, Fn&& fn) {
  double best = 1e30;
  MPI_Comm h = mpi_handle(c);
  for (int i = 0; i < reps; ++i) {
    MPI_Barrier(h);
    const double t0 = now();
    for (int b = 0; b < batch; ++b) fn();
    double t = (now() - t0) / batch, worst = 0;
    MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, h);
    best = std::min(best, worst);
  }
  return best;
}

void run_mpi(Comm& c, std::size_t maxBytes) {
  const int P = c.size();
  const bool over = P > static_cast<int>(std::thread::hardware_concurrency());
  measure_cost_model(c);
  const CostModel m = cost_model();
  if (c.rank() == 0) {
    std::printf(
        "collectives at -n %d%s; cost model alpha %.2f us, beta %.3f ns/B, per message %.2f us,"
        " per byte copied %.3f ns, parallel %s\n\n",
        P, over ? " (OVERSUBSCRIBED: more ranks than cores)" : "", m.alpha * 1e6, m.beta * 1e9,
        m.perMessage * 1e6, m.perByte * 1e9,
        m.parallel > 0 ? std::to_string(m.parallel).substr(0, 4).c_str() : "all ranks");
    std::printf("%-10s %9s  %-26s %12s %8s\n", "collective", "bytes", "algorithm", "time (us)",
                "/vendor");
  }
  const std::vector<std::size_t> sizes = {8, 1024, 64 << 10, 1 << 20, 16 << 20};
  const Fold f = sum_doubles();
  for (Collective coll :
       {Collective::broadcast, Collective::reduce, Collective::allreduce, Collective::allgather}) {
    for (std::size_t n : sizes) {
      if (coll == Collective::allgather && n > (1u << 20)) continue;  // P x 16 MiB per rank
      if (n > maxBytes) continue;
      const int reps = n >= (1u << 20) ? 5 : 30;
      const int batch = n <= 1024 ? 200 : n <= (64u << 10) ? 10 : 1;
      std::vector<std::pair<std::string, double>> rows;
      double vendor = 0;
      for (Algorithm a : algorithms_for(coll)) {
        ByteBuffer data;
        data.resize(n);
        std::memset(data.data(), 1, n);
        std::vector<std::size_t> counts;
        ByteBuffer out;
        const Options o{a, 0, n};
        double t = 0;
        switch (coll) {
          case Collective::broadcast:
            t = timed(c, reps, batch, [&] { algo::broadcast(c, {data.data(), n}, 0, o); });
            break;
          case Collective::reduce:
            t = timed(c, reps, batch, [&] {
              ByteBuffer d = data;
              algo::reduce(c, d, 0, f, o);
            });
            break;
          case Collective::allreduce:
            t = timed(c, reps, batch, [&] {
              ByteBuffer d = data;
              algo::allreduce(c, d, f, o);
            });
            break;
          case Collective::allgather:
            t = timed(c, reps, batch, [&] {
              algo::allgather(c, {data.data(), n}, out, counts, o);
            });
            break;
          default:
            break;
        }
        if (a == Algorithm::vendor) vendor = t;
        std::string name = to_string(a);
        if (a == Algorithm::automatic) {
          const Choice ch =
              choose(coll, P, n,
                     coll == Collective::broadcast || coll == Collective::allgather ? nullptr : &f,
                     true, Options{});
          name += " -> " + std::string(to_string(ch.algorithm));
        }
        rows.push_back({name, t});
      }
      if (c.rank() == 0)
        for (auto& [name, t] : rows)
          std::printf("%-10s %9zu  %-26s %12.2f %8.2f\n", to_string(coll), n, name.c_str(), t * 1e6,
                      vendor > 0 ? t / vendor : 0.0);
    }
  }
}

void run_local(int maxP) {
  std::printf(
      "Local backend: per collective, algorithm and P, the slowest rank's rounds, the\n"
      "messages and bytes sent by the busiest rank, and the modelled time (alpha %.1f us,\n"
      "beta %.2f ns/B).\n\n",
      LocalOptions{}.alpha * 1e6, LocalOptions{}.beta * 1e9);
  std::printf("%-10s %8s %-26s %6s %7s %9s %12s %12s\n", "collective", "bytes", "algorithm", "P",
              "rounds", "max msgs", "max bytes", "model (us)");
  const Fold f = sum_doubles();
  for (Collective coll : {Collective::broadcast, Collective::allreduce, Collective::allgather}) {
    for (std::size_t n : {std::size_t{8}, std::size_t{64} << 10}) {
      for (Algorithm a : algorithms_for(coll)) {
        if (a == Algorithm::automatic || a == Algorithm::vendor) continue;
        for (int P : {2, 4, 16, 64, 256, 1024, 4096}) {
          if (P > maxP) break;
          // Memory: every rank holds its copy (and allgather P of them): keep it under ~1 GiB.
          if (static_cast<double>(n) * P * (coll == Collective::allgather ? P : 1) > 1e9) continue;
          if (n > 1024 && P > 256) continue;  // large payloads: to P = 256 (time, not memory)
          auto stats = comm::run_local(P, [&](Comm& c) {
            ByteBuffer data;
            data.resize(n);
            std::memset(data.data(), 1, n);
            const Options o{a, 0, n};
            if (coll == Collective::broadcast) algo::broadcast(c, {data.data(), n}, 0, o);
            if (coll == Collective::allreduce) {
              algo::allreduce(c, data, f, o);
            }
            if (coll == Collective::allgather) {
              ByteBuffer out;
              std::vector<std::size_t> counts;
              algo::allgather(c, {data.data(), n}, out, counts, o);
            }
          });
          std::uint64_t rounds = 0, msgs = 0, bytes = 0;
          double model = 0;
          for (auto& s : stats) {
            rounds = std::max(rounds, s.rounds);
            msgs = std::max(msgs, s.messagesSent);
            bytes = std::max(bytes, s.bytesSent);
            model = std::max(model, s.modelSeconds);
          }
          std::printf("%-10s %8zu %-26s %6d %7llu %9llu %12llu %12.1f\n", to_string(coll), n,
                      to_string(a), P, static_cast<unsigned long long>(rounds),
                      static_cast<unsigned long long>(msgs), static_cast<unsigned long long>(bytes),
                      model * 1e6);
        }
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  bench::print_machine();
  if (argc > 1 && std::string(argv[1]) == "--local") {
    run_local(argc > 2 ? std::atoi(argv[2]) : 4096);
    return 0;
  }
  Environment env(&argc, &argv);
  Comm c = Comm::world();
  std::size_t maxBytes = std::size_t{1} << 40;
  if (argc > 2 && std::string(argv[1]) == "--max-bytes")
    maxBytes = static_cast<std::size_t>(std::atoll(argv[2]));
  run_mpi(c, maxBytes);
  return 0;
}
