// The MPI backend: point-to-point and vendor collectives on a duplicated communicator.
#include "core/comm/mpi.hpp"

#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <vector>

#include "core/comm/detail/backend.hpp"
#include "core/error.hpp"

namespace antler::comm {

namespace {

// This process's rank in the last communicator antler was given (for messages only).
int g_rank = -1;

int world_rank() {
  return g_rank;
}

int as_int(std::size_t n, const char* what) {
  if (n > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw CommError(std::string(what) + ": " + std::to_string(n) +
                    " bytes in one message (MPI counts are int: at most 2^31 - 1)");
  return static_cast<int>(n);
}

MPI_Datatype mpi_type(Prim t) {
  switch (t) {
    case Prim::i8:
      return MPI_INT8_T;
    case Prim::u8:
      return MPI_UINT8_T;
    case Prim::i16:
      return MPI_INT16_T;
    case Prim::u16:
      return MPI_UINT16_T;
    case Prim::i32:
      return MPI_INT32_T;
    case Prim::u32:
      return MPI_UINT32_T;
    case Prim::i64:
      return MPI_INT64_T;
    case Prim::u64:
      return MPI_UINT64_T;
    case Prim::f32:
      return MPI_FLOAT;
    case Prim::f64:
      return MPI_DOUBLE;
    case Prim::none:
      break;
  }
  throw InternalError("vendor reduction of a type MPI does not know");
}

MPI_Op mpi_op(OpKind o) {
  switch (o) {
    case OpKind::sum:
      return MPI_SUM;
    case OpKind::prod:
      return MPI_PROD;
    case OpKind::min:
      return MPI_MIN;
    case OpKind::max:
      return MPI_MAX;
    case OpKind::land:
      return MPI_LAND;
    case OpKind::lor:
      return MPI_LOR;
    case OpKind::band:
      return MPI_BAND;
    case OpKind::bor:
      return MPI_BOR;
    case OpKind::none:
      break;
  }
  throw InternalError("vendor reduction with an operator MPI does not know");
}

/// Completes r, polling with MPI_Test and yielding the core between polls (Comm::setYielding).
void wait_yielding(MPI_Request& r, MPI_Status* st) {
  int done = 0;
  for (;;) {
    ANTLER_MPI(MPI_Test(&r, &done, st));
    if (done) return;
    sched_yield();
  }
}

/// Sends up to this size are tested once at the start (most transports' eager limit is 4 KiB or
/// more).
constexpr std::size_t kEager = 4096;

struct MpiOp {
  MPI_Request req = MPI_REQUEST_NULL;
  std::size_t expect = 0;
  bool isRecv = false;
  std::vector<int> counts;  // a non-blocking collective's arrays, alive until it completes
};

/// irecvAny's receive: a persistent request (MPI_Recv_init once, MPI_Start for each message),
/// which spares each message the request's allocation, set-up and release.
struct PostedRecv {
  MPI_Request req = MPI_REQUEST_NULL;
  char* into = nullptr;
  std::size_t cap = 0;
  int tag = -1;
  bool active = false;  // started and not yet found complete
  PostedRecv() = default;
  PostedRecv(const PostedRecv&) = delete;
  PostedRecv& operator=(const PostedRecv&) = delete;
  ~PostedRecv() { release(); }
  /// Withdraws a started receive and frees the request.
  void release() {
    if (req == MPI_REQUEST_NULL || !mpi_active()) return;
    if (active) {
      MPI_Cancel(&req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);  // a cancelled receive completes at once
      active = false;
    }
    MPI_Request_free(&req);
  }
};

/// A distributed-graph communicator (MPI_Dist_graph_create_adjacent), freed with its last user.
struct Hood {
  MPI_Comm comm = MPI_COMM_NULL;
  std::size_t nsources = 0, ndests = 0;
  ~Hood() {
    if (comm != MPI_COMM_NULL && mpi_active()) MPI_Comm_free(&comm);
  }
};

class MpiBackend final : public detail::Backend {
 public:
  /// Takes ownership of c (a duplicate made for antler).
  explicit MpiBackend(MPI_Comm c) : comm_(c) {
    ANTLER_MPI(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
    ANTLER_MPI(MPI_Comm_rank(comm_, &rank_));
    ANTLER_MPI(MPI_Comm_size(comm_, &size_));
    if (g_rank < 0) g_rank = rank_;
    void* ub = nullptr;
    int flag = 0;
    ANTLER_MPI(MPI_Comm_get_attr(comm_, MPI_TAG_UB, &ub, &flag));
    if (flag) maxTag_ = *static_cast<int*>(ub);
  }
  ~MpiBackend() override {
    // After a collective mismatch the communicator holds stray messages, and Open MPI can
    // crash when a later communicator reuses the id of a freed one with messages pending: such
    // a communicator is left allocated (see core/comm/detail/call.hpp).
    if (comm_ != MPI_COMM_NULL && mpi_active() && !noticed) MPI_Comm_free(&comm_);
  }
  MPI_Comm handle() const { return comm_; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int maxTag() const override { return maxTag_; }
  std::string name() const override { return "MPI"; }

  std::shared_ptr<Backend> dup() override {
    MPI_Comm c;
    ANTLER_MPI(MPI_Comm_dup(comm_, &c));
    return std::make_shared<MpiBackend>(c);
  }
  std::shared_ptr<Backend> split(int color, int key) override {
    MPI_Comm c;
    ANTLER_MPI(MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &c));
    if (c == MPI_COMM_NULL) return nullptr;
    return std::make_shared<MpiBackend>(c);
  }

  void send(int dest, int tag, std::span<const char> b) override {
    ANTLER_MPI(MPI_Send(b.data(), as_int(b.size(), "send"), MPI_BYTE, dest, tag, comm_));
    count_send(b.size());
  }
  std::shared_ptr<void> isend(int dest, int tag, std::span<const char> b) override {
    if (b.size() <= kEager) {
      // A small message usually leaves at once (Open MPI copies it into the shared-memory or
      // network transport's send buffer): then no operation is kept and nothing is allocated.
      MPI_Request r;
      ANTLER_MPI(MPI_Isend(b.data(), static_cast<int>(b.size()), MPI_BYTE, dest, tag, comm_, &r));
      count_send(b.size());
      int done = 0;
      ANTLER_MPI(MPI_Test(&r, &done, MPI_STATUS_IGNORE));
      if (done) return nullptr;
      auto op = std::make_shared<MpiOp>();
      op->req = r;
      return op;
    }
    auto op = std::make_shared<MpiOp>();
    ANTLER_MPI(
        MPI_Isend(b.data(), as_int(b.size(), "isend"), MPI_BYTE, dest, tag, comm_, &op->req));
    count_send(b.size());
    return op;
  }
  ByteBuffer recv(int src, int tag) override {
    MPI_Message msg;
    MPI_Status st;
    ANTLER_MPI(MPI_Mprobe(src, tag, comm_, &msg, &st));
    ByteBuffer out;
    receiveMatched(msg, st, out);
    return out;
  }
  /// Receives a message found by a matched probe into out (resized to it).
  void receiveMatched(MPI_Message& msg, const MPI_Status& st, ByteBuffer& out) {
    int n = 0;
    ANTLER_MPI(MPI_Get_count(&st, MPI_BYTE, &n));
    out.resize(static_cast<std::size_t>(n));
    ANTLER_MPI(MPI_Mrecv(out.data(), n, MPI_BYTE, &msg, MPI_STATUS_IGNORE));
    count_recv(static_cast<std::size_t>(n));
  }
  std::size_t recvSome(int src, int tag, char* into, std::size_t cap) override {
    MPI_Status st;
    ANTLER_MPI(MPI_Recv(into, as_int(cap, "recv"), MPI_BYTE, src, tag, comm_, &st));
    int n = 0;
    ANTLER_MPI(MPI_Get_count(&st, MPI_BYTE, &n));
    count_recv(static_cast<std::size_t>(n));
    return static_cast<std::size_t>(n);
  }
  std::shared_ptr<void> irecv(int src, int tag, char* into, std::size_t n) override {
    auto op = std::make_shared<MpiOp>();
    op->expect = n;
    op->isRecv = true;
    ANTLER_MPI(MPI_Irecv(into, as_int(n, "irecv"), MPI_BYTE, src, tag, comm_, &op->req));
    return op;
  }
  void wait(std::shared_ptr<void>& p) override {
    if (!p) return;
    auto* op = static_cast<MpiOp*>(p.get());
    MPI_Status st;
    if (yielding_)
      wait_yielding(op->req, &st);
    else
      ANTLER_MPI(MPI_Wait(&op->req, &st));
    completed(*op, st);
    p.reset();
  }
  /// A completed request: a receive's size checked and counted.
  void completed(const MpiOp& op, const MPI_Status& st) {
    if (!op.isRecv) return;
    int n = 0;
    ANTLER_MPI(MPI_Get_count(&st, MPI_BYTE, &n));
    if (static_cast<std::size_t>(n) != op.expect)
      throw CommError("irecv on rank " + std::to_string(rank_) + ": expected " +
                      std::to_string(op.expect) + " bytes from rank " +
                      std::to_string(st.MPI_SOURCE) + ", got " + std::to_string(n));
    count_recv(op.expect);
  }

  std::shared_ptr<void> issend(int dest, int tag, std::span<const char> b) override {
    auto op = std::make_shared<MpiOp>();
    ANTLER_MPI(
        MPI_Issend(b.data(), as_int(b.size(), "issend"), MPI_BYTE, dest, tag, comm_, &op->req));
    count_send(b.size());
    return op;
  }
  bool test(std::shared_ptr<void>& p) override {
    if (!p) return true;
    auto* op = static_cast<MpiOp*>(p.get());
    int done = 0;
    MPI_Status st;
    ANTLER_MPI(MPI_Test(&op->req, &done, &st));
    if (!done) return false;
    completed(*op, st);
    p.reset();
    return true;
  }
  bool iprobe(int src, int tag, int& from, std::size_t& n) override {
    int flag = 0;
    MPI_Status st;
    ANTLER_MPI(MPI_Iprobe(src < 0 ? MPI_ANY_SOURCE : src, tag, comm_, &flag, &st));
    if (!flag) return false;
    int cnt = 0;
    ANTLER_MPI(MPI_Get_count(&st, MPI_BYTE, &cnt));
    from = st.MPI_SOURCE;
    n = static_cast<std::size_t>(cnt);
    return true;
  }
  bool tryRecv(int src, int tag, int& from, ByteBuffer& out) override {
    // A matched probe: one matching, and no other receive can take the message in between.
    int flag = 0;
    MPI_Message msg;
    MPI_Status st;
    ANTLER_MPI(MPI_Improbe(src < 0 ? MPI_ANY_SOURCE : src, tag, comm_, &flag, &msg, &st));
    if (!flag) return false;
    receiveMatched(msg, st, out);
    from = st.MPI_SOURCE;
    return true;
  }
  void irecvAny(std::shared_ptr<void>& p, int tag, char* into, std::size_t cap) override {
    if (!p) p = std::make_shared<PostedRecv>();
    auto* r = static_cast<PostedRecv*>(p.get());
    if (r->active) throw CommError("irecvAny: the posted receive has not completed");
    if (r->req == MPI_REQUEST_NULL || r->into != into || r->cap != cap || r->tag != tag) {
      r->release();
      ANTLER_MPI(MPI_Recv_init(into, as_int(cap, "irecvAny"), MPI_BYTE, MPI_ANY_SOURCE,
                               tag == kAnyTag ? MPI_ANY_TAG : tag, comm_, &r->req));
      r->into = into;
      r->cap = cap;
      r->tag = tag;
    }
    ANTLER_MPI(MPI_Start(&r->req));
    r->active = true;
  }
  bool testAny(std::shared_ptr<void>& p, int& from, std::size_t& n, int& tag) override {
    auto* r = static_cast<PostedRecv*>(p.get());
    if (!r->active) return false;
    int done = 0;
    MPI_Status st;
    const int rc = MPI_Test(&r->req, &done, &st);  // complete: the request is inactive again
    if (rc != MPI_SUCCESS) {  // completed in error (a message too long): made afresh next time
      // Open MPI may still hold the request (a truncated rendezvous): a new one is made and this
      // one is left to it, neither freed nor started again.
      r->active = false;
      r->req = MPI_REQUEST_NULL;
      int cls = 0;
      MPI_Error_class(rc, &cls);
      if (cls == MPI_ERR_TRUNCATE)
        throw CommError("a message of more than " + std::to_string(r->cap) + " bytes from rank " +
                        std::to_string(st.MPI_SOURCE) + " for a posted receive of " +
                        std::to_string(r->cap));
      ANTLER_MPI(rc);
    }
    if (!done) return false;
    r->active = false;
    int cnt = 0;
    ANTLER_MPI(MPI_Get_count(&st, MPI_BYTE, &cnt));
    from = st.MPI_SOURCE;
    tag = st.MPI_TAG;
    n = static_cast<std::size_t>(cnt);
    count_recv(n);
    return true;
  }
  void cancelAny(std::shared_ptr<void>& p) override {
    if (p) static_cast<PostedRecv*>(p.get())->release();
    p.reset();
  }
  std::shared_ptr<void> ibarrier() override {
    auto op = std::make_shared<MpiOp>();
    ANTLER_MPI(MPI_Ibarrier(comm_, &op->req));
    return op;
  }
  void idle(std::uint64_t) override {
    if (yielding_) sched_yield();
  }
  std::shared_ptr<void> neighbourhood(std::span<const int> sources,
                                      std::span<const int> dests) override {
    auto h = std::make_shared<Hood>();
    h->nsources = sources.size();
    h->ndests = dests.size();
    const int none = 0;  // MPI wants a valid pointer even for a degree of 0
    ANTLER_MPI(MPI_Dist_graph_create_adjacent(
        comm_, static_cast<int>(sources.size()), sources.empty() ? &none : sources.data(),
        MPI_UNWEIGHTED, static_cast<int>(dests.size()), dests.empty() ? &none : dests.data(),
        MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &h->comm));
    return h;
  }
  std::shared_ptr<void> ineighbourAlltoallv(const std::shared_ptr<void>& hood, const char* send,
                                            std::span<const std::size_t> sendCounts,
                                            std::span<const std::size_t> sendDispls, char* recv,
                                            std::span<const std::size_t> recvCounts,
                                            std::span<const std::size_t> recvDispls) override {
    auto* h = static_cast<Hood*>(hood.get());
    auto op = std::make_shared<MpiOp>();
    const std::size_t ns = sendCounts.size(), nr = recvCounts.size();
    op->counts.resize(2 * ns + 2 * nr + 1);  // +1: never empty
    int* sc = op->counts.data();
    int* sd = sc + ns;
    int* rc = sd + ns;
    int* rd = rc + nr;
    std::size_t sent = 0, got = 0;
    for (std::size_t i = 0; i < ns; ++i) {
      sc[i] = as_int(sendCounts[i], "MPI_Ineighbor_alltoallv");
      sd[i] = as_int(sendDispls[i], "MPI_Ineighbor_alltoallv");
      sent += sendCounts[i];
    }
    for (std::size_t i = 0; i < nr; ++i) {
      rc[i] = as_int(recvCounts[i], "MPI_Ineighbor_alltoallv");
      rd[i] = as_int(recvDispls[i], "MPI_Ineighbor_alltoallv");
      got += recvCounts[i];
    }
    ANTLER_MPI(
        MPI_Ineighbor_alltoallv(send, sc, sd, MPI_BYTE, recv, rc, rd, MPI_BYTE, h->comm, &op->req));
    stats.messagesSent += ns;
    stats.bytesSent += sent;
    stats.messagesReceived += nr;
    stats.bytesReceived += got;
    return op;
  }

  void vendorBcast(char* data, std::size_t n, int root) override {
    const int cnt = as_int(n, "MPI_Bcast");
    collective(
        "MPI_Bcast", [&] { return MPI_Bcast(data, cnt, MPI_BYTE, root, comm_); },
        [&](MPI_Request* r) { return MPI_Ibcast(data, cnt, MPI_BYTE, root, comm_, r); });
    if (rank_ == root)
      count_send(n);
    else
      count_recv(n);
  }
  void vendorAllreduce(const void* in, void* out, std::size_t count, Prim t, OpKind op) override {
    const void* src = in == out ? MPI_IN_PLACE : in;
    const int cnt = as_int(count, "MPI_Allreduce");
    const MPI_Datatype type = mpi_type(t);
    const MPI_Op mop = mpi_op(op);
    collective(
        "MPI_Allreduce", [&] { return MPI_Allreduce(src, out, cnt, type, mop, comm_); },
        [&](MPI_Request* r) { return MPI_Iallreduce(src, out, cnt, type, mop, comm_, r); });
    count_send(0);
    count_recv(count *
               detail::prim_size(t));  // at least the result arrives (the library's tree: more)
  }
  void vendorReduce(const void* in, void* out, std::size_t count, Prim t, OpKind op,
                    int root) override {
    const bool inPlace = rank_ == root && in == out;
    ANTLER_MPI(MPI_Reduce(inPlace ? MPI_IN_PLACE : in, out, as_int(count, "MPI_Reduce"),
                          mpi_type(t), mpi_op(op), root, comm_));
    count_send(0);
  }
  void vendorAllgather(const char* in, std::size_t n, char* out) override {
    const int cnt = as_int(n, "MPI_Allgather");
    collective(
        "MPI_Allgather",
        [&] { return MPI_Allgather(in, cnt, MPI_BYTE, out, cnt, MPI_BYTE, comm_); },
        [&](MPI_Request* r) {
          return MPI_Iallgather(in, cnt, MPI_BYTE, out, cnt, MPI_BYTE, comm_, r);
        });
    count_send(n);
    count_recv(n * static_cast<std::size_t>(size_ - 1));  // every other rank's part
  }
  void vendorAllgatherv(std::span<const char> in, std::vector<std::size_t>& counts,
                        ByteBuffer& out) override {
    unsigned long long mine = in.size();
    std::vector<unsigned long long> all(static_cast<std::size_t>(size_));
    ANTLER_MPI(MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all.data(), 1,
                             MPI_UNSIGNED_LONG_LONG, comm_));
    std::vector<int> cnt, disp;
    const std::size_t total = layout(all, counts, cnt, disp);
    out.resize(total);
    ANTLER_MPI(MPI_Allgatherv(in.data(), static_cast<int>(in.size()), MPI_BYTE, out.data(),
                              cnt.data(), disp.data(), MPI_BYTE, comm_));
    count_send(in.size());
    count_recv(total - in.size());  // every other rank's part
  }
  void vendorGatherv(std::span<const char> in, int root, std::vector<std::size_t>& counts,
                     ByteBuffer& out) override {
    unsigned long long mine = in.size();
    std::vector<unsigned long long> all(static_cast<std::size_t>(size_));
    ANTLER_MPI(MPI_Gather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all.data(), 1, MPI_UNSIGNED_LONG_LONG,
                          root, comm_));
    std::vector<int> cnt, disp;
    counts.clear();
    out.clear();
    if (rank_ == root) out.resize(layout(all, counts, cnt, disp));
    ANTLER_MPI(MPI_Gatherv(in.data(), static_cast<int>(in.size()), MPI_BYTE, out.data(), cnt.data(),
                           disp.data(), MPI_BYTE, root, comm_));
    count_send(in.size());
  }
  void vendorBarrier() override {
    collective(
        "MPI_Barrier", [&] { return MPI_Barrier(comm_); },
        [&](MPI_Request* r) { return MPI_Ibarrier(comm_, r); });
  }
  void setYielding(bool on) override { yielding_ = on; }
  bool yielding() const override { return yielding_; }

 private:
  /// A collective: the blocking call, or, while yielding, its nonblocking form completed by
  /// wait_yielding. Each callable returns the MPI error code.
  template <class Blocking, class Start>
  void collective(const char* what, Blocking blocking, Start start) {
    if (!yielding_) {
      check(blocking(), what);
      return;
    }
    MPI_Request r;
    check(start(&r), what);
    wait_yielding(r, MPI_STATUS_IGNORE);
  }
  static std::size_t layout(const std::vector<unsigned long long>& all,
                            std::vector<std::size_t>& counts, std::vector<int>& cnt,
                            std::vector<int>& disp) {
    std::size_t total = 0;
    counts.assign(all.size(), 0);
    cnt.assign(all.size(), 0);
    disp.assign(all.size(), 0);
    for (std::size_t r = 0; r < all.size(); ++r) {
      counts[r] = all[r];
      cnt[r] = as_int(all[r], "gather");
      disp[r] = as_int(total, "gather (total)");
      total += all[r];
    }
    return total;
  }
  void count_send(std::size_t n) {
    ++stats.messagesSent;
    stats.bytesSent += n;
  }
  void count_recv(std::size_t n) {
    ++stats.messagesReceived;
    stats.bytesReceived += n;
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  int maxTag_ = 32767;     // MPI_TAG_UB (the least MPI promises, if the attribute is missing)
  bool yielding_ = false;  // waits poll and yield (Comm::setYielding)
};

}  // namespace

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw CommError(std::string(call) + " failed on rank " + std::to_string(world_rank()) + ": " +
                  std::string(text, static_cast<std::size_t>(len)));
}

bool mpi_active() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init && !fin;
}

