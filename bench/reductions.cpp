// bench/reductions: what does a comm::Reductions reduction (Converse's CmiReduce family) cost next
// to the MPI library's own MPI_Reduce and MPI_Allreduce of the same data, in the same run?
//
//   mpirun -n 2 reductions [reps]        timings: 8 B and 1 MiB sums, root-only and toAll (1 MiB
//                                        from the caller's array copied into a buffer, the same
//                                        array lent (comm::lend), and the value written where
//                                        each side reduces it from, each call, on both sides), and
//                                        1000 reductions in flight with ids vs 1000 sequential
//                                        MPI_Allreduce calls, started one by one and in one batch
//                                        (goal: <= 1.2x),
//                                        and at -n 2 the floor: the same messages sent by hand
//   reductions --local P1,P2,...         comm::Local's exact counts (rounds, messages, bytes per
//                                        rank) for the global, list and group forms at each P
//
// Each timing is the median of 7 batches of `reps` operations, the two sides alternating batch by
// batch on a duplicate of one communicator. The merge is the elementwise sum of doubles
// (comm::elementwise<double>(comm::ops::sum{})), MPI_SUM's counterpart; the 8 B rows are timed
// again with the same sum written as a MergeFn (a std::function the engine calls): "merge fn".
#include "core/comm/reductions.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bench/machine.hpp"
#include "core/comm/collectives.hpp"
#include "core/comm/local.hpp"
#include "core/comm/mpi.hpp"

using namespace antler;
using namespace antler::comm;

