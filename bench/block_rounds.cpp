// bench/block_rounds: what do DIY-style block rounds (comm::BlockRounds) cost next to the MPI
// library doing the same job, in the same run?
//
//   mpirun -n 2 block_rounds [reps]
//
//   1. An all-reduce of a 1 MiB vector of doubles per block, with 1 and with 4 blocks per rank,
//      written two ways with block rounds: the all-reduce partners (merge to gid 0 and back) and
//      a swap reduce-scatter followed by a swap all-gather (each block ends up owning 1/n of the
//      sum, then every block collects the others' parts). Baseline: MPI_Allreduce of the rank's
//      blocks summed locally, the result copied back into each block. Goal <= 1.5x.
//   2. An all_to_all of 1e6 records of 16 bytes (a key naming the destination block, a source, a
//      value), 1 block per rank: each block buckets its records by destination and enqueues one
//      view per destination; each reads what it received in place and sums a checksum. Baseline:
//      the same bucketing into one send buffer, MPI_Alltoall of the counts, MPI_Alltoallv, the
//      same checksum. Goal <= 1.5x.
//
// Each figure is the median of 7 batches, the two sides alternating batch by batch; the results
// of both sides are compared before any time is printed.
#include "core/comm/block_rounds.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "bench/machine.hpp"
#include "core/comm/mpi.hpp"

using namespace antler;
using namespace antler::comm;

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class F>
double seconds(MPI_Comm w, int reps, F&& body) {
  MPI_Barrier(w);
  const auto t = Clock::now();
  for (int i = 0; i < reps; ++i) body();
  double s = std::chrono::duration<double>(Clock::now() - t).count() / reps, worst = 0;
  MPI_Allreduce(&s, &worst, 1, MPI_DOUBLE, MPI_MAX, w);
  return worst;
}

void add(std::span<double> into, std::span<const double> x) {
  for (std::size_t i = 0; i < into.size(); ++i) into[i] += x[i];
}

// ---- 1. all-reduce of a vector per block ----

struct AllReduce {
  int first, count, n;
  std::size_t len;
  std::vector<std::vector<double>> blocks;  // the vectors; the results land here
  std::vector<std::vector<double>> parts;   // swap: the part a block owns, and its offset
  std::vector<std::size_t> lo;

  std::vector<double>& mine(int g) { return blocks[static_cast<std::size_t>(g - first)]; }

  /// The all-reduce partners: sums up the tree to gid 0 (read in place), copies down. A block
  /// never sends to itself: it holds its own partial already.
  void tree(BlockRounds& br, const BlockOwners& owners, int k) {
    const Partners p = Partners::allReduce(BlockGrid::line(n), k);
    const int R = static_cast<int>(p.factored().size());
    br.reduce(owners, p, [&](int g, ReduceProxy& rp) {
      auto& x = mine(g);
      for (int from : rp.in_link()) {
        if (from == g) continue;
        const auto v = rp.dequeueView<double>(from);
        if (rp.round() <= R)
          add(x, v);
        else
          std::copy(v.begin(), v.end(), x.begin());
      }
      for (int to : rp.out_link())  // lent: a sender's x is not rewritten the round after
        if (to != g) rp.enqueueView(to, std::span<const double>(x));
    });
  }

  /// Reduce-scatter by swap rounds (each round splits the block's range among its group; each
  /// member sums the pieces of its own share), then all-gather by the same rounds reversed (each
  /// member sends its range to the group). Nothing is sent to itself or copied beyond what an
  /// MPI implementation of the same algorithm moves.
  std::vector<std::size_t> hi, ownA, ownB;
  std::vector<std::vector<double>> scratch;
  void swap(BlockRounds& br, const BlockOwners& owners, int k) {
    const std::vector<RoundK> kv = Partners::factor(k, std::vector<int>{n});
    const Partners rs(Pattern::swap, BlockGrid::line(n), kv, true);
    std::vector<RoundK> back(kv.rbegin(), kv.rend());
    const Partners ag(Pattern::swap, BlockGrid::line(n), back, false);
    const auto c = static_cast<std::size_t>(count);
    parts.resize(c);
    scratch.resize(c);
    lo.assign(c, 0);
    hi.assign(c, len);
    ownA.assign(c, 0);
    ownB.assign(c, len);
    br.reduce(owners, rs, [&](int g, ReduceProxy& rp) {
      const auto i = static_cast<std::size_t>(g - first);
      if (rp.round() > 0) {  // this block's share of its previous range: its own piece + theirs
        const std::vector<double>& prev = rp.round() == 1 ? blocks[i] : parts[i];
        std::vector<double>& next = scratch[i];  // kept from run to run: no fresh pages
        next.assign(prev.begin() + static_cast<std::ptrdiff_t>(ownA[i]),
                    prev.begin() + static_cast<std::ptrdiff_t>(ownB[i]));
        for (int from : rp.in_link())
          if (from != g) add(next, rp.dequeueView<double>(from));
        std::swap(parts[i], next);
      }
      const std::span<const double> cur =
          rp.round() == 0 ? std::span<const double>(blocks[i]) : std::span<const double>(parts[i]);
      const auto out = rp.out_link();
      if (out.empty()) return;
      const std::size_t m = out.size(), size = cur.size(), base = lo[i];
      const auto pos = static_cast<std::size_t>(rs.position(rp.round(), g));
      for (std::size_t j = 0; j < m; ++j) {
        const std::size_t a = size * j / m, b = size * (j + 1) / m;
        if (j == pos) {
          ownA[i] = a;
          ownB[i] = b;
          lo[i] = base + a;
          hi[i] = base + b;
        } else {
          rp.enqueueView(out[j], cur.subspan(a, b - a));  // cur is not rewritten next round
        }
      }
    });
    br.reduce(owners, ag, [&](int g, ReduceProxy& rp) {
      const auto i = static_cast<std::size_t>(g - first);
      auto& x = blocks[i];
      if (rp.round() == 0)
        std::copy(parts[i].begin(), parts[i].end(), x.begin() + static_cast<std::ptrdiff_t>(lo[i]));
      for (int from : rp.in_link()) {
        if (from == g) continue;
        const auto at = static_cast<std::size_t>(rp.dequeue<std::uint64_t>(from));
        const auto v = rp.dequeueView<double>(from);
        std::copy(v.begin(), v.end(), x.begin() + static_cast<std::ptrdiff_t>(at));
        lo[i] = std::min(lo[i], at);
        hi[i] = std::max(hi[i], at + v.size());
      }
      for (int to : rp.out_link())
        if (to != g) {
          rp.enqueue(to, static_cast<std::uint64_t>(lo[i]));
          rp.enqueueView(to, std::span<const double>(x.data() + lo[i], hi[i] - lo[i]));
        }
    });
  }
};

