// The Local backend: simulated ranks as threads, one shared world of mailboxes.
//
// Locking: one mutex guards every mailbox and the world's bookkeeping (which ranks are alive,
// which wait, and for what); each rank waits on its own condition variable. That is simple and
// plenty for hundreds of ranks moving test-sized messages; the figures the backend reports come
// from the message pattern, not from wall time.
#include "core/comm/local.hpp"

#include <pthread.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <string>

#include "core/comm/detail/backend.hpp"
#include "core/comm/detail/elementwise.hpp"
#include "core/error.hpp"

namespace antler::comm {

namespace {

struct Message {
  std::uint64_t context;
  int src;  // rank in the communicator
  int tag;
  ByteBuffer bytes;
  std::uint64_t round;  // the round in which it arrives
  double time;          // when it arrives (model)
  // A synchronous send's: set (under the world's mutex) once a receive matches the message.
  std::shared_ptr<bool> matched;
  int fromWorld = -1;  // the sender's world rank (to tell it of the match)
};

struct Waiting {
  bool waiting = false;
  bool any = false;  // idle(): waits for any event, not one message
  std::uint64_t context = 0;
  int src = 0, tag = 0;
};

// The operations a Local rank can have in flight.
struct LocalOp {
  enum class Kind { recv, ssend, barrier, batch };
  explicit LocalOp(Kind k) : kind(k) {}
  virtual ~LocalOp() = default;
  Kind kind;
};
// A posted receive: matched, as in MPI, to the earliest message that fits when it is posted or
// else to the first that arrives after it (receives posted earlier first).
struct LocalRecv final : LocalOp {
  LocalRecv(std::uint64_t c, int s, int t, char* i, std::size_t count)
      : LocalOp(Kind::recv), context(c), src(s), tag(t), into(i), n(count) {}
  std::uint64_t context;
  int src, tag;
  char* into;
  std::size_t n;
  bool done = false;  // under the world's mutex
  Message msg;
};
struct LocalSsend final : LocalOp {
  LocalSsend() : LocalOp(Kind::ssend) {}
  std::shared_ptr<bool> matched = std::make_shared<bool>(false);
};
// A dissemination barrier, advanced by test(): in round k a rank tells rank + 2^k and hears
// from rank - 2^k, ceil(log2 P) rounds.
struct LocalBarrier final : LocalOp {
  LocalBarrier() : LocalOp(Kind::barrier) {}
  int round = 0, rounds = 0;
  bool sent = false;
};
struct LocalBatch final : LocalOp {
  LocalBatch() : LocalOp(Kind::batch) {}
  std::vector<std::shared_ptr<void>> parts;
};
struct LocalHood {
  std::vector<int> sources, dests;
};

struct World {
  explicit World(int P, LocalOptions o)
      : size(P), options(o), mail(P), posted(P), cv(P), waits(P), events(P, 0) {}
  int size;
  LocalOptions options;
  std::mutex mu;
  std::vector<std::deque<Message>> mail;                       // by world rank
  std::vector<std::deque<std::shared_ptr<LocalRecv>>> posted;  // by world rank, in post order
  std::vector<std::condition_variable> cv;
  std::vector<Waiting> waits;
  std::vector<std::uint64_t> events;  // by world rank: arrivals and matches (Backend::events)
  int alive = 0, blocked = 0;
  bool deadlock = false;
  std::string deadlockText;

  /// Called with mu held when a rank blocks or leaves: if every live rank waits, no message can
  /// ever arrive.
  void detect() {
    if (alive > 0 && blocked == alive && !deadlock) {
      deadlock = true;
      deadlockText =
          "comm::Local: deadlock: every running rank waits for a message that no rank "
          "will send (";
      int shown = 0;
      for (int r = 0; r < size && shown < 8; ++r)
        if (waits[r].waiting) {
          deadlockText += (shown++ ? ", " : "") + std::string("rank ") + std::to_string(r) +
                          (waits[r].any ? std::string(" waits for any message")
                                        : " waits for rank " + std::to_string(waits[r].src) +
                                              " tag " + std::to_string(waits[r].tag));
        }
      deadlockText += blocked > 8 ? ", ...)" : ")";
      for (auto& c : cv) c.notify_all();
    }
  }
};

class LocalBackend final : public detail::Backend {
 public:
  LocalBackend(std::shared_ptr<World> w, std::uint64_t context, std::vector<int> members, int rank)
      : w_(std::move(w)), context_(context), members_(std::move(members)), rank_(rank) {
    inlineLimit = static_cast<std::size_t>(-1);  // one message per send: textbook counts (kNoLimit)
  }

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(members_.size()); }
  int maxTag() const override { return w_->options.maxTag; }
  std::string name() const override { return "Local"; }

