// The collective algorithms. Ranks are renumbered relative to the root where an algorithm is
// rooted (vr = (r - root) mod P); folds always run over absolute rank order (the canonical
// order, see algorithms.hpp), so rooted reductions fold towards rank 0 and then move the result.
#include "core/comm/algorithms.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <thread>

#include "core/comm/detail/backend.hpp"
#include "core/comm/detail/call.hpp"
#include "core/error.hpp"

namespace antler::comm {

namespace {

// The cost model's ping-pong (the collectives' own messages go through detail::Call, on one tag).
constexpr int kTagCost = Comm::kCollectiveTags + 6;

using detail::Call;
using Op = Call::Op;

std::span<const char> view(const ByteBuffer& b) {
  return {b.data(), b.size()};
}

int ceil_log2(int P) {
  int k = 0;
  while ((1 << k) < P) ++k;
  return k;
}

bool is_pow2(int P) {
  return P > 0 && (P & (P - 1)) == 0;
}

void check_root(const Comm& c, int root, Collective what) {
  if (root < 0 || root >= c.size())
    throw IndexError(std::string(to_string(what)) + ": root " + std::to_string(root) +
                     " out of range (ranks 0.." + std::to_string(c.size() - 1) + ")");
}

[[noreturn]] void cannot(Collective c, Algorithm a, const std::string& why) {
  std::string valid;
  for (Algorithm x : algorithms_for(c))
    valid += (valid.empty() ? "" : ", ") + std::string(to_string(x));
  throw ValueError(std::string(to_string(c)) + ": algorithm '" + to_string(a) + "' " + why +
                   " (algorithms for " + to_string(c) + ": " + valid + ")");
}

// Segment s of k over n bytes: [begin, end).
std::pair<std::size_t, std::size_t> segment(std::size_t n, int k, int s) {
  const std::size_t q = n / static_cast<std::size_t>(k), r = n % static_cast<std::size_t>(k);
  const std::size_t b = static_cast<std::size_t>(s) * q + std::min<std::size_t>(s, r);
  return {b, b + q + (static_cast<std::size_t>(s) < r ? 1 : 0)};
}

// ---- the binomial tree, both ways ----

/// Down the binomial tree rooted at `root` (ranks relative to it, vr = (r - root) mod P): the
/// rank receives from its parent, the rank that differs in vr's lowest set bit
/// (fromParent(parent, mask)), then sends to its children below that bit, farthest first
/// (toChild(child relative rank, mask)).
template <class FromParent, class ToChild>
void binomial_down(Call& c, int root, FromParent&& fromParent, ToChild&& toChild) {
  const int P = c.size(), r = c.rank();
  const int vr = (r - root + P) % P;
  int mask = 1;
  while (mask < P) {
    if (vr & mask) {
      fromParent((vr - mask + root) % P, mask);
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (vr + mask < P) toChild(vr + mask, mask);
}

/// Up the binomial tree over absolute ranks to rank 0 (the canonical order): the rank takes what
/// each child sends, nearest first (fromChild(bytes)), then sends `acc` to its parent.
template <class FromChild>
void binomial_up(Call& c, ByteBuffer& acc, FromChild&& fromChild) {
  const int P = c.size(), r = c.rank();
  for (int mask = 1; mask < P; mask <<= 1) {
    if (r & mask) {
      c.send(r - mask, view(acc));
      return;
    }
    if (r + mask < P) fromChild(c.recv(r + mask));
  }
}

// ---- broadcast ----

void bcast_binomial(Call& c, std::span<char> data, int root) {
  const int P = c.size();
  binomial_down(
      c, root,
      [&](int parent, int) {
        Op q = c.irecv(parent, data.data(), data.size());
        c.wait(q);
      },
      [&](int child, int) { c.send((child + root) % P, data); });
}

void bcast_chain(Call& c, std::span<char> data, int root, int k) {
  const int P = c.size(), r = c.rank();
  const int vr = (r - root + P) % P;
  const int prev = (r - 1 + P) % P, next = (r + 1) % P;
  std::vector<Op> recvs, sends;
  if (vr > 0)
    for (int s = 0; s < k; ++s) {
      auto [b, e] = segment(data.size(), k, s);
      recvs.push_back(c.irecv(prev, data.data() + b, e - b));
    }
  for (int s = 0; s < k; ++s) {
    auto [b, e] = segment(data.size(), k, s);
    if (vr > 0) c.wait(recvs[static_cast<std::size_t>(s)]);
    if (vr + 1 < P) sends.push_back(c.isend(next, data.subspan(b, e - b)));
  }
  for (auto& q : sends) c.wait(q);
}

// The Fibonacci tree over vr in [lo, lo + n): node lo is the root; its left subtree takes the
// Fibonacci share F(h+1) - 1 of the n - 1 others (h: the smallest height with F(h+2) - 1 >= n),
// the right subtree the rest. For n = F(h+2) - 1 this is the Fibonacci tree of the seed; for other
// n the left subtree stays full and the right one is cut short. Each node forwards every segment
// to its left child, then its right child: a single message reaches every node in h rounds.
struct FibNode {
  int parent = -1, left = -1, right = -1;
};

void fib_build(int lo, int n, int parent, std::vector<FibNode>& t) {
  if (n <= 0) return;
  t[static_cast<std::size_t>(lo)].parent = parent;
  if (n == 1) return;
  long f1 = 1, f2 = 1;  // F(h+1), F(h+2) with F(1) = F(2) = 1
  while (f2 - 1 < n) {
    const long f3 = f1 + f2;
    f1 = f2;
    f2 = f3;
  }
  const int left = static_cast<int>(std::min<long>(n - 1, f1 - 1));
  const int right = n - 1 - left;
  if (left > 0) {
    t[static_cast<std::size_t>(lo)].left = lo + 1;
    fib_build(lo + 1, left, lo, t);
  }
  if (right > 0) {
    t[static_cast<std::size_t>(lo)].right = lo + 1 + left;
    fib_build(lo + 1 + left, right, lo, t);
  }
}

void bcast_fibonacci(Call& c, std::span<char> data, int root, int k) {
  const int P = c.size(), r = c.rank();
  const int vr = (r - root + P) % P;
  std::vector<FibNode> t(static_cast<std::size_t>(P));
  fib_build(0, P, -1, t);
  const FibNode& me = t[static_cast<std::size_t>(vr)];
  auto abs_rank = [&](int v) { return (v + root) % P; };
  std::vector<Op> recvs, sends;
  if (me.parent >= 0)
    for (int s = 0; s < k; ++s) {
      auto [b, e] = segment(data.size(), k, s);
      recvs.push_back(c.irecv(abs_rank(me.parent), data.data() + b, e - b));
    }
  for (int s = 0; s < k; ++s) {
    auto [b, e] = segment(data.size(), k, s);
    if (me.parent >= 0) c.wait(recvs[static_cast<std::size_t>(s)]);
    if (me.left >= 0) sends.push_back(c.isend(abs_rank(me.left), data.subspan(b, e - b)));
    if (me.right >= 0) sends.push_back(c.isend(abs_rank(me.right), data.subspan(b, e - b)));
  }
  for (auto& q : sends) c.wait(q);
}

// Scatter (binomial, block vr of P to relative rank vr), then a ring allgather of the blocks.
void bcast_scatter_allgather(Call& c, std::span<char> data, int root) {
  const int P = c.size(), r = c.rank();
  const int vr = (r - root + P) % P;
  const std::size_t n = data.size();
  auto block = [&](int v) { return segment(n, P, v); };
  // Binomial scatter: the rank at vr is responsible for blocks [vr, vr + mask).
  binomial_down(
      c, root,
      [&](int parent, int mask) {
        const std::size_t b = block(vr).first, e = block(std::min(P, vr + mask) - 1).second;
        Op q = c.irecv(parent, data.data() + b, e - b);
        c.wait(q);
      },
      [&](int child, int mask) {
        const std::size_t b = block(child).first, e = block(std::min(P, child + mask) - 1).second;
        c.send((child + root) % P, data.subspan(b, e - b));
      });
  // Ring allgather over relative ranks: in step s, pass on the block received in step s - 1.
  const int next = (r + 1) % P, prev = (r - 1 + P) % P;
  for (int s = 0; s < P - 1; ++s) {
    const int sendBlock = (vr - s + P) % P, recvBlock = (vr - s - 1 + P) % P;
    auto [sb, se] = block(sendBlock);
    auto [rb, re] = block(recvBlock);
    Op w = c.isend(next, data.subspan(sb, se - sb));
    Op q = c.irecv(prev, data.data() + rb, re - rb);
    c.wait(q);
    c.wait(w);
  }
}

// ---- reduce ----

// Binomial reduce over absolute ranks to rank 0: the canonical order itself.
void reduce_binomial_to0(Call& c, ByteBuffer& data, const Fold& f) {
  binomial_up(c, data, [&](const ByteBuffer& other) { f.fold(data, view(other), false); });
}

// Recursive doubling with proxies: after the step with distance m, every rank holds the fold of
// its aligned block of 2m ranks (clipped at P). A rank whose partner r ^ m does not exist takes
// the partner block's fold from a rank of that block that does (the block's ranks all hold it);
// those ranks send to it in addition to their own partner. Works for any P in ceil(log2 P)
// rounds; with `concat`, the same pattern gathers instead of folding.
void recursive_doubling(
    Call& c, ByteBuffer& data,
    const std::function<void(ByteBuffer&, std::span<const char>, bool)>& combine) {
  const int P = c.size(), r = c.rank();
  for (int m = 1; m < P; m <<= 1) {
    const int partner = r ^ m;
    const int pb = partner & ~(m - 1);  // start of the partner block
    std::vector<Op> sends;
    ByteBuffer snapshot;  // what this rank holds before the step, for every rank it serves
    snapshot.append(data.data(), data.size());
    const int mb = r & ~(m - 1);  // my block
    const int mcount = std::min(P, mb + m) - mb;
    // For every rank q of the partner block whose own partner (q ^ m, in my block) does not
    // exist, the rank of my block serving it is mb + (q - pb) % mcount.
    for (int q = pb; q < std::min(P, pb + m); ++q) {
      const int qp = q ^ m;
      if (qp >= P && mb + (q - pb) % mcount == r) sends.push_back(c.isend(q, view(snapshot)));
    }
    if (partner < P) sends.push_back(c.isend(partner, view(snapshot)));
    if (pb < P) {
      const int pcount = std::min(P, pb + m) - pb;
      const int from = partner < P ? partner : pb + (r - mb) % pcount;
      ByteBuffer other = c.recv(from);
      combine(data, view(other), pb < mb);
    }
    for (auto& q : sends) c.wait(q);
  }
}

// Reduce-scatter by distance doubling, then allgather by distance halving, for any P.
//
// Over Q = P rounded up to a power of two virtual ranks: in the step with distance m the pair
// (v, v ^ m) splits its current range in two, each keeps one half and folds the partner's copy
// of it in, the lower block on the left, so after the step each holds, for its range, the fold of
// its aligned block of 2m virtual ranks: fold[a, a + 2m) = fold[a, a + m) . fold[a + m, a + 2m),
// the canonical order itself. Virtual ranks P .. Q-1 are ghosts: they contribute nothing, so a
// block that holds only ghosts is absent (its fold is the empty fold) and the canonical order's
// clipping falls out: a present block paired with an absent one keeps its own fold; an absent one
// paired with a present one takes a copy of it. Ghost g is played by rank g - Q/2 (in the lower
// half, where every rank is real), which therefore runs two virtual ranks: its messages for them
// go in virtual-rank order, and so do its partners' (v and v + Q/2 have partners w and w + Q/2),
// which keeps the pairs of messages between two ranks in step. At P a power of two there are no
// ghosts and this is the textbook algorithm: 2 log2 P exchanges, 2 n (P - 1) / P bytes per rank.
/// One rank's state in allreduce_rsag: the virtual ranks it plays and the ranges they hold.
class Rsag {
 public:
  Rsag(Call& c, ByteBuffer& data, const Fold& f)
      : c_(c), f_(f), P_(c.size()), r_(c.rank()), es_(f.elemSize) {
    while (Q_ < P_) Q_ <<= 1;
    H_ = Q_ / 2;
    const std::size_t count = data.size() / es_;
    roles_.reserve(2);
    roles_.push_back({r_, &data, {}, 0, count, {}});
    if (r_ < H_ && r_ + H_ >= P_) {
      roles_.push_back({r_ + H_, nullptr, {}, 0, count, {}});
      roles_.back().own.resize(data.size());
      roles_.back().buf = &roles_.back().own;
    }
  }
  void run() {
    for (int m = 1; m < Q_; m <<= 1) reduceScatter(m);
    for (int m = H_; m >= 1; m >>= 1) allgather(m);  // every block is present now
  }

 private:
  struct Role {
    int v;
    ByteBuffer* buf;
    ByteBuffer own;              // a ghost's vector (the real role works in data)
    std::size_t lo = 0, hi = 0;  // its range, in elements
    std::vector<std::pair<std::size_t, std::size_t>> ranges;  // the ranges before each step
  };
  struct Step {
    std::size_t keepLo, keepHi, giveLo, giveHi;
  };
  using Local = std::vector<std::pair<int, ByteBuffer>>;  // (target virtual rank, bytes)

  int proxy(int v) const { return v < P_ ? v : v - H_; }
  bool present(int v, int m) const { return (v & ~(m - 1)) < P_; }  // v's aligned m-block
  std::span<const char> bytes(const Role& x, std::size_t lo, std::size_t hi) const {
    return {x.buf->data() + lo * es_, (hi - lo) * es_};
  }
  void checkSize(int from, std::size_t got, std::size_t want) const {
    if (got != want)
      throw CommError("allreduce: rank " + std::to_string(r_) + " expected " +
                      std::to_string(want) + " bytes from rank " + std::to_string(from) + ", got " +
                      std::to_string(got) + " (vectors of different lengths)");
  }
  /// Sends `give` to virtual rank w: non-blocking, or a copy when this rank plays w too.
  void send(int w, std::span<const char> give, Local& local) {
    if (proxy(w) == r_) {
      ByteBuffer copy;
      copy.append(give.data(), give.size());
      local.push_back({w, std::move(copy)});
    } else {
      sends_.push_back(c_.isend(proxy(w), give));
    }
  }
  /// What virtual rank w sent to virtual rank v.
  ByteBuffer receive(int w, int v, Local& local) {
    if (proxy(w) != r_) return c_.recv(proxy(w));
    ByteBuffer got;
    for (auto& [t, b] : local)
      if (t == v) got = std::move(b);
    return got;
  }
  void waitSends() {
    for (auto& q : sends_) c_.wait(q);
    sends_.clear();
  }
  /// Halves each role's range with its partner across m, folding the half it keeps. Sends
  /// first, in virtual-rank order.
  void reduceScatter(int m) {
    std::vector<Step> st;
    for (Role& x : roles_) {
      const std::size_t mid = x.lo + (x.hi - x.lo) / 2;
      const bool lower = (x.v & m) == 0;
      st.push_back(
          {lower ? x.lo : mid, lower ? mid : x.hi, lower ? mid : x.lo, lower ? x.hi : mid});
    }
    Local local;
    for (std::size_t i = 0; i < roles_.size(); ++i) {
      const Role& x = roles_[i];
      const int w = x.v ^ m;
      if (present(x.v, m) && w < Q_) send(w, bytes(x, st[i].giveLo, st[i].giveHi), local);
    }
    for (std::size_t i = 0; i < roles_.size(); ++i) {
      Role& x = roles_[i];
      const int w = x.v ^ m;
      if (present(w, m)) {
        ByteBuffer got = receive(w, x.v, local);
        checkSize(proxy(w), got.size(), (st[i].keepHi - st[i].keepLo) * es_);
        char* at = x.buf->data() + st[i].keepLo * es_;
        if (present(x.v, m)) {
          ByteBuffer part;
          part.append(at, got.size());
          f_.fold(part, view(got), w < x.v);
          if (!part.empty()) std::memcpy(at, part.data(), part.size());
        } else if (!got.empty()) {
          std::memcpy(at, got.data(), got.size());
        }
      }
      x.ranges.push_back({x.lo, x.hi});
      x.lo = st[i].keepLo;
      x.hi = st[i].keepHi;
    }
    waitSends();
  }
  /// Doubles each role's range back with its partner across m (the reverse order).
  void allgather(int m) {
    Local local;
    for (const Role& x : roles_) send(x.v ^ m, bytes(x, x.lo, x.hi), local);
    for (Role& x : roles_) {
      const int w = x.v ^ m;
      auto [plo, phi] = x.ranges.back();
      x.ranges.pop_back();
      // The partner holds the other half of [plo, phi).
      const std::size_t olo = x.lo == plo ? x.hi : plo, ohi = x.lo == plo ? phi : x.lo;
      ByteBuffer got = receive(w, x.v, local);
      checkSize(proxy(w), got.size(), (ohi - olo) * es_);
      if (got.size()) std::memcpy(x.buf->data() + olo * es_, got.data(), got.size());
      x.lo = plo;
      x.hi = phi;
    }
    // This rank's sends read ranges that its receives above do not write.
    waitSends();
  }

  Call& c_;
  const Fold& f_;
  const int P_, r_;
  int Q_ = 1, H_ = 0;
  const std::size_t es_;
  std::vector<Role> roles_;
  std::vector<Op> sends_;
};

void allreduce_rsag(Call& c, ByteBuffer& data, const Fold& f) {
  Rsag(c, data, f).run();
}

// ---- gather ----

// Blocks travel as {u64 count, then (u64 size, bytes) per block}, in rank order.
void put_block(ByteBuffer& b, std::span<const char> x) {
  const std::uint64_t n = x.size();
  b.append(&n, 8);
  b.append(x.data(), x.size());
}

void unpack_blocks(const ByteBuffer& packed, ByteBuffer& out, std::vector<std::size_t>& counts,
                   int P) {
  counts.assign(static_cast<std::size_t>(P), 0);
  out.clear();
  std::size_t at = 0;
  for (int q = 0; q < P; ++q) {
    std::uint64_t n = 0;
    if (at + 8 > packed.size()) throw CommError("gather: corrupted block list");
    std::memcpy(&n, packed.data() + at, 8);
    at += 8;
    if (at + n > packed.size()) throw CommError("gather: corrupted block list");
    out.append(packed.data() + at, n);
    counts[static_cast<std::size_t>(q)] = n;
    at += n;
  }
}

// Binomial gather towards rank 0 (blocks in rank order), then moved to root.
void gather_binomial(Call& c, std::span<const char> mine, int root, ByteBuffer& out,
                     std::vector<std::size_t>& counts) {
  const int P = c.size(), r = c.rank();
  ByteBuffer acc;
  put_block(acc, mine);
  binomial_up(c, acc, [&](const ByteBuffer& other) { acc.append(other.data(), other.size()); });
  out.clear();
  counts.clear();
  if (root != 0) {
    if (r == 0) c.send(root, view(acc));
    if (r == root) acc = c.recv(0);
  }
  if (r == root) unpack_blocks(acc, out, counts, P);
}

void allgather_ring(Call& c, std::span<const char> mine, ByteBuffer& out,
                    std::vector<std::size_t>& counts) {
  const int P = c.size(), r = c.rank();
  std::vector<ByteBuffer> blocks(static_cast<std::size_t>(P));
  blocks[static_cast<std::size_t>(r)].append(mine.data(), mine.size());
  const int next = (r + 1) % P, prev = (r - 1 + P) % P;
  for (int s = 0; s < P - 1; ++s) {
    const int sb = (r - s + P) % P, rb = (r - s - 1 + P) % P;
    blocks[static_cast<std::size_t>(rb)] =
        c.sendrecv(next, view(blocks[static_cast<std::size_t>(sb)]), prev);
  }
  out.clear();
  counts.clear();
  for (auto& b : blocks) {
    counts.push_back(b.size());
    out.append(b.data(), b.size());
  }
}

void allgather_doubling(Call& c, std::span<const char> mine, ByteBuffer& out,
                        std::vector<std::size_t>& counts) {
  // Each rank holds a list of (rank, bytes) blocks; combining merges the lists in rank order.
  ByteBuffer acc;
  const std::uint32_t me = static_cast<std::uint32_t>(c.rank());
  acc.append(&me, 4);
  put_block(acc, mine);
  auto concat = [](ByteBuffer& a, std::span<const char> other, bool otherOnLeft) {
    ByteBuffer merged;
    if (otherOnLeft) {
      merged.append(other.data(), other.size());
      merged.append(a.data(), a.size());
    } else {
      merged.append(a.data(), a.size());
      merged.append(other.data(), other.size());
    }
    a = std::move(merged);
  };
  recursive_doubling(c, acc, concat);
  // acc: (u32 rank, u64 size, bytes) for every rank, in rank order.
  out.clear();
  counts.assign(static_cast<std::size_t>(c.size()), 0);
  std::size_t at = 0;
  for (int q = 0; q < c.size(); ++q) {
    std::uint32_t who = 0;
    std::uint64_t n = 0;
    if (at + 12 > acc.size()) throw CommError("allgather: corrupted block list");
    std::memcpy(&who, acc.data() + at, 4);
    std::memcpy(&n, acc.data() + at + 4, 8);
    at += 12;
    if (who != static_cast<std::uint32_t>(q) || at + n > acc.size())
      throw CommError("allgather: corrupted block list");
    out.append(acc.data() + at, n);
    counts[static_cast<std::size_t>(q)] = n;
    at += n;
  }
}

// ---- the cost model ----

std::mutex g_model_mu;
CostModel g_model;
bool g_measured = false;

double env_double(const char* name, double fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const double x = std::strtod(v, &end);
  if (end == v || *end || !(x >= 0) || !std::isfinite(x))
    throw ValueError(std::string(name) + "=" + v + ": expected a non-negative number of seconds");
  return x;
}

}  // namespace

const char* to_string(Algorithm a) {
  switch (a) {
    case Algorithm::automatic:
      return "automatic";
    case Algorithm::vendor:
      return "vendor";
    case Algorithm::binomial:
      return "binomial";
    case Algorithm::linear_pipeline:
      return "linear_pipeline";
    case Algorithm::fibonacci:
      return "fibonacci";
    case Algorithm::scatter_allgather:
      return "scatter_allgather";
    case Algorithm::recursive_doubling:
      return "recursive_doubling";
    case Algorithm::reduce_scatter_allgather:
      return "reduce_scatter_allgather";
    case Algorithm::ring:
      return "ring";
  }
  return "?";
}

Algorithm parse_algorithm(std::string_view s) {
  for (int i = 0; i <= static_cast<int>(Algorithm::ring); ++i)
    if (s == to_string(static_cast<Algorithm>(i))) return static_cast<Algorithm>(i);
  std::string valid;
  for (int i = 0; i <= static_cast<int>(Algorithm::ring); ++i)
    valid += (i ? ", " : "") + std::string(to_string(static_cast<Algorithm>(i)));
  throw ValueError("unknown collective algorithm " + quoted(s) + " (valid: " + valid + ")");
}

const char* to_string(Collective c) {
  switch (c) {
    case Collective::broadcast:
      return "broadcast";
    case Collective::reduce:
      return "reduce";
    case Collective::allreduce:
      return "allreduce";
    case Collective::allgather:
      return "allgather";
    case Collective::gather:
      return "gather";
  }
  return "?";
}

std::vector<Algorithm> algorithms_for(Collective c) {
  using A = Algorithm;
  switch (c) {
    case Collective::broadcast:
      return {A::automatic,       A::vendor,    A::binomial,
              A::linear_pipeline, A::fibonacci, A::scatter_allgather};
    case Collective::reduce:
      return {A::automatic, A::vendor, A::binomial};
    case Collective::allreduce:
      return {A::automatic, A::vendor, A::binomial, A::recursive_doubling,
              A::reduce_scatter_allgather};
    case Collective::allgather:
      return {A::automatic, A::vendor, A::ring, A::recursive_doubling};
    case Collective::gather:
      return {A::automatic, A::vendor, A::binomial};
  }
  return {};
}

CostModel cost_model() {
  std::lock_guard<std::mutex> lk(g_model_mu);
  CostModel m = g_model;
  m.alpha = env_double("ANTLER_COMM_ALPHA", m.alpha);
  m.beta = env_double("ANTLER_COMM_BETA", m.beta);
  m.perMessage = env_double("ANTLER_COMM_PER_MESSAGE", m.perMessage);
  m.perByte = env_double("ANTLER_COMM_PER_BYTE", m.perByte);
  m.parallel = env_double("ANTLER_COMM_PARALLEL", m.parallel);
  return m;
}

void set_cost_model(const CostModel& m) {
  std::lock_guard<std::mutex> lk(g_model_mu);
  g_model = m;
  g_measured = true;
}

CostModel measure_cost_model(Comm& c) {
  // Ping-pong between ranks 0 and 1: 8 bytes (alpha) and 1 MiB (beta); a 4 MiB copy on rank 0
  // (perByte); rank 0's figures are broadcast so that every rank holds the same model.
  CostModel m = cost_model();
  double fig[4] = {m.alpha, m.beta, m.perByte,
                   static_cast<double>(std::max(1u, std::thread::hardware_concurrency()))};
  if (c.size() > 1 && c.rank() < 2) {
    const int other = 1 - c.rank();
    auto pingpong = [&](std::size_t n, int reps) {
      std::vector<char> buf(n, 0);
      double best = std::numeric_limits<double>::infinity();
      for (int i = 0; i < reps; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        if (c.rank() == 0) {
          c.send(other, kTagCost, buf);
          (void)c.recv(other, kTagCost);
        } else {
          (void)c.recv(other, kTagCost);
          c.send(other, kTagCost, buf);
        }
        best = std::min(
            best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      return best / 2;
    };
    const double small = pingpong(8, 50), large = pingpong(1 << 20, 5);
    fig[0] = std::max(1e-8, small);
    fig[1] = std::max(1e-13, (large - small) / double(1 << 20));
  }
  if (c.rank() == 0) {
    const std::size_t n = std::size_t{4} << 20;
    std::vector<char> from(n, 1), to(n, 0);
    double best = std::numeric_limits<double>::infinity();
    for (int i = 0; i < 5; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      std::memcpy(to.data(), from.data(), n);
      best = std::min(best,
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      from[static_cast<std::size_t>(i)] = to[n - 1 - static_cast<std::size_t>(i)];
    }
    fig[2] = std::max(1e-13, best / static_cast<double>(n));
  }
  algo::broadcast(c, {reinterpret_cast<char*>(fig), sizeof fig}, 0,
                  Options{Algorithm::binomial, 1});
  // How many ranks share rank 0's node: more than its hardware threads is oversubscribed.
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const std::uint64_t mine = std::hash<std::string>{}(host);
  ByteBuffer all;
  std::vector<std::size_t> counts;
  algo::allgather(c, {reinterpret_cast<const char*>(&mine), sizeof mine}, all, counts,
                  Options{Algorithm::ring, 0, sizeof mine});
  int onNode0 = 0;
  for (int q = 0; q < c.size(); ++q) onNode0 += std::memcmp(all.data() + 8 * q, all.data(), 8) == 0;
  m.alpha = fig[0];
  m.beta = fig[1];
  m.perByte = fig[2];
  m.parallel = onNode0 > fig[3] ? c.size() * fig[3] / onNode0 : 0;
  set_cost_model(m);
  return cost_model();  // environment variables still win
}

namespace {
/// The alpha-beta terms of modelled_cost for one (P, n, model, k), one function per collective.
class Cost {
 public:
  Cost(Algorithm a, int P, std::size_t n, const CostModel& m, int k)
      : a(a),
        P(P),
        n(n),
        k(k),
        m(m),
        N(static_cast<double>(n)),
        al(m.alpha),
        be(m.beta),
        cp(m.perByte),
        L(ceil_log2(P)),
        Q(std::exp2(L)),
        Pd(P),
        own(a != Algorithm::vendor) {}

  double broadcast() const {
    switch (a) {
      case Algorithm::binomial:
        return finish(L * msg(N), 2 * (Pd - 1) * bytes(N));
      case Algorithm::linear_pipeline:
        return pipeline(Pd - 1, 1);
      case Algorithm::fibonacci: {
        int h = 0;  // the height: N(h) = 1 + N(h-1) + N(h-2) >= P ranks
        long n0 = 1, n1 = 2;
        while (n0 < P) {
          const long n2 = 1 + n1 + n0;
          n0 = n1;
          n1 = n2;
          ++h;
        }
        return pipeline(h, 2);
      }
      case Algorithm::scatter_allgather: {
        const double block = N / Pd;
        return finish(L * msg(N / 2) + (Pd - 1) * msg(block),
                      2 * ((Pd - 1) * bytes(N / 2) + Pd * (Pd - 1) * bytes(block)));
      }
      case Algorithm::vendor:
        return finish(std::min(L * msg(N), (L + Pd - 1) * al + 2 * be * N * (Pd - 1) / Pd),
                      2 * (Pd - 1) * bytes(N));
      default:
        return inf;
    }
  }
  double reduce() const {
    if (a != Algorithm::binomial && a != Algorithm::vendor) return inf;
    // A fold reads and writes the partial; antler's also copies the received one.
    return finish(L * (msg(N) + (own ? 3 : 1) * N * cp),
                  (Pd - 1) * (2 * bytes(N) + (own ? 3 : 1) * N * cp));
  }
  double gather() const {
    if (a != Algorithm::binomial && a != Algorithm::vendor) return inf;
    // The vendor's is two calls: a gather of the sizes, then the gatherv.
    return finish((own ? 1 : 2) * L * msg(0) + be * N * (Pd - 1) + (own ? 2 * N * Pd * cp : 0),
                  2 * ((Pd - 1) * bytes(0) + be * N * Pd * L / 2));
  }
  double allreduce() const {
    switch (a) {
      case Algorithm::binomial:
        return finish(2 * L * msg(N) + L * 3 * N * cp, (Pd - 1) * (4 * bytes(N) + 3 * N * cp));
      case Algorithm::recursive_doubling:
        // A snapshot, the received copy and the fold per step; at other P the ranks that
        // serve a missing partner send twice in a step.
        return finish(L * (msg(N) + 4 * N * cp) * (is_pow2(P) ? 1 : 1.5),
                      Q * L * (2 * bytes(N) + 4 * N * cp));
      case Algorithm::reduce_scatter_allgather: {
        // 2 log2 Q messages of halving sizes, 2 N (Q - 1) / Q bytes; the ranks that play a
        // ghost as well do it twice.
        const double per = 2 * L * msg(N / Q) + 2 * be * N * (Q - 1) / Q + 4 * N * cp * (Q - 1) / Q;
        return finish(per * (is_pow2(P) ? 1 : 2), 2 * Q * (2 * be * N + 4 * N * cp) * (Q - 1) / Q);
      }
      case Algorithm::vendor: {
        const double tree = L * (msg(N) + N * cp),
                     rsag = 2 * L * al + 2 * be * N * (Pd - 1) / Pd + N * cp;
        return finish(
            std::min(tree, rsag),
            2 * Pd * std::min(L * (be * N + N * cp), 2 * be * N * (Pd - 1) / Pd + N * cp));
      }
      default:
        return inf;
    }
  }
  double allgather() const {
    switch (a) {
      case Algorithm::ring:
        return finish((Pd - 1) * msg(N) + 2 * N * Pd * cp,
                      Pd * (2 * (Pd - 1) * bytes(N) + 2 * N * Pd * cp));
      case Algorithm::recursive_doubling:
        return finish(L * msg(0) + be * N * (Pd - 1) + 3 * N * Pd * cp,
                      Pd * (2 * (L * bytes(0) + be * N * (Pd - 1)) + 3 * N * Pd * cp));
      case Algorithm::vendor:
        // Two vendor calls: an allgather of the sizes, then the allgatherv.
        return finish(2 * L * al + be * N * (Pd - 1), 2 * Pd * be * N * (Pd - 1));
      default:
        return inf;
    }
  }

 private:
  static constexpr double inf = std::numeric_limits<double>::infinity();
  /// One message of b bytes: the wire, antler's software, and the copy behind the header of a
  /// message small enough to travel with it (on both sides).
  double msg(double b) const {
    return al + be * b + (own ? m.perMessage + (b <= 8192 ? 2 * b * cp : 0) : 0);
  }
  /// Its bytes alone: what moving it costs the CPUs (latency is waiting, not work).
  double bytes(double b) const { return be * b + (own && b <= 8192 ? 2 * b * cp : 0); }
  /// The critical path, unless the ranks' total work on bytes (each message costs its sender and
  /// its receiver) shared by the ranks that can run at once takes longer.
  double finish(double crit, double work) const {
    const double par = m.parallel > 0 ? std::min(Pd, m.parallel) : Pd;
    return std::max(crit, work / par);
  }
  /// Pipelines: rounds(k) messages of N / k on the critical path, (P - 1) k in all; k = 0: best.
  double pipeline(double rounds0, double perSeg) const {
    auto at = [&](int kk) {
      const double seg = N / kk, rounds = rounds0 + perSeg * (kk - 1);
      return finish(rounds * msg(seg), 2 * (Pd - 1) * kk * bytes(seg));
    };
    if (k > 0) return at(k);
    double best = inf;
    const int kmax = static_cast<int>(std::min<std::size_t>(std::max<std::size_t>(n, 1), 4096));
    for (int kk = 1; kk <= kmax; kk *= 2) best = std::min(best, at(kk));
    return best;
  }

  const Algorithm a;
  const int P;
  const std::size_t n;
  const int k;
  const CostModel& m;
  const double N, al, be, cp, L, Q, Pd;
  const bool own;
};
}  // namespace

double modelled_cost(Collective c, Algorithm a, int P, std::size_t n, const CostModel& m, int k) {
  if (P <= 1) return 0;
  const Cost cost(a, P, n, m, k);
  switch (c) {
    case Collective::broadcast:
      return cost.broadcast();
    case Collective::reduce:
      return cost.reduce();
    case Collective::gather:
      return cost.gather();
    case Collective::allreduce:
      return cost.allreduce();
    case Collective::allgather:
      return cost.allgather();
  }
  return std::numeric_limits<double>::infinity();
}

Choice choose(Collective c, int P, std::size_t n, const Fold* fold, bool vendorAvailable,
              const Options& o) {
  Algorithm forced = o.algorithm;
  if (forced == Algorithm::automatic) {
    if (const char* env = std::getenv("ANTLER_COMM_ALGORITHM"); env && *env) {
      const Algorithm a = parse_algorithm(env);
      const auto ok = algorithms_for(c);
      if (std::find(ok.begin(), ok.end(), a) != ok.end()) forced = a;
    }
  }
  const CostModel m = cost_model();
  auto segments_for = [&](Algorithm a) {
    if (o.segments > 0) return o.segments;
    if (a != Algorithm::linear_pipeline && a != Algorithm::fibonacci) return 1;
    // The k that minimises the model (searched as in modelled_cost).
    int bestK = 1;
    double best = std::numeric_limits<double>::infinity();
    for (int kk = 1; kk <= 1024; kk *= 2) {
      if (static_cast<std::size_t>(kk) > std::max<std::size_t>(n, 1)) break;
      const double cost = modelled_cost(c, a, P, n, m, kk);
      if (cost < best) {
        best = cost;
        bestK = kk;
      }
    }
    return bestK;
  };
  if (forced != Algorithm::automatic) {
    // Refused alike on every rank, whatever P (also where P = 1 would need no messages).
    const auto ok = algorithms_for(c);
    if (std::find(ok.begin(), ok.end(), forced) == ok.end())
      cannot(c, forced, std::string("does not implement ") + to_string(c));
    if (o.segments < 0)
      throw ValueError(std::string(to_string(c)) + ": " + std::to_string(o.segments) +
                       " segments (valid: 0 for automatic, or at least 1)");
    return {forced, segments_for(forced)};
  }
  // A vendor fold is safe for automatic only when the order cannot change the bits.
  const bool vendorFoldOk =
      fold == nullptr || (fold->prim != Prim::none && fold->op != OpKind::none &&
                          (fold->exact || (P <= 2 && fold->commutative)));
  Choice best{Algorithm::binomial, 1};
  double bestCost = std::numeric_limits<double>::infinity();
  for (Algorithm a : algorithms_for(c)) {
    if (a == Algorithm::automatic) continue;
    if (a == Algorithm::vendor && (!vendorAvailable || !vendorFoldOk)) continue;
    if (a == Algorithm::reduce_scatter_allgather && (!fold || fold->elemSize == 0)) continue;
    const int k = segments_for(a);
    double cost = modelled_cost(c, a, P, n, m, k);
    if (a == Algorithm::vendor) cost *= 0.999;  // ties go to the library's own call
    if (cost < bestCost) {
      bestCost = cost;
      best = {a, k};
    }
  }
  return best;
}

namespace {

// The broadcast of data by choice ch, as part of call k (which may be an all-reduce).
void bcast_with(Call& k, std::span<char> data, int root, const Choice& ch) {
  const int segs = std::max(
      1, std::min<int>(ch.segments, static_cast<int>(std::max<std::size_t>(1, data.size()))));
  switch (ch.algorithm) {
    case Algorithm::vendor:
      return k.comm().backend().vendorBcast(data.data(), data.size(), root);
    case Algorithm::binomial:
      return bcast_binomial(k, data, root);
    case Algorithm::linear_pipeline:
      return bcast_chain(k, data, root, segs);
    case Algorithm::fibonacci:
      return bcast_fibonacci(k, data, root, segs);
    case Algorithm::scatter_allgather:
      return bcast_scatter_allgather(k, data, root);
    default:
      cannot(Collective::broadcast, ch.algorithm, "does not broadcast");
  }
}

// broadcast_any's body, as part of call k: {u64 size, the first inlineBytes} by binomial tree
// (or vendor if forced), then the rest by the algorithm chosen for its size.
void bcast_any_with(Call& k, ByteBuffer& data, int root, const Options& o,
                    std::size_t inlineBytes) {
  const int P = k.size();
  ByteBuffer head;
  head.resize(8 + inlineBytes);
  std::uint64_t n = data.size();
  if (k.rank() == root) {
    std::memcpy(head.data(), &n, 8);
    if (n) std::memcpy(head.data() + 8, data.data(), std::min<std::size_t>(n, inlineBytes));
  }
  Options first = o;
  if (first.algorithm != Algorithm::vendor) first.algorithm = Algorithm::binomial;
  const Choice hc = choose(Collective::broadcast, P, head.size(), nullptr, true, first);
  k.setAlgorithm(hc.algorithm);
  bcast_with(k, {head.data(), head.size()}, root, hc);
  std::memcpy(&n, head.data(), 8);
  if (k.rank() != root) {
    data.resize(n);
    if (n) std::memcpy(data.data(), head.data() + 8, std::min<std::size_t>(n, inlineBytes));
  }
  if (n <= inlineBytes) return;
  // The rest: every rank now knows its size, so every rank chooses alike.
  const Choice rc = choose(Collective::broadcast, P, n - inlineBytes, nullptr, true, o);
  k.setAlgorithm(rc.algorithm);
  bcast_with(k, {data.data() + inlineBytes, n - inlineBytes}, root, rc);
}

}  // namespace

namespace algo {

void broadcast(Comm& c, std::span<char> data, int root, const Options& o) {
  check_root(c, root, Collective::broadcast);
  const int P = c.size();
  const Choice ch = choose(Collective::broadcast, P, data.size(), nullptr, true, o);
  Call k(c, Collective::broadcast, root, ch.algorithm);
  if (P == 1) return;
  bcast_with(k, data, root, ch);
}

void broadcast_any(Comm& c, ByteBuffer& data, int root, const Options& o, std::size_t inlineBytes) {
  check_root(c, root, Collective::broadcast);
  Call k(c, Collective::broadcast, root, o.algorithm);
  if (c.size() == 1) return;
  bcast_any_with(k, data, root, o, inlineBytes);
}

void reduce(Comm& c, ByteBuffer& data, int root, const Fold& f, const Options& o) {
  check_root(c, root, Collective::reduce);
  const int P = c.size();
  const bool vendorOk = f.prim != Prim::none && f.op != OpKind::none;
  const Choice ch =
      choose(Collective::reduce, P, f.elemSize ? data.size() : o.sizeBound, &f, vendorOk, o);
  Call k(c, Collective::reduce, root, ch.algorithm);
  if (P == 1) return;
  switch (ch.algorithm) {
    case Algorithm::vendor: {
      if (!vendorOk)
        cannot(Collective::reduce, ch.algorithm,
               "cannot apply this fold (not an MPI type and operator)");
      ByteBuffer out;
      out.resize(data.size());
      c.backend().vendorReduce(data.data(), out.data(), data.size() / f.elemSize, f.prim, f.op,
                               root);
      if (c.rank() == root) data = std::move(out);
      return;
    }
    case Algorithm::binomial:
      reduce_binomial_to0(k, data, f);
      if (root != 0) {
        if (c.rank() == 0) k.send(root, view(data));
        if (c.rank() == root) data = k.recv(0);
      }
      return;
    default:
      cannot(Collective::reduce, ch.algorithm, "does not reduce");
  }
}

void allreduce(Comm& c, ByteBuffer& data, const Fold& f, const Options& o) {
  const int P = c.size();
  const bool vendorOk = f.prim != Prim::none && f.op != OpKind::none;
  const Choice ch =
      choose(Collective::allreduce, P, f.elemSize ? data.size() : o.sizeBound, &f, vendorOk, o);
  if (ch.algorithm == Algorithm::reduce_scatter_allgather && f.elemSize == 0)
    cannot(Collective::allreduce, ch.algorithm, "needs an elementwise fold (a vector of numbers)");
  Call k(c, Collective::allreduce, -1, ch.algorithm);
  if (P == 1) return;
  switch (ch.algorithm) {
    case Algorithm::vendor:
      if (!vendorOk)
        cannot(Collective::allreduce, ch.algorithm,
               "cannot apply this fold (not an MPI type and operator)");
      c.backend().vendorAllreduce(data.data(), data.data(), data.size() / f.elemSize, f.prim, f.op);
      return;
    case Algorithm::binomial: {
      reduce_binomial_to0(k, data, f);
      if (f.elemSize > 0)  // every rank holds a vector of the same size
        bcast_binomial(k, {data.data(), data.size()}, 0);
      else
        bcast_any_with(k, data, 0, Options{Algorithm::binomial, 1}, 1024);
      return;
    }
    case Algorithm::recursive_doubling:
      recursive_doubling(k, data, f.fold);
      return;
    case Algorithm::reduce_scatter_allgather:
      allreduce_rsag(k, data, f);
      return;
    default:
      cannot(Collective::allreduce, ch.algorithm, "does not all-reduce");
  }
}

namespace {
/// A gather on one rank: its own block.
void only_block(std::span<const char> mine, ByteBuffer& out, std::vector<std::size_t>& counts) {
  out.clear();
  out.append(mine.data(), mine.size());
  counts.assign(1, mine.size());
}
}  // namespace

void allgather(Comm& c, std::span<const char> mine, ByteBuffer& out,
               std::vector<std::size_t>& counts, const Options& o) {
  const int P = c.size();
  // Sizes may differ between ranks: choose by the bound every rank passes, never by mine.size().
  const Choice ch = choose(Collective::allgather, P, o.sizeBound, nullptr, true, o);
  Call k(c, Collective::allgather, -1, ch.algorithm);
  if (P == 1) return only_block(mine, out, counts);
  switch (ch.algorithm) {
    case Algorithm::vendor:
      return c.backend().vendorAllgatherv(mine, counts, out);
    case Algorithm::ring:
      return allgather_ring(k, mine, out, counts);
    case Algorithm::recursive_doubling:
      return allgather_doubling(k, mine, out, counts);
    default:
      cannot(Collective::allgather, ch.algorithm, "does not allgather");
  }
}

void gather(Comm& c, std::span<const char> mine, int root, ByteBuffer& out,
            std::vector<std::size_t>& counts, const Options& o) {
  check_root(c, root, Collective::gather);
  const int P = c.size();
  const Choice ch = choose(Collective::gather, P, o.sizeBound, nullptr, true, o);
  Call k(c, Collective::gather, root, ch.algorithm);
  if (P == 1) return only_block(mine, out, counts);
  switch (ch.algorithm) {
    case Algorithm::vendor:
      return c.backend().vendorGatherv(mine, root, counts, out);
    case Algorithm::binomial:
      return gather_binomial(k, mine, root, out, counts);
    default:
      cannot(Collective::gather, ch.algorithm, "does not gather");
  }
}

void allgather_inline(Comm& c, std::span<const char> mine, std::size_t inlineBytes,
                      std::vector<std::size_t>& counts, std::vector<char>& out) {
  Call k(c, Collective::allgather, -1, Algorithm::vendor);  // a sequence number, no header
  const std::size_t P = static_cast<std::size_t>(c.size());
  const std::size_t block = 8 + inlineBytes;
  // Scratch reused between calls (one thread per rank calls this).
  thread_local std::vector<char> me, blocks;
  me.assign(block, 0);
  blocks.resize(block * P);
  const std::uint64_t n64 = mine.size();
  std::memcpy(me.data(), &n64, 8);
  if (!mine.empty()) std::memcpy(me.data() + 8, mine.data(), std::min(mine.size(), inlineBytes));
  c.backend().vendorAllgather(me.data(), block, blocks.data());
  counts.assign(P, 0);
  std::size_t total = 0;
  bool overflow = false;
  for (std::size_t r = 0; r < P; ++r) {
    std::uint64_t n = 0;
    std::memcpy(&n, blocks.data() + r * block, 8);
    counts[r] = n;
    total += n;
    overflow = overflow || n > inlineBytes;
  }
  out.resize(total);
  for (std::size_t r = 0, at = 0; r < P; at += counts[r++])
    if (counts[r])
      std::memcpy(out.data() + at, blocks.data() + r * block + 8, std::min(counts[r], inlineBytes));
  if (!overflow) return;
  // Second collective: the bytes beyond each rank's inline block.
  const std::size_t extra = mine.size() > inlineBytes ? mine.size() - inlineBytes : 0;
  std::vector<std::size_t> tails;
  ByteBuffer tail;
  c.backend().vendorAllgatherv({mine.data() + (extra ? inlineBytes : 0), extra}, tails, tail);
  std::size_t at = 0;
  for (std::size_t r = 0, offset = 0; r < P; offset += counts[r++]) {
    const std::size_t want = counts[r] > inlineBytes ? counts[r] - inlineBytes : 0;
    if (tails[r] != want) throw CommError("allgather: a rank's overflow does not match its size");
    if (want) std::memcpy(out.data() + offset + inlineBytes, tail.data() + at, want);
    at += want;
  }
}

bool any(Comm& c, bool mine) {
  Call k(c, Collective::allreduce, -1, Algorithm::vendor);  // a sequence number, no header
  if (c.size() == 1) return mine;
  int in = mine ? 1 : 0, out = 0;
  c.backend().vendorAllreduce(&in, &out, 1, Prim::i32, OpKind::lor);
  return out != 0;
}

}  // namespace algo
}  // namespace antler::comm