void allreduce_rows(int reps, int perRank) {
  Comm world = Comm::world();
  MPI_Comm w = mpi_handle(world);
  const int P = world.size(), me = world.rank();
  const int n = P * perRank;
  const std::size_t len = (std::size_t{1} << 20) / sizeof(double);
  const BlockOwners owners = BlockOwners::blocked(n, P);
  BlockRounds br(world);
  AllReduce ar{
      owners.first(me), owners.end(me) - owners.first(me), n, len, {}, {}, {}, {}, {}, {}, {}};
  auto fill = [&] {
    ar.blocks.assign(static_cast<std::size_t>(ar.count), std::vector<double>(len));
    for (int i = 0; i < ar.count; ++i)
      for (std::size_t j = 0; j < len; ++j)
        ar.blocks[static_cast<std::size_t>(i)][j] = double((ar.first + i) % 7) + double(j % 5);
  };
  std::vector<double> expect(len);
  for (std::size_t j = 0; j < len; ++j) {
    double s = 0;
    for (int g = 0; g < n; ++g) s += double(g % 7) + double(j % 5);
    expect[j] = s;
  }
  std::vector<double> sum(len), out(len);
  auto mpi = [&] {
    std::copy(ar.blocks[0].begin(), ar.blocks[0].end(), sum.begin());
    for (int i = 1; i < ar.count; ++i) add(sum, ar.blocks[static_cast<std::size_t>(i)]);
    MPI_Allreduce(sum.data(), out.data(), static_cast<int>(len), MPI_DOUBLE, MPI_SUM, w);
    for (auto& b : ar.blocks) std::copy(out.begin(), out.end(), b.begin());
  };
  // Correctness first (integer-valued doubles: every sum order gives these bits).
  int wrong = 0;
  fill();
  ar.tree(br, owners, 2);
  for (auto& b : ar.blocks) wrong += b != expect;
  fill();
  ar.swap(br, owners, 2);
  for (auto& b : ar.blocks) wrong += b != expect;
  fill();
  mpi();
  for (auto& b : ar.blocks) wrong += b != expect;
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_SUM, w);
  if (wrong) {
    if (me == 0) std::printf("all-reduce: %d blocks with a wrong sum\n", wrong);
    std::exit(1);
  }
  std::vector<double> tm, tt, ts;
  for (int batch = 0; batch < 7; ++batch) {
    tm.push_back(seconds(w, reps, mpi));
    tt.push_back(seconds(w, reps, [&] { ar.tree(br, owners, 2); }));
    ts.push_back(seconds(w, reps, [&] { ar.swap(br, owners, 2); }));
  }
  if (me == 0) {
    std::printf("%-48s %10.3g %10.3g %7.2f\n",
                (std::string("all-reduce 1 MiB, allReduce partners, ") + std::to_string(perRank) +
                 " block(s)/rank")
                    .c_str(),
                median(tm), median(tt), median(tt) / median(tm));
    std::printf("%-48s %10.3g %10.3g %7.2f\n",
                (std::string("all-reduce 1 MiB, swap + swap, ") + std::to_string(perRank) +
                 " block(s)/rank")
                    .c_str(),
                median(tm), median(ts), median(ts) / median(tm));
  }
}

// ---- 2. all_to_all of small records ----

struct Record {
  std::uint32_t key, source;
  double value;
};
static_assert(sizeof(Record) == 16);