  std::shared_ptr<Backend> dup() override { return split(0, rank_); }

  std::shared_ptr<Backend> split(int color, int key) override {
    // Every rank tells rank 0 its (color, key); rank 0 answers each with its new group.
    const int tag = Comm::kCollectiveTags - 1;
    const std::uint64_t serial = splits_++;
    std::vector<int> groupOf;  // filled on every rank from rank 0's answer
    if (rank_ == 0) {
      std::vector<std::pair<int, int>> ck(members_.size());
      ck[0] = {color, key};
      for (int r = 1; r < size(); ++r) {
        ByteBuffer b = recv(r, tag);
        int two[2];
        std::memcpy(two, b.data(), sizeof two);
        ck[r] = {two[0], two[1]};
      }
      for (int r = size() - 1; r >= 0; --r) {
        std::vector<std::pair<int, int>> same;  // (key, rank)
        if (ck[r].first >= 0)
          for (int q = 0; q < size(); ++q)
            if (ck[q].first == ck[r].first) same.push_back({ck[q].second, q});
        std::sort(same.begin(), same.end());
        std::vector<int> ranks;
        for (auto& [k, q] : same) ranks.push_back(q);
        if (r == 0) {
          groupOf = ranks;
        } else {
          send(r, tag, {reinterpret_cast<const char*>(ranks.data()), ranks.size() * sizeof(int)});
        }
      }
    } else {
      const std::pair<int, int> mine{color, key};
      send(0, tag, {reinterpret_cast<const char*>(&mine), sizeof mine});
      ByteBuffer b = recv(0, tag);
      groupOf.resize(b.size() / sizeof(int));
      if (!groupOf.empty()) std::memcpy(groupOf.data(), b.data(), b.size());
    }
    if (color < 0) return nullptr;
    std::vector<int> worldRanks;
    int myNew = -1;
    for (std::size_t i = 0; i < groupOf.size(); ++i) {
      worldRanks.push_back(members_[static_cast<std::size_t>(groupOf[i])]);
      if (groupOf[i] == rank_) myNew = static_cast<int>(i);
    }
    // Every member derives the same new context from the parent's, the split's serial number and
    // the color.
    const std::uint64_t ctx =
        (context_ * 1000003u + serial * 7919u + static_cast<std::uint64_t>(color) + 1) |
        (std::uint64_t{1} << 63);
    return std::make_shared<LocalBackend>(w_, ctx, std::move(worldRanks), myNew);
  }

