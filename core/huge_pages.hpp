#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Memory for the large arrays a step walks at random (Element data, a Sparse message's synapse
/// store, IntFire's step sums), backed by transparent huge pages where the kernel offers them.
///
/// A step of a 1e5-neuron network touches a few random cache lines in each of ~100 MB of rings,
/// synapses and objects: with 4 KiB pages nearly every one of those accesses also misses the
/// TLB, and the page walk costs as much as the miss (measured: 3.0-3.4 ms/step with 4 KiB pages,
/// 2.0 with huge pages, bench/README.md). Debian's kernels default to THP "madvise", so memory
/// must ask for them: huge_alloc maps allocations of 2 MiB or more with mmap and
/// madvise(MADV_HUGEPAGE); smaller ones come from operator new. SmallBlockPool carves many small
/// blocks (IntFire's per-neuron parameters and synapse arrays) out of such chunks, recycling
/// freed blocks by size class.
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <vector>

namespace antler {

/// Size from which huge_alloc maps memory of its own (one huge page).
inline constexpr std::size_t kHugePage = std::size_t{2} << 20;

/// `bytes` of memory aligned to `align` (at most 4096), on huge pages when bytes >= kHugePage and
/// the kernel allows it. Throws std::bad_alloc. Free with huge_free(p, bytes, align).
void* huge_alloc(std::size_t bytes, std::size_t align);
void huge_free(void* p, std::size_t bytes, std::size_t align) noexcept;

/// A std allocator over huge_alloc (for std::vector).
template <class T>
struct HugeAllocator {
  using value_type = T;
  HugeAllocator() = default;
  template <class U>
  HugeAllocator(const HugeAllocator<U>&) {}
  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(huge_alloc(n * sizeof(T), alignof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { huge_free(p, n * sizeof(T), alignof(T)); }
  friend bool operator==(const HugeAllocator&, const HugeAllocator&) { return true; }
};

/// Blocks of 64 bytes to 1 MiB (rounded up to a power of two, 64-byte aligned) carved from
/// huge-page chunks; larger ones go to huge_alloc. Thread-safe (one mutex: blocks are made
/// with their objects, not per event). Freed blocks are kept for reuse, not returned.
///
/// One per process, shared by every simulation in it: like the heap it draws from, memory is a
/// resource of the process, and a block carries no state of any simulation (with the class
/// registry, the only process-wide instance in antler; see core/context.hpp).
class SmallBlockPool {
 public:
  static SmallBlockPool& instance();
  void* allocate(std::size_t bytes);
  void deallocate(void* p, std::size_t bytes) noexcept;
  /// Bytes held in chunks (for tests).
  std::size_t reserved() const;

 private:
  static constexpr unsigned kMinShift = 6, kMaxShift = 20;
  static constexpr std::size_t kChunk = 4 * kHugePage;
  static unsigned size_class(std::size_t bytes);
  mutable std::mutex m_;
  std::vector<void*> free_[kMaxShift + 1];
  std::vector<char*> chunks_;
  char* next_ = nullptr;  // the unused rest of the last chunk
  char* end_ = nullptr;
};

/// A std allocator on the SmallBlockPool: for small vectors held per object (a few per neuron),
/// which the heap would scatter between larger blocks.
template <class T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>&) {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(SmallBlockPool::instance().allocate(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    SmallBlockPool::instance().deallocate(p, n * sizeof(T));
  }
  friend bool operator==(const PoolAllocator&, const PoolAllocator&) { return true; }
};

}  // namespace antler
#pragma GCC visibility pop