void all_to_all_row(int reps, std::size_t total) {
  Comm world = Comm::world();
  MPI_Comm w = mpi_handle(world);
  const int P = world.size(), me = world.rank(), n = P;  // one block per rank
  const BlockOwners owners = BlockOwners::blocked(n, P);
  BlockRounds br(world);
  const std::size_t mineCount = total / static_cast<std::size_t>(P);
  std::vector<Record> recs(mineCount);
  std::uint64_t z = 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(me + 1);
  for (std::size_t i = 0; i < mineCount; ++i) {
    z ^= z << 13;
    z ^= z >> 7;
    z ^= z << 17;
    recs[i] = {static_cast<std::uint32_t>(z % static_cast<std::uint64_t>(n)),
               static_cast<std::uint32_t>(i), double(i % 1000)};
  }
  auto checksum = [](std::span<const Record> r, double& sum, std::uint64_t& count) {
    for (const Record& x : r) sum += x.value + x.source * 1e-6;
    count += r.size();
  };
  // MPI: bucket into one send buffer by destination, counts, Alltoallv, checksum.
  std::vector<Record> send(mineCount), recv;
  std::vector<int> scount(static_cast<std::size_t>(P)), sdisp(static_cast<std::size_t>(P)),
      rcount(static_cast<std::size_t>(P)), rdisp(static_cast<std::size_t>(P));
  double mpiSum = 0, ourSum = 0;
  std::uint64_t mpiCount = 0, ourCount = 0;
  MPI_Datatype rec;
  MPI_Type_contiguous(sizeof(Record), MPI_BYTE, &rec);
  MPI_Type_commit(&rec);
  auto mpi = [&] {
    std::fill(scount.begin(), scount.end(), 0);
    for (const Record& x : recs) ++scount[x.key];
    for (int r = 0, at = 0; r < P; ++r) {
      sdisp[static_cast<std::size_t>(r)] = at;
      at += scount[static_cast<std::size_t>(r)];
    }
    std::vector<int> pos = sdisp;
    for (const Record& x : recs) send[static_cast<std::size_t>(pos[x.key]++)] = x;
    MPI_Alltoall(scount.data(), 1, MPI_INT, rcount.data(), 1, MPI_INT, w);
    int at = 0;
    for (int r = 0; r < P; ++r) {
      rdisp[static_cast<std::size_t>(r)] = at;
      at += rcount[static_cast<std::size_t>(r)];
    }
    recv.resize(static_cast<std::size_t>(at));
    MPI_Alltoallv(send.data(), scount.data(), sdisp.data(), rec, recv.data(), rcount.data(),
                  rdisp.data(), rec, w);
    mpiSum = 0;
    mpiCount = 0;
    checksum(recv, mpiSum, mpiCount);
  };
  // Block rounds: the same bucketing, one view enqueued per destination, read in place.
  std::vector<std::vector<Record>> buckets(static_cast<std::size_t>(n));
  auto ours = [&] {
    br.all_to_all(owners, [&](int, ReduceProxy& rp) {
      if (rp.round() == 0) {
        std::vector<std::size_t> cnt(static_cast<std::size_t>(n));
        for (const Record& x : recs) ++cnt[x.key];
        for (int d = 0; d < n; ++d)
          buckets[static_cast<std::size_t>(d)].resize(cnt[static_cast<std::size_t>(d)]);
        std::fill(cnt.begin(), cnt.end(), 0);
        for (const Record& x : recs) buckets[x.key][cnt[x.key]++] = x;
        for (int d = 0; d < n; ++d)  // lent: the buckets outlive the call
          rp.enqueueView(d, std::span<const Record>(buckets[static_cast<std::size_t>(d)]));
        return;
      }
      ourSum = 0;
      ourCount = 0;
      for (int from : rp.in_link())
        if (rp.incoming(from)) checksum(rp.dequeueView<Record>(from), ourSum, ourCount);
    });
  };
  mpi();
  ours();
  int wrong = mpiCount != ourCount || mpiSum != ourSum;
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_SUM, w);
  if (wrong) {
    if (me == 0) std::printf("all_to_all: the checksums differ\n");
    std::exit(1);
  }
  std::vector<double> tm, to;
  for (int batch = 0; batch < 7; ++batch) {
    tm.push_back(seconds(w, reps, mpi));
    to.push_back(seconds(w, reps, ours));
  }
  MPI_Type_free(&rec);
  if (me == 0)
    std::printf("%-48s %10.3g %10.3g %7.2f\n",
                ("all_to_all, " + std::to_string(total) + " records of 16 B").c_str(), median(tm),
                median(to), median(to) / median(tm));
}

}  // namespace

int main(int argc, char** argv) {
  Environment env(&argc, &argv);
  const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
  int me = 0, P = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (me == 0) {
    bench::print_machine();
    std::printf(
        "ranks %d; seconds per operation (median of 7 alternated batches of %d)\n\n%-48s %10s %10s "
        "%7s\n",
        P, reps, "operation", "MPI", "blocks", "ratio");
  }
  allreduce_rows(reps, 1);
  allreduce_rows(reps, 4);
  all_to_all_row(std::max(1, reps / 4), 1000000);
  return 0;
}
