#include "core/huge_pages.hpp"

#include <sys/mman.h>

#include <algorithm>

namespace antler {

void* huge_alloc(std::size_t bytes, std::size_t align) {
  if (bytes < kHugePage) return ::operator new(bytes == 0 ? 1 : bytes, std::align_val_t(align));
  // Map one huge page more than asked and trim to a huge-page boundary, so that the kernel can
  // back the whole range with huge pages (mmap alone aligns to 4 KiB only).
  const std::size_t len = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* raw =
      mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto a = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t start = (a + kHugePage - 1) / kHugePage * kHugePage;
  if (start > a) munmap(raw, start - a);
  if (const std::uintptr_t tail = a + len + kHugePage - (start + len); tail > 0)
    munmap(reinterpret_cast<void*>(start + len), tail);
  void* p = reinterpret_cast<void*>(start);
#ifdef MADV_HUGEPAGE
  madvise(p, len, MADV_HUGEPAGE);  // a hint: without THP the memory is ordinary pages
#endif
  return p;
}

void huge_free(void* p, std::size_t bytes, std::size_t align) noexcept {
  if (!p) return;
  if (bytes < kHugePage) {
    ::operator delete(p, std::align_val_t(align));
    return;
  }
  munmap(p, (bytes + kHugePage - 1) / kHugePage * kHugePage);
}

SmallBlockPool& SmallBlockPool::instance() {
  static SmallBlockPool* pool = new SmallBlockPool();  // never destroyed: blocks outlive exit
  return *pool;
}

unsigned SmallBlockPool::size_class(std::size_t bytes) {
  unsigned s = kMinShift;
  while ((std::size_t{1} << s) < bytes) ++s;
  return s;
}

void* SmallBlockPool::allocate(std::size_t bytes) {
  const unsigned s = size_class(bytes);
  if (s > kMaxShift) return huge_alloc(bytes, 64);
  const std::size_t size = std::size_t{1} << s;
  std::lock_guard<std::mutex> lock(m_);
  if (!free_[s].empty()) {
    void* p = free_[s].back();
    free_[s].pop_back();
    return p;
  }
  if (static_cast<std::size_t>(end_ - next_) < size) {
    // What is left of the chunk goes to the free lists, largest blocks first.
    for (unsigned k = kMaxShift; k >= kMinShift; --k)
      while (static_cast<std::size_t>(end_ - next_) >= (std::size_t{1} << k)) {
        free_[k].push_back(next_);
        next_ += std::size_t{1} << k;
      }
    char* c = static_cast<char*>(huge_alloc(kChunk, 64));
    chunks_.push_back(c);
    next_ = c;
    end_ = c + kChunk;
  }
  void* p = next_;
  next_ += size;
  return p;
}

void SmallBlockPool::deallocate(void* p, std::size_t bytes) noexcept {
  if (!p) return;
  const unsigned s = size_class(bytes);
  if (s > kMaxShift) {
    huge_free(p, bytes, 64);
    return;
  }
  std::lock_guard<std::mutex> lock(m_);
  try {
    free_[s].push_back(p);
  } catch (...) {
    // Out of memory for the list: the block is lost, nothing else.
  }
}

std::size_t SmallBlockPool::reserved() const {
  std::lock_guard<std::mutex> lock(m_);
  return chunks_.size() * kChunk;
}

}  // namespace antler
