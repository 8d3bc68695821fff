// core/huge_pages: huge_alloc's large mappings (aligned, writable, freed), the small-block pool
// (64-byte aligned blocks that do not overlap, reused after a free, large requests passed on),
// and the allocator a vector uses.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include "core/huge_pages.hpp"

using namespace antler;

TEST_CASE("huge_alloc: small and large requests, aligned and usable") {
  for (std::size_t bytes :
       {std::size_t{1}, std::size_t{100}, kHugePage - 1, kHugePage, 3 * kHugePage + 12345}) {
    CAPTURE(bytes);
    auto* p = static_cast<unsigned char*>(huge_alloc(bytes, 64));
    REQUIRE(p != nullptr);
    CHECK(reinterpret_cast<std::uintptr_t>(p) % 64 == 0);
    if (bytes >= kHugePage) CHECK(reinterpret_cast<std::uintptr_t>(p) % kHugePage == 0);
    std::memset(p, 0xA5, bytes);
    CHECK(p[bytes - 1] == 0xA5);
    huge_free(p, bytes, 64);
  }
  std::vector<double, HugeAllocator<double>> v(kHugePage / sizeof(double) + 7, 1.5);
  v.push_back(2.5);
  CHECK(v.front() == 1.5);
  CHECK(v.back() == 2.5);
}

TEST_CASE("SmallBlockPool: aligned, disjoint blocks; a freed block is handed out again") {
  SmallBlockPool& pool = SmallBlockPool::instance();
  std::vector<std::pair<char*, std::size_t>> blocks;
  for (std::size_t k = 0; k < 3000; ++k) {
    const std::size_t bytes = 40 + (k * 97) % 5000;
    auto* p = static_cast<char*>(pool.allocate(bytes));
    CHECK(reinterpret_cast<std::uintptr_t>(p) % 64 == 0);
    std::memset(p, static_cast<int>(k & 0xFF), bytes);
    blocks.emplace_back(p, bytes);
  }
  // No block overlaps another: each still holds its own fill.
  bool intact = true;
  for (std::size_t k = 0; k < blocks.size(); ++k)
    for (std::size_t j = 0; j < blocks[k].second; ++j)
      intact = intact && blocks[k].first[j] == static_cast<char>(k & 0xFF);
  CHECK(intact);
  void* freed = blocks[10].first;
  const std::size_t size = blocks[10].second;
  pool.deallocate(freed, size);
  CHECK(pool.allocate(size) == freed);  // same size class, most recently freed first
  for (auto& [p, n] : blocks) pool.deallocate(p, n);
  // Past the largest class the pool passes the request on.
  void* big = pool.allocate(3 << 20);
  std::memset(big, 1, 3 << 20);
  pool.deallocate(big, 3 << 20);
  CHECK(pool.reserved() > 0);
}