Environment::Environment(int* argc, char*** argv) {
  if (mpi_active()) return;
  int provided = 0;
  ANTLER_MPI(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided));
  owns_ = true;
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    throw CommError("MPI_Init_thread: this MPI provides thread level " + std::to_string(provided) +
                    ", antler needs MPI_THREAD_FUNNELED");
  }
}

Environment::~Environment() {
  // MPI_Finalize is collective: calling it while an exception unwinds on one rank would hang
  // the others, so then we leave it to the process exit (mpirun reports the failure).
  if (owns_ && std::uncaught_exceptions() == 0 && mpi_active()) MPI_Finalize();
}

Comm Comm::world() {
  // The one place antler names MPI_COMM_WORLD: the default communicator, duplicated.
  if (!mpi_active()) throw StateError("Comm::world: MPI is not initialised");
  MPI_Comm c;
  ANTLER_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
  return Comm(std::make_shared<MpiBackend>(c));
}

Comm Comm::fromMpi(const void* handle) {
  if (!mpi_active()) throw StateError("Comm::fromMpi: MPI is not initialised");
  MPI_Comm given = *static_cast<const MPI_Comm*>(handle);
  if (given == MPI_COMM_NULL) throw ValueError("Comm::fromMpi: the communicator is MPI_COMM_NULL");
  MPI_Comm c;
  ANTLER_MPI(MPI_Comm_dup(given, &c));
  return Comm(std::make_shared<MpiBackend>(c));
}

MPI_Comm mpi_handle(const Comm& c) {
  if (!c.valid()) return MPI_COMM_NULL;
  auto* m = dynamic_cast<MpiBackend*>(&c.backend());
  return m ? m->handle() : MPI_COMM_NULL;
}

void abort(const std::string& why) {
  std::fprintf(stderr, "antler: fatal error on rank %d: %s\n", world_rank(), why.c_str());
  std::fflush(stderr);
  // Open MPI (and MPICH) end the whole job when any rank aborts.
  if (mpi_active()) MPI_Abort(MPI_COMM_SELF, 1);
  std::abort();
}

}  // namespace antler::comm