  void send(int dest, int tag, std::span<const char> b) override { post(dest, tag, b, nullptr); }
  std::shared_ptr<void> issend(int dest, int tag, std::span<const char> b) override {
    auto op = std::make_shared<LocalSsend>();
    post(dest, tag, b, op->matched);
    return op;
  }
  /// A send (synchronous when `matched` is given: set once a receive matches it).
  void post(int dest, int tag, std::span<const char> b, std::shared_ptr<bool> matched) {
    Message m{context_, rank_, tag, {}, 0, 0, std::move(matched), me()};
    m.bytes.append(b.data(), b.size());
    // One round and alpha + beta n of this rank's time per message sent.
    round_ += 1;
    time_ += w_->options.alpha + w_->options.beta * static_cast<double>(b.size());
    m.round = round_;
    m.time = time_;
    ++stats.messagesSent;
    stats.bytesSent += b.size();
    publish();
    deliver(dest, std::move(m));
  }
  /// Puts m in dest's hands: into its earliest posted receive that fits, else its mailbox.
  void deliver(int dest, Message&& m) {
    const auto to = static_cast<std::size_t>(members_[static_cast<std::size_t>(dest)]);
    std::lock_guard<std::mutex> lk(w_->mu);
    auto& posted = w_->posted[to];
    bool taken = false;
    for (auto it = posted.begin(); it != posted.end(); ++it) {
      LocalRecv& r = **it;
      if (r.context == m.context && r.src == m.src && r.tag == m.tag) {
        matched(m);
        r.msg = std::move(m);
        r.done = true;
        posted.erase(it);
        taken = true;
        break;
      }
    }
    if (!taken) w_->mail[to].push_back(std::move(m));
    wake(to);
  }
  /// A synchronous send's message was matched: tell its sender (world mutex held).
  void matched(Message& m) {
    if (!m.matched) return;
    *m.matched = true;
    if (m.fromWorld != me()) wake(static_cast<std::size_t>(m.fromWorld));
  }
  /// Something happened for world rank `to` (world mutex held). A waiting rank stops counting as
  /// blocked now, not when its thread wakes up: otherwise a sender that blocks next could see
  /// "everyone waits" and call a deadlock that is not one. (It checks again when it wakes.)
  void wake(std::size_t to) {
    ++w_->events[to];
    auto& wt = w_->waits[to];
    if (wt.waiting) {
      wt.waiting = false;
      --w_->blocked;
    }
    w_->cv[to].notify_all();
  }
  int me() const { return members_[static_cast<std::size_t>(rank_)]; }
  /// Sleeps until woken (world mutex held by lk), counted as blocked on `w` meanwhile: when every
  /// live rank is, no message can ever arrive and the deadlock is declared (a CommError here).
  void block(std::unique_lock<std::mutex>& lk, const Waiting& w) {
    const auto self = static_cast<std::size_t>(me());
    if (w_->deadlock) throw CommError(w_->deadlockText);
    auto& wt = w_->waits[self];
    wt = w;
    ++w_->blocked;
    w_->detect();
    if (!w_->deadlock) w_->cv[self].wait(lk);
    if (wt.waiting) {  // woken without a wake() (deadlock declared, or spuriously)
      wt.waiting = false;
      --w_->blocked;
    }
  }
  std::shared_ptr<void> isend(int dest, int tag, std::span<const char> b) override {
    send(dest, tag, b);  // eager: complete at once
    return nullptr;
  }
  ByteBuffer recv(int src, int tag) override {
    std::unique_lock<std::mutex> lk(w_->mu);
    auto& box = w_->mail[static_cast<std::size_t>(me())];
    for (;;) {
      for (auto it = box.begin(); it != box.end(); ++it)
        if (it->context == context_ && it->src == src && it->tag == tag) {
          Message m = std::move(*it);
          box.erase(it);
          matched(m);
          lk.unlock();
          round_ = std::max(round_, m.round);
          time_ = std::max(time_, m.time);
          ++stats.messagesReceived;
          stats.bytesReceived += m.bytes.size();
          publish();
          return std::move(m.bytes);
        }
      block(lk, {true, false, context_, src, tag});
    }
  }
  std::size_t recvSome(int src, int tag, char* into, std::size_t cap) override {
    ByteBuffer b = recv(src, tag);
    if (b.size() > cap)
      throw CommError("recv on rank " + std::to_string(rank_) + ": a message of " +
                      std::to_string(b.size()) + " bytes from rank " + std::to_string(src) +
                      ", at most " + std::to_string(cap) + " expected");
    if (b.size()) std::memcpy(into, b.data(), b.size());
    return b.size();
  }
  std::shared_ptr<void> irecv(int src, int tag, char* into, std::size_t n) override {
    auto r = std::make_shared<LocalRecv>(context_, src, tag, into, n);
    std::lock_guard<std::mutex> lk(w_->mu);
    auto& box = w_->mail[static_cast<std::size_t>(me())];
    for (auto it = box.begin(); it != box.end(); ++it)
      if (it->context == context_ && it->src == src && it->tag == tag) {
        matched(*it);
        r->msg = std::move(*it);
        r->done = true;
        box.erase(it);
        return r;
      }
    w_->posted[static_cast<std::size_t>(me())].push_back(r);
    return r;
  }
  void wait(std::shared_ptr<void>& p) override {
    if (!p) return;
    auto* op = static_cast<LocalOp*>(p.get());
    if (op->kind == LocalOp::Kind::batch) {
      for (auto& q : static_cast<LocalBatch*>(op)->parts) wait(q);
      p.reset();
      return;
    }
    if (op->kind == LocalOp::Kind::recv) {
      auto* r = static_cast<LocalRecv*>(op);
      std::unique_lock<std::mutex> lk(w_->mu);
      while (!r->done) block(lk, {true, false, context_, r->src, r->tag});
      lk.unlock();
      complete(*r);
      p.reset();
      return;
    }
    for (;;) {  // synchronous sends and barriers progress by test()
      const std::uint64_t seen = events();
      if (test(p)) return;
      idle(seen);
    }
  }
  /// A matched posted receive: its bytes in place, the counters and the model's clock moved.
  void complete(LocalRecv& r) {
    Message& m = r.msg;
    round_ = std::max(round_, m.round);
    time_ = std::max(time_, m.time);
    ++stats.messagesReceived;
    stats.bytesReceived += m.bytes.size();
    publish();
    if (m.bytes.size() != r.n)
      throw CommError("irecv on rank " + std::to_string(rank_) + ": expected " +
                      std::to_string(r.n) + " bytes from rank " + std::to_string(r.src) + ", got " +
                      std::to_string(m.bytes.size()));
    if (r.n) std::memcpy(r.into, m.bytes.data(), r.n);
  }
  bool test(std::shared_ptr<void>& p) override {
    if (!p) return true;
    auto* op = static_cast<LocalOp*>(p.get());
    bool done = false;
    switch (op->kind) {
      case LocalOp::Kind::recv: {
        auto* r = static_cast<LocalRecv*>(op);
        {
          std::lock_guard<std::mutex> lk(w_->mu);
          done = r->done;
        }
        if (done) complete(*r);
        break;
      }
      case LocalOp::Kind::ssend: {
        std::lock_guard<std::mutex> lk(w_->mu);
        done = *static_cast<LocalSsend*>(op)->matched;
        break;
      }
      case LocalOp::Kind::barrier:
        done = advance(*static_cast<LocalBarrier*>(op));
        break;
      case LocalOp::Kind::batch: {
        done = true;
        for (auto& q : static_cast<LocalBatch*>(op)->parts) done = test(q) && done;
        break;
      }
    }
    if (done) p.reset();
    return done;
  }
  /// The posted receive from any source (irecvAny's portable form): the first message in this
  /// rank's mailbox with its tag, or of any tag (kAnyTag).
  bool testAny(std::shared_ptr<void>& op, int& from, std::size_t& n, int& tag) override {
    auto& p = *static_cast<detail::PostedAny*>(op.get());
    Message m;
    {
      std::lock_guard<std::mutex> lk(w_->mu);
      auto& box = w_->mail[static_cast<std::size_t>(me())];
      auto it = box.begin();
      while (it != box.end() &&
             !(it->context == context_ && (p.tag == kAnyTag || it->tag == p.tag)))
        ++it;
      if (it == box.end()) return false;
      m = std::move(*it);
      box.erase(it);
      matched(m);
    }
    round_ = std::max(round_, m.round);
    time_ = std::max(time_, m.time);
    ++stats.messagesReceived;
    stats.bytesReceived += m.bytes.size();
    publish();
    if (m.bytes.size() > p.cap)
      throw CommError("a message of " + std::to_string(m.bytes.size()) + " bytes from rank " +
                      std::to_string(m.src) + " for a posted receive of " + std::to_string(p.cap));
    if (m.bytes.size()) std::memcpy(p.into, m.bytes.data(), m.bytes.size());
    from = m.src;
    n = m.bytes.size();
    tag = m.tag;
    return true;
  }
  bool iprobe(int src, int tag, int& from, std::size_t& n) override {
    std::lock_guard<std::mutex> lk(w_->mu);
    for (const auto& m : w_->mail[static_cast<std::size_t>(me())])
      if (m.context == context_ && m.tag == tag && (src < 0 || m.src == src)) {
        from = m.src;
        n = m.bytes.size();
        return true;
      }
    return false;
  }
  std::shared_ptr<void> ibarrier() override {
    auto b = std::make_shared<LocalBarrier>();
    while ((1 << b->rounds) < size()) ++b->rounds;
    advance(*b);
    return b;
  }
  bool advance(LocalBarrier& b) {
    const int tag = Comm::kCollectiveTags - 6, P = size();
    while (b.round < b.rounds) {
      const int dist = 1 << b.round;
      if (!b.sent) {
        send((rank_ + dist) % P, tag, {});
        b.sent = true;
      }
      int from = 0;
      std::size_t n = 0;
      if (!iprobe(((rank_ - dist) % P + P) % P, tag, from, n)) return false;
      recv(from, tag);
      ++b.round;
      b.sent = false;
    }
    return true;
  }
  std::uint64_t events() override {
    std::lock_guard<std::mutex> lk(w_->mu);
    return w_->events[static_cast<std::size_t>(me())];
  }
  void idle(std::uint64_t seen) override {
    const auto self = static_cast<std::size_t>(me());
    std::unique_lock<std::mutex> lk(w_->mu);
    if (w_->events[self] != seen) return;
    block(lk, {true, true, context_, -1, -1});
    if (w_->deadlock && w_->events[self] == seen) throw CommError(w_->deadlockText);
  }
  void idleUntil(std::uint64_t seen, std::chrono::steady_clock::time_point until) override {
    const auto self = static_cast<std::size_t>(me());
    std::unique_lock<std::mutex> lk(w_->mu);
    if (w_->events[self] != seen) return;
    w_->cv[self].wait_until(lk, until);  // not counted as blocked: it wakes by itself
  }
  // The neighbourhood stand-in: point-to-point messages to each destination and from each source
  // (their counts are what MPI's collective would move).
  std::shared_ptr<void> neighbourhood(std::span<const int> sources,
                                      std::span<const int> dests) override {
    auto h = std::make_shared<LocalHood>();
    h->sources.assign(sources.begin(), sources.end());
    h->dests.assign(dests.begin(), dests.end());
    return h;
  }
  std::shared_ptr<void> ineighbourAlltoallv(const std::shared_ptr<void>& hood, const char* send,
                                            std::span<const std::size_t> sendCounts,
                                            std::span<const std::size_t> sendDispls, char* recv,
                                            std::span<const std::size_t> recvCounts,
                                            std::span<const std::size_t> recvDispls) override {
    const int tag = Comm::kCollectiveTags - 7;
    auto* h = static_cast<LocalHood*>(hood.get());
    auto batch = std::make_shared<LocalBatch>();
    for (std::size_t i = 0; i < h->sources.size(); ++i)
      batch->parts.push_back(irecv(h->sources[i], tag, recv + recvDispls[i], recvCounts[i]));
    for (std::size_t i = 0; i < h->dests.size(); ++i)
      this->send(h->dests[i], tag, {send + sendDispls[i], sendCounts[i]});
    return batch;
  }