namespace {

using Clock = std::chrono::steady_clock;

constexpr ElementwiseOp kSum = elementwise<double>(ops::sum{});

/// The same sum as a MergeFn.
ByteBuffer sum_merge(ByteBuffer mine, std::span<const Bytes> kids) {
  const std::size_t n = mine.size() / sizeof(double);
  auto* a = reinterpret_cast<double*>(mine.data());
  for (Bytes k : kids) {
    const auto* b = reinterpret_cast<const double*>(k.data());
    for (std::size_t i = 0; i < n; ++i) a[i] += b[i];
  }
  return mine;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Seconds per call of body (run reps times), agreed across ranks (the slowest rank's).
template <class F>
double per_call(MPI_Comm w, int reps, F&& body) {
  MPI_Barrier(w);
  const auto t = Clock::now();
  for (int i = 0; i < reps; ++i) body(i);
  double s = std::chrono::duration<double>(Clock::now() - t).count() / reps, worst = 0;
  MPI_Allreduce(&s, &worst, 1, MPI_DOUBLE, MPI_MAX, w);
  return worst;
}

void timings(int reps) {
  Comm world = Comm::world();
  Comm raw = world.dup();
  MPI_Comm w = mpi_handle(raw);
  Reductions red(world);
  const int me = world.rank();
  if (me == 0)
    std::printf(
        "ranks %d, reps %d; seconds per operation (median of 7 batches)\n\n%-38s %12s %12s %8s\n",
        world.size(), reps, "operation", "MPI", "Reductions", "ratio");
  // Three ways to come by the value. "copied": it lies in an array of the caller's, which MPI
  // reduces from in place and Reductions, given a buffer it owns, gets a copy of (the copy is
  // part of its time). "lent": the same array, lent (comm::lend): Reductions reads it in place,
  // as MPI does, and the root's result is left in the reduction (MPI writes it to `out`).
  // "written": each call's value is computed where each side reduces it from (MPI's input
  // array, Reductions' buffer), the same writes on both sides; this is what a program that
  // computes its value into a Reductions::buffer pays.
  enum class Mode { copied, lent, written };
  for (std::size_t bytes : {std::size_t{8}, std::size_t{1} << 20}) {
    const std::size_t n = bytes / sizeof(double);
    const int r = bytes > 4096 ? std::max(1, reps / 50) : reps;
    std::vector<double> in(n, 1.0 + me), out(n);
    ByteBuffer carry;  // the buffer a result comes back in carries the next contribution
    for (Mode mode : {Mode::copied, Mode::lent, Mode::written}) {
      if (mode != Mode::copied && bytes <= 4096) continue;
      const bool written = mode == Mode::written;
      auto write = [&](double* to, int call) {
        std::fill(to, to + n, 1.0 + me + static_cast<double>(call));
      };
      for (bool toAll : {false, true})
        for (bool fn : {false, true}) {
          if (fn && bytes > 8) continue;
          std::vector<double> mpi, ours;
          double mpiLast = 0, oursLast = 0;  // a call's result, checked below
          for (int batch = 0; batch < 7; ++batch) {
            mpi.push_back(per_call(w, r, [&](int call) {
              if (written) write(in.data(), call);
              if (toAll)
                MPI_Allreduce(in.data(), out.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, w);
              else
                MPI_Reduce(in.data(), out.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, 0, w);
              mpiLast = out[n - 1];
            }));
            ours.push_back(per_call(w, r, [&](int call) {
              const ReduceOptions o{.id = std::nullopt, .toAll = toAll};
              if (mode == Mode::lent) {
                auto h = red.reduce(lend(in), kSum, {}, o);
                h.wait();
                if (h.hasResult())
                  oursLast = reinterpret_cast<const double*>(h.result().data())[n - 1];
                return;
              }
              // The buffer a result came back in, or one a finished reduction left (a non-root's
              // own sent value): no fresh pages for a large contribution.
              ByteBuffer b = carry.capacity() ? std::move(carry) : red.buffer(bytes);
              if (written) {
                b.resize(bytes);
                write(reinterpret_cast<double*>(b.data()), call);
              } else {
                b.clear();
                b.append(in.data(), bytes);
              }
              auto h = fn ? red.reduce(std::move(b), sum_merge, {}, o)
                          : red.reduce(std::move(b), kSum, {}, o);
              h.wait();
              if (h.hasResult()) {
                carry = h.takeResult();
                oursLast = reinterpret_cast<const double*>(carry.data())[n - 1];
              }
            }));
          }
          // The last call of a batch reduced the same values on both sides: the same sum.
          if (bytes > 8 && me == 0 && mpiLast != oursLast) {
            std::fprintf(stderr, "reductions: the 1 MiB sums differ (%g against %g)\n", oursLast,
                         mpiLast);
            std::exit(1);
          }
          if (me == 0) {
            const std::string name =
                std::string(toAll ? "toAll vs MPI_Allreduce" : "root vs MPI_Reduce") +
                (bytes == 8           ? (fn ? ", 8 B, merge fn" : ", 8 B")
                 : written            ? ", 1 MiB written"
                 : mode == Mode::lent ? ", 1 MiB lent"
                                      : ", 1 MiB");
            std::printf("%-38s %12.3g %12.3g %8.2f\n", name.c_str(), median(mpi), median(ours),
                        median(ours) / median(mpi));
          }
        }
    }
  }
  // The floor under any reduction built on point-to-point messages, as Reductions is: the same
  // messages (8 B: a compact message, its header in its tag), sent and received by hand with the
  // calls Reductions uses (Isend and Test; a persistent receive from any source, of any tag,
  // started and tested), and nothing else; and the same with 48 B (a 40-byte header and 8 B:
  // the messages before compact ones), which shared-memory transports move in two cache lines.
  // Root only: rank 1 sends to rank 0. toAll: up, then the result down again (the tree's two
  // dependent messages at P = 2).
  if (world.size() == 2) {
    std::vector<char> posted(8232);
    MPI_Request any;
    MPI_Recv_init(posted.data(), static_cast<int>(posted.size()), MPI_BYTE, MPI_ANY_SOURCE,
                  MPI_ANY_TAG, w, &any);
    char msg[48] = {};
    int size = 8;
    auto recv_any = [&] {
      int flag = 0;
      MPI_Start(&any);
      while (!flag) MPI_Test(&any, &flag, MPI_STATUS_IGNORE);
    };
    auto send_to = [&](int d) {
      MPI_Request q;
      int flag = 0;
      MPI_Isend(msg, size, MPI_BYTE, d, 7, w, &q);
      MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
      if (!flag) MPI_Wait(&q, MPI_STATUS_IGNORE);
    };
    double x = 1, y = 0;
    for (int bytes : {8, 48})
      for (bool toAll : {false, true}) {
        size = bytes;
        std::vector<double> mpi, floor;
        for (int batch = 0; batch < 7; ++batch) {
          mpi.push_back(per_call(w, reps, [&](int) {
            if (toAll)
              MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, w);
            else
              MPI_Reduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, 0, w);
          }));
          floor.push_back(per_call(w, reps, [&](int) {
            if (me == 1)
              send_to(0);
            else
              recv_any();
            if (toAll) {
              if (me == 0)
                send_to(1);
              else
                recv_any();
            }
          }));
        }
        if (me == 0)
          std::printf(
              "%-38s %12.3g %12.3g %8.2f\n",
              (std::string(toAll ? "floor: up+down by hand, " : "floor: one message by hand, ") +
               std::to_string(bytes) + " B")
                  .c_str(),
              median(mpi), median(floor), median(floor) / median(mpi));
      }
    MPI_Request_free(&any);
  }
  // 1000 in flight with ids (started in a different order on each rank) vs 1000 sequential calls;
  // then the same 1000 started in one batch (each rank's messages to the other go together).
  const int k = 1000;
  std::vector<ReductionId> ids;
  for (int i = 0; i < k; ++i) ids.push_back(red.globalReductionId());
  std::vector<double> mpi, ours, batched;
  auto in_flight = [&](bool batch) {
    std::vector<Reduction> hs(k);
    {
      std::optional<Reductions::Batch> open;
      if (batch) open.emplace(red.batch());
      for (int j = 0; j < k; ++j) {
        const int i = me % 2 ? k - 1 - j : j;
        ByteBuffer b;
        const double x = 1;
        b.append(&x, sizeof x);
        hs[static_cast<std::size_t>(i)] = red.reduce(
            std::move(b), kSum, {}, {.id = ids[static_cast<std::size_t>(i)], .toAll = true});
      }
    }
    for (auto& h : hs) h.wait();
  };
  for (int batch = 0; batch < 7; ++batch) {
    mpi.push_back(per_call(w, 1, [&](int) {
      double x = 1, y = 0;
      for (int i = 0; i < k; ++i) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, w);
    }));
    ours.push_back(per_call(w, 1, [&](int) { in_flight(false); }));
    batched.push_back(per_call(w, 1, [&](int) { in_flight(true); }));
  }
  if (me == 0) {
    std::printf("%-38s %12.3g %12.3g %8.2f\n", "1000 in flight (ids) vs sequential", median(mpi),
                median(ours), median(ours) / median(mpi));
    std::printf("%-38s %12.3g %12.3g %8.2f\n", "  the same in one batch", median(mpi),
                median(batched), median(batched) / median(mpi));
  }
}

