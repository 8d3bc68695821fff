#include "core/comm/comm.hpp"

#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "core/comm/detail/backend.hpp"
#include "core/error.hpp"

namespace antler::comm {

Comm::Comm(std::shared_ptr<detail::Backend> b) : backend_(std::move(b)) {}

detail::Backend& Comm::backend() const {
  if (!backend_) throw StateError("comm: this communicator is not valid (no ranks)");
  return *backend_;
}

int Comm::rank() const {
  return backend().rank();
}
int Comm::size() const {
  return backend().size();
}
void Comm::setYielding(bool on) {
  backend().setYielding(on);
}
bool Comm::yielding() const {
  return backend().yielding();
}
std::string Comm::backendName() const {
  return backend().name();
}

Comm Comm::dup() const {
  return Comm(backend().dup());
}

Comm Comm::split(int color, int key) const {
  auto b = backend().split(color, key);
  return b ? Comm(std::move(b)) : Comm();
}

namespace {
void check_peer(const Comm& c, int peer, const char* op) {
  if (peer < 0 || peer >= c.size())
    throw IndexError(std::string(op) + ": rank " + std::to_string(peer) +
                     " out of range (ranks 0.." + std::to_string(c.size() - 1) + ")");
}
void check_tag(int tag, const char* op) {
  if (tag < 0) throw ValueError(std::string(op) + ": tag " + std::to_string(tag) + " is negative");
}
}  // namespace

void Comm::send(int dest, int tag, std::span<const char> bytes) {
  check_peer(*this, dest, "send");
  check_tag(tag, "send");
  backend().send(dest, tag, bytes);
}

Request Comm::isend(int dest, int tag, std::span<const char> bytes) {
  check_peer(*this, dest, "isend");
  check_tag(tag, "isend");
  Request r;
  r.impl_ = backend().isend(dest, tag, bytes);
  return r;
}

ByteBuffer Comm::recv(int src, int tag) {
  check_peer(*this, src, "recv");
  check_tag(tag, "recv");
  return backend().recv(src, tag);
}

Request Comm::irecv(int src, int tag, char* into, std::size_t n) {
  check_peer(*this, src, "irecv");
  check_tag(tag, "irecv");
  Request r;
  r.impl_ = backend().irecv(src, tag, into, n);
  return r;
}

void Comm::wait(Request& r) {
  if (r.impl_) backend().wait(r.impl_);
  r.impl_.reset();
}

ByteBuffer Comm::sendrecv(int dest, int sendTag, std::span<const char> bytes, int src,
                          int recvTag) {
  Request s = isend(dest, sendTag, bytes);
  ByteBuffer got = recv(src, recvTag);
  wait(s);
  return got;
}

Stats Comm::stats() const {
  return backend().stats;
}
void Comm::resetStats() {
  backend().stats = Stats{};
}
std::uint64_t Comm::nextSequence() {
  return backend().sequence++;
}

namespace {
struct CoreCount {
  long ranks = 1;     // ranks on this machine
  long affinity = 0;  // cores this process may run on
  long online = 0;    // cores of the machine
};
CoreCount core_count() {
  CoreCount c;
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
    if (const char* v = std::getenv(name); v && *v) {
      c.ranks = std::max(1L, std::strtol(v, nullptr, 10));
      break;
    }
  c.online = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) c.affinity = CPU_COUNT(&set);
  // Under OpenMP binding (OMP_PROC_BIND, or OMP_PLACES alone) the runtime binds the initial
  // thread to the first place as the program starts, so this thread's mask is one place, not
  // what the process may use: count the processors of all of OpenMP's places instead (the team
  // is put on those).
  if (omp_get_proc_bind() != omp_proc_bind_false) {
    cpu_set_t all;
    CPU_ZERO(&all);
    std::vector<int> ids;
    for (int p = 0; p < omp_get_num_places(); ++p) {
      ids.resize(static_cast<std::size_t>(std::max(0, omp_get_place_num_procs(p))));
      omp_get_place_proc_ids(p, ids.data());
      for (const int id : ids)
        if (id >= 0 && id < CPU_SETSIZE) CPU_SET(id, &all);
    }
    c.affinity = std::max(c.affinity, static_cast<long>(CPU_COUNT(&all)));
  }
  if (c.affinity <= 0) c.affinity = c.online;
  return c;
}
}  // namespace

unsigned cores_per_rank() {
  if (const char* f = std::getenv("ANTLER_CORES_PER_RANK"); f && *f) {
    const long n = std::strtol(f, nullptr, 10);
    if (n >= 1) return static_cast<unsigned>(std::min(n, 1L << 20));
  }
  const CoreCount c = core_count();
  if (c.affinity < c.online) return static_cast<unsigned>(c.affinity);  // bound: its own cores
  return static_cast<unsigned>(std::max(1L, c.online / c.ranks));
}

bool threads_exceed_cores(unsigned threadsPerRank) {
  if (const char* f = std::getenv("ANTLER_COMM_YIELD"); f && *f) return std::string_view(f) != "0";
  const CoreCount c = core_count();
  if (c.affinity < c.online) return static_cast<long>(threadsPerRank) > c.affinity;
  return c.ranks * static_cast<long>(threadsPerRank) > c.online;
}

}  // namespace antler::comm