  // Vendor stand-ins: linear algorithms through rank 0 (MPI's own calls are on the MPI backend).
  void vendorBcast(char* data, std::size_t n, int root) override {
    const int tag = Comm::kCollectiveTags - 2;
    if (rank_ == root) {
      for (int r = 0; r < size(); ++r)
        if (r != root) send(r, tag, {data, n});
    } else {
      ByteBuffer b = recv(root, tag);
      if (b.size() != n) throw CommError("vendor broadcast: sizes differ between ranks");
      if (n) std::memcpy(data, b.data(), n);
    }
  }
  void vendorAllreduce(const void* in, void* out, std::size_t count, Prim t, OpKind op) override {
    vendorReduce(in, out, count, t, op, 0);
    vendorBcast(static_cast<char*>(out), count * detail::prim_size(t), 0);
  }
  void vendorReduce(const void* in, void* out, std::size_t count, Prim t, OpKind op,
                    int root) override {
    const int tag = Comm::kCollectiveTags - 3;
    const std::size_t n = count * detail::prim_size(t);
    if (rank_ != root) {
      send(root, tag, {static_cast<const char*>(in), n});
      return;
    }
    ByteBuffer acc;
    for (int r = 0; r < size(); ++r) {
      ByteBuffer b;
      if (r == root)
        b.append(in, n);
      else
        b = recv(r, tag);
      if (b.size() != n) throw CommError("vendor reduce: sizes differ between ranks");
      if (r == 0)
        acc = std::move(b);
      else
        detail::apply_elementwise(acc.data(), b.data(), count, t, op);
    }
    if (n) std::memcpy(out, acc.data(), n);
  }
  void vendorAllgather(const char* in, std::size_t n, char* out) override {
    std::vector<std::size_t> counts;
    ByteBuffer all;
    vendorAllgatherv({in, n}, counts, all);
    for (auto c : counts)
      if (c != n) throw CommError("vendor allgather: sizes differ between ranks");
    if (all.size()) std::memcpy(out, all.data(), all.size());
  }
  void vendorAllgatherv(std::span<const char> in, std::vector<std::size_t>& counts,
                        ByteBuffer& out) override {
    vendorGatherv(in, 0, counts, out);
    std::uint64_t total = out.size();
    std::vector<std::uint64_t> c64(counts.begin(), counts.end());
    c64.resize(static_cast<std::size_t>(size()));
    vendorBcast(reinterpret_cast<char*>(&total), sizeof total, 0);
    vendorBcast(reinterpret_cast<char*>(c64.data()), c64.size() * 8, 0);
    out.resize(total);
    vendorBcast(out.data(), total, 0);
    counts.assign(c64.begin(), c64.end());
  }
  void vendorGatherv(std::span<const char> in, int root, std::vector<std::size_t>& counts,
                     ByteBuffer& out) override {
    const int tag = Comm::kCollectiveTags - 4;
    counts.clear();
    out.clear();
    if (rank_ != root) {
      send(root, tag, in);
      return;
    }
    for (int r = 0; r < size(); ++r) {
      if (r == root) {
        counts.push_back(in.size());
        out.append(in.data(), in.size());
      } else {
        ByteBuffer b = recv(r, tag);
        counts.push_back(b.size());
        out.append(b.data(), b.size());
      }
    }
  }
  void vendorBarrier() override {
    char x = 0;
    ByteBuffer none;
    std::vector<std::size_t> counts;
    vendorGatherv({&x, 0}, 0, counts, none);
    vendorBcast(&x, 0, 0);
  }