void local_counts(const std::vector<int>& Ps) {
  std::printf(
      "comm::Local: one 8-byte reduction; per rank: most rounds, most messages and bytes sent\n"
      "and received; 'members': ranks that take part (toAll); 'outside': the most messages any "
      "other rank\n"
      "sent or received\n\n%-6s %-7s %8s %7s %9s %9s %10s %10s %9s\n",
      "P", "form", "members", "rounds", "sent", "received", "B sent", "B recv", "outside");
  for (int P : Ps) {
    for (const char* form : {"global", "list", "group"}) {
      std::vector<Stats> st(static_cast<std::size_t>(P));
      std::vector<int> members;  // list and group: every fourth rank, root P - 1 (reversed)
      for (int q = P - 1; q >= 0; q -= 4) members.push_back(q);
      run_local(P, [&](Comm& c) {
        Reductions red(c);
        ByteBuffer b;
        const double x = 1;
        b.append(&x, sizeof x);
        const bool in = std::find(members.begin(), members.end(), c.rank()) != members.end();
        if (std::strcmp(form, "global") == 0)
          red.reduce(std::move(b), sum_merge, {}, {.id = std::nullopt, .toAll = true}).wait();
        else if (std::strcmp(form, "list") == 0 && in)
          red.listReduce(members, std::move(b), sum_merge, {}, {.id = std::nullopt, .toAll = true})
              .wait();
        else if (std::strcmp(form, "group") == 0 && in)
          red.groupReduce(red.establishGroup(members), std::move(b), sum_merge, {},
                          {.id = std::nullopt, .toAll = true})
              .wait();
        st[static_cast<std::size_t>(c.rank())] = red.comm().stats();
      });
      Stats worst;
      std::uint64_t outside = 0;  // messages sent or received by any rank that is not a member
      for (int q = 0; q < P; ++q)
        if (std::strcmp(form, "global") != 0 &&
            std::find(members.begin(), members.end(), q) == members.end())
          outside = std::max(outside, st[static_cast<std::size_t>(q)].messagesSent +
                                          st[static_cast<std::size_t>(q)].messagesReceived);
      for (auto& s : st) {
        worst.rounds = std::max(worst.rounds, s.rounds);
        worst.messagesSent = std::max(worst.messagesSent, s.messagesSent);
        worst.messagesReceived = std::max(worst.messagesReceived, s.messagesReceived);
        worst.bytesSent = std::max(worst.bytesSent, s.bytesSent);
        worst.bytesReceived = std::max(worst.bytesReceived, s.bytesReceived);
      }
      std::printf("%-6d %-7s %8zu %7llu %9llu %9llu %10llu %10llu %9llu\n", P, form,
                  std::strcmp(form, "global") == 0 ? static_cast<std::size_t>(P) : members.size(),
                  (unsigned long long)worst.rounds, (unsigned long long)worst.messagesSent,
                  (unsigned long long)worst.messagesReceived, (unsigned long long)worst.bytesSent,
                  (unsigned long long)worst.bytesReceived, (unsigned long long)outside);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2 && std::strcmp(argv[1], "--local") == 0) {
    bench::print_machine();
    std::vector<int> Ps;
    for (const char* p = argv[2]; *p;) {
      Ps.push_back(std::atoi(p));
      while (*p && *p != ',') ++p;
      if (*p) ++p;
    }
    local_counts(Ps);
    return 0;
  }
  Environment env(&argc, &argv);
  if (Comm::world().rank() == 0) bench::print_machine();
  timings(argc > 1 ? std::atoi(argv[1]) : 20000);
  return 0;
}
