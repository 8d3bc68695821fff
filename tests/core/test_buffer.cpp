// ByteBuffer and ArrayView (core/buffer.hpp): an array carried by a command is read where it
// lies when its bytes are aligned for its type, copied when they are not, and a corrupted
// header is a CommError; a ByteBuffer of 2 MiB or more is mapped on its own and keeps its bytes
// through growth, copies and moves.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "core/buffer.hpp"
#include "core/error.hpp"

using namespace antler;

TEST_CASE("ArrayView: written from a span, read back as a view of the buffer's bytes") {
  std::vector<double> v(1000);
  std::iota(v.begin(), v.end(), 0.5);
  for (std::size_t lead = 0; lead < 8; ++lead) {  // values at every offset in the buffer
    CAPTURE(lead);
    ByteBuffer b;
    Writer w(b);
    for (std::size_t i = 0; i < lead; ++i) w.put<std::uint8_t>(7);
    w.put<ArrayView<double>>(ArrayView<double>(std::span<const double>(v)));
    w.put<std::uint32_t>(42);  // what follows is read from the right place
    Reader r(b);
    for (std::size_t i = 0; i < lead; ++i) CHECK(r.get<std::uint8_t>() == 7);
    const auto a = r.get<ArrayView<double>>();
    CHECK(r.get<std::uint32_t>() == 42);
    CHECK(r.left() == 0);
    REQUIRE(a.size() == v.size());
    CHECK(std::vector<double>(a.begin(), a.end()) == v);
    // The writer padded to double's alignment within the buffer, whose start is aligned: a view.
    CHECK(reinterpret_cast<const char*>(a.data()) > b.data());
    CHECK(reinterpret_cast<const char*>(a.data()) < b.data() + b.size());
    CHECK(reinterpret_cast<std::uintptr_t>(a.data()) % alignof(double) == 0);
  }
}

TEST_CASE("ArrayView: bytes read from an unaligned place are copied; copies and moves keep them") {
  const std::vector<std::uint32_t> v{3, 1, 4, 1, 5, 9, 2, 6};
  ByteBuffer b;
  Writer(b).put<ArrayView<std::uint32_t>>(ArrayView<std::uint32_t>(v));
  // The same bytes one byte further on: the values are no longer 4-byte aligned.
  std::vector<char> shifted(b.size() + 1);
  std::memcpy(shifted.data() + 1, b.data(), b.size());
  Reader r(shifted.data() + 1, b.size());
  ArrayView<std::uint32_t> a = r.get<ArrayView<std::uint32_t>>();
  CHECK(reinterpret_cast<std::uintptr_t>(a.data()) % alignof(std::uint32_t) == 0);
  CHECK((reinterpret_cast<const char*>(a.data()) < shifted.data() ||
         reinterpret_cast<const char*>(a.data()) >= shifted.data() + shifted.size()));
  CHECK(std::vector<std::uint32_t>(a.begin(), a.end()) == v);
  const ArrayView<std::uint32_t> c = a;  // a copy owns its own copy
  CHECK(c.data() != a.data());
  CHECK(std::vector<std::uint32_t>(c.begin(), c.end()) == v);
  const ArrayView<std::uint32_t> m = std::move(a);
  CHECK(std::vector<std::uint32_t>(m.begin(), m.end()) == v);
  // An empty array.
  ByteBuffer e;
  Writer(e).put<ArrayView<std::uint32_t>>(ArrayView<std::uint32_t>());
  Reader re(e);
  CHECK(re.get<ArrayView<std::uint32_t>>().empty());
}

TEST_CASE("ArrayView: a corrupted count or padding is a CommError, never a read past the end") {
  const std::vector<std::uint64_t> v{1, 2, 3};
  ByteBuffer b;
  Writer(b).put<ArrayView<std::uint64_t>>(ArrayView<std::uint64_t>(v));
  SUBCASE("count past the bytes") {
    const std::uint64_t n = 1u << 30;
    std::memcpy(b.data(), &n, sizeof n);
    Reader r(b);
    CHECK_THROWS_AS(r.get<ArrayView<std::uint64_t>>(), CommError);
  }
  SUBCASE("padding of the type's alignment or more") {
    b.data()[8] = 8;
    Reader r(b);
    CHECK_THROWS_AS(r.get<ArrayView<std::uint64_t>>(), CommError);
  }
  SUBCASE("cut short") {
    Reader r(b.data(), b.size() - 1);
    CHECK_THROWS_AS(r.get<ArrayView<std::uint64_t>>(), CommError);
  }
}

TEST_CASE("ByteBuffer: across the 2 MiB line (mapped memory), bytes survive growth, copy, move") {
  ByteBuffer b;
  std::vector<std::uint32_t> want;
  for (std::uint32_t i = 0; i < (3u << 20) / 4; ++i) {  // 3 MiB, 4 bytes at a time
    std::memcpy(b.grow(4), &i, 4);
    want.push_back(i);
  }
  CHECK(b.capacity() >= kHugePage);
  REQUIRE(b.size() == want.size() * 4);
  CHECK(std::memcmp(b.data(), want.data(), b.size()) == 0);
  ByteBuffer c = b;
  CHECK(std::memcmp(c.data(), want.data(), c.size()) == 0);
  ByteBuffer m = std::move(b);
  CHECK(b.size() == 0);
  CHECK(std::memcmp(m.data(), want.data(), m.size()) == 0);
  b = std::move(m);  // a moved-from buffer takes another's memory
  CHECK(std::memcmp(b.data(), want.data(), b.size()) == 0);
  m = c;
  CHECK(std::memcmp(m.data(), want.data(), m.size()) == 0);
  m.clear();
  m.append("abc", 3);
  CHECK(std::string(m.data(), 3) == "abc");
}