 private:
  void publish() {
    stats.rounds = round_;
    stats.modelSeconds = time_;
  }

  std::shared_ptr<World> w_;
  std::uint64_t context_;
  std::vector<int> members_;  // world rank of each rank of this communicator
  int rank_;
  std::uint64_t round_ = 0, splits_ = 0;
  double time_ = 0;
};

struct Thread {
  pthread_t id{};
  std::function<void()> body;
};

void* thread_main(void* p) {
  static_cast<Thread*>(p)->body();
  return nullptr;
}

}  // namespace

std::vector<Stats> run_local(int P, const std::function<void(Comm&)>& fn,
                             const LocalOptions& options) {
  if (P < 1 || P > 65536)
    throw ValueError("run_local: " + std::to_string(P) + " ranks (valid: 1..65536)");
  auto world = std::make_shared<World>(P, options);
  std::vector<int> all(static_cast<std::size_t>(P));
  for (int r = 0; r < P; ++r) all[static_cast<std::size_t>(r)] = r;
  std::vector<Stats> stats(static_cast<std::size_t>(P));
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(P));
  std::vector<Thread> threads(static_cast<std::size_t>(P));
  world->alive = P;
  for (int r = 0; r < P; ++r) {
    threads[static_cast<std::size_t>(r)].body = [&, r] {
      auto backend = std::make_shared<LocalBackend>(world, 1, all, r);
      Comm c(backend);
      try {
        fn(c);
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
      }
      stats[static_cast<std::size_t>(r)] = backend->stats;
      std::lock_guard<std::mutex> lk(world->mu);
      --world->alive;
      world->detect();
    };
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  // Small stacks let thousands of ranks run; AddressSanitizer's frames need more room.
#if defined(__SANITIZE_ADDRESS__)
  pthread_attr_setstacksize(&attr, 4 << 20);
#else
  pthread_attr_setstacksize(&attr, 1 << 20);
#endif
  int started = 0;
  for (; started < P; ++started) {
    auto& t = threads[static_cast<std::size_t>(started)];
    if (pthread_create(&t.id, &attr, &thread_main, &t) != 0) break;
  }
  pthread_attr_destroy(&attr);
  if (started < P) {
    // Could not start every rank: the started ones will find a deadlock and stop.
    std::lock_guard<std::mutex> lk(world->mu);
    world->alive -= P - started;
    world->detect();
  }
  for (int r = 0; r < started; ++r) pthread_join(threads[static_cast<std::size_t>(r)].id, nullptr);
  if (started < P)
    throw CommError("run_local: could not start " + std::to_string(P) + " threads (started " +
                    std::to_string(started) + ")");
  // The first real error: a rank that only saw the deadlock it caused by stopping says less.
  for (int pass = 0; pass < 2; ++pass)
    for (auto& e : errors) {
      if (!e) continue;
      if (pass == 1) std::rethrow_exception(e);
      try {
        std::rethrow_exception(e);
      } catch (const CommError& ce) {
        if (std::string(ce.what()).rfind("comm::Local: deadlock", 0) != 0) throw;
      } catch (...) {
        throw;
      }
    }
  return stats;
}

}  // namespace antler::comm
