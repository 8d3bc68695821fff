#include "core/mpi.hpp"

#include <algorithm>
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "core/error.hpp"
#include "core/layout.hpp"

namespace antler::mpi {

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw CommError(std::string(call) +
                  " failed: " + std::string(text, static_cast<std::size_t>(len)));
}

bool active() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init && !fin;
}

Guard::Guard(int* argc, char*** argv) {
  if (!active()) {
    int provided = 0;
    ANTLER_MPI(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided));
    owns_ = true;
    if (provided < MPI_THREAD_FUNNELED) {
      MPI_Finalize();
      throw CommError("MPI_Init_thread: this MPI provides thread level " +
                      std::to_string(provided) + ", antler needs MPI_THREAD_FUNNELED");
    }
    // Errors come back as return codes, which check() turns into exceptions.
    ANTLER_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  }
  ANTLER_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
  ANTLER_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size_));
  node_layout() = NodeLayout{rank_, size_};
  // Several ranks on one machine share its cores: unless OMP_NUM_THREADS says otherwise, each
  // rank takes its share, so that `mpirun -n 2` on 2 cores does not run 4 threads (oversubscribed
  // threads spin at every barrier while the thread they wait for is descheduled).
  if (!std::getenv("OMP_NUM_THREADS") && size_ > 1) {
    MPI_Comm local;
    ANTLER_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local));
    int localSize = 1;
    ANTLER_MPI(MPI_Comm_size(local, &localSize));
    MPI_Comm_free(&local);
    omp_set_num_threads(std::max(1, omp_get_num_procs() / localSize));
  }
}

Guard::~Guard() {
  // MPI_Finalize is collective: calling it while an exception unwinds on one rank would hang
  // the others, so then we leave it to the process exit (mpirun reports the failure).
  if (owns_ && std::uncaught_exceptions() == 0 && active()) MPI_Finalize();
}

bool any(bool mine) {
  int in = mine ? 1 : 0, out = 0;
  ANTLER_MPI(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD));
  return out != 0;
}

void allgatherv(const char* data, std::size_t n, std::vector<std::size_t>& counts,
                std::vector<char>& out) {
  int size = 1;
  ANTLER_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  std::vector<unsigned long long> all(static_cast<std::size_t>(size));
  unsigned long long mine = n;
  ANTLER_MPI(MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all.data(), 1, MPI_UNSIGNED_LONG_LONG,
                           MPI_COMM_WORLD));
  std::vector<int> cnt(static_cast<std::size_t>(size)), disp(static_cast<std::size_t>(size));
  std::size_t total = 0;
  counts.assign(static_cast<std::size_t>(size), 0);
  for (int r = 0; r < size; ++r) {
    if (all[r] > static_cast<unsigned long long>(INT32_MAX) ||
        total > static_cast<std::size_t>(INT32_MAX))
      throw CommError("allgatherv: more than 2 GiB in one exchange");
    counts[r] = all[r];
    cnt[r] = static_cast<int>(all[r]);
    disp[r] = static_cast<int>(total);
    total += all[r];
  }
  out.resize(total);
  if (total == 0) return;
  ANTLER_MPI(MPI_Allgatherv(data, static_cast<int>(n), MPI_BYTE, out.data(), cnt.data(),
                            disp.data(), MPI_BYTE, MPI_COMM_WORLD));
}

void allgather_inline(const char* data, std::size_t n, std::size_t inlineBytes,
                      std::vector<std::size_t>& counts, std::vector<char>& out) {
  int size = 1;
  ANTLER_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  const std::size_t P = static_cast<std::size_t>(size);
  const std::size_t block = 8 + inlineBytes;
  // Scratch reused between calls (only the master thread calls MPI).
  static std::vector<char> mine, blocks;
  mine.assign(block, 0);
  blocks.resize(block * P);
  const std::uint64_t n64 = n;
  std::memcpy(mine.data(), &n64, 8);
  std::memcpy(mine.data() + 8, data, std::min(n, inlineBytes));
  ANTLER_MPI(MPI_Allgather(mine.data(), static_cast<int>(block), MPI_BYTE, blocks.data(),
                           static_cast<int>(block), MPI_BYTE, MPI_COMM_WORLD));
  counts.assign(P, 0);
  std::size_t total = 0;
  bool overflow = false;
  for (std::size_t r = 0; r < P; ++r) {
    std::uint64_t c = 0;
    std::memcpy(&c, blocks.data() + r * block, 8);
    counts[r] = c;
    total += c;
    overflow = overflow || c > inlineBytes;
  }
  out.resize(total);
  std::vector<std::size_t> offset(P, 0);
  for (std::size_t r = 1; r < P; ++r) offset[r] = offset[r - 1] + counts[r - 1];
  for (std::size_t r = 0; r < P; ++r)
    if (counts[r])
      std::memcpy(out.data() + offset[r], blocks.data() + r * block + 8,
                  std::min(counts[r], inlineBytes));
  if (!overflow) return;
  // Second round: the bytes beyond each node's inline block.
  std::vector<int> cnt(P), disp(P);
  std::size_t extra = 0;
  for (std::size_t r = 0; r < P; ++r) {
    const std::size_t x = counts[r] > inlineBytes ? counts[r] - inlineBytes : 0;
    if (x > static_cast<std::size_t>(INT32_MAX) || extra > static_cast<std::size_t>(INT32_MAX))
      throw CommError("allgather: more than 2 GiB in one exchange");
    cnt[r] = static_cast<int>(x);
    disp[r] = static_cast<int>(extra);
    extra += x;
  }
  std::vector<char> tail(extra);
  const int myExtra = n > inlineBytes ? static_cast<int>(n - inlineBytes) : 0;
  ANTLER_MPI(MPI_Allgatherv(myExtra ? data + inlineBytes : nullptr, myExtra, MPI_BYTE, tail.data(),
                            cnt.data(), disp.data(), MPI_BYTE, MPI_COMM_WORLD));
  for (std::size_t r = 0; r < P; ++r)
    if (cnt[r])
      std::memcpy(out.data() + offset[r] + inlineBytes, tail.data() + disp[r],
                  static_cast<std::size_t>(cnt[r]));
}

void abort(const std::string& why) {
  std::fprintf(stderr, "antler: fatal error on rank %d: %s\n", node_layout().node, why.c_str());
  std::fflush(stderr);
  if (active()) MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

}  // namespace antler::mpi
