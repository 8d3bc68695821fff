#pragma once
#pragma GCC visibility push(default)  // public API (libantler hides the rest: core/export.hpp)
/// Byte buffers and the serialization adapter: every value that crosses a node boundary or a
/// message queue goes through Codec<T>. Trivially copyable types are copied with memcpy (the
/// fast path); std::string and vectors of trivially copyable types are length-prefixed copies;
/// anything else goes through Boost.Serialization's binary archive.
#include <boost/archive/binary_iarchive.hpp>
#include <boost/archive/binary_oarchive.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "core/huge_pages.hpp"

namespace antler {

/// A growable byte buffer that does not zero what it grows into. From 2 MiB (a command carrying
/// 1e7 indices or values) its memory is mapped on its own (huge_alloc), so that it goes back to
/// the system when freed instead of staying in the heap.
class ByteBuffer {
 public:
  ByteBuffer() = default;
  ~ByteBuffer() { release(data_, cap_); }
  ByteBuffer(const ByteBuffer& o) { append(o.data(), o.size()); }
  ByteBuffer& operator=(const ByteBuffer& o) {
    if (this != &o) {
      clear();
      append(o.data(), o.size());
    }
    return *this;
  }
  ByteBuffer(ByteBuffer&& o) noexcept : data_(o.data_), size_(o.size_), cap_(o.cap_) {
    o.data_ = nullptr;
    o.size_ = o.cap_ = 0;
  }
  ByteBuffer& operator=(ByteBuffer&& o) noexcept {
    if (this == &o) return *this;
    release(data_, cap_);
    data_ = o.data_;
    size_ = o.size_;
    cap_ = o.cap_;
    o.data_ = nullptr;
    o.size_ = o.cap_ = 0;
    return *this;
  }

  /// Pointer to the first byte.
  char* data() { return data_; }
  const char* data() const { return data_; }
  /// Bytes in use.
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  /// Bytes it can hold without growing.
  std::size_t capacity() const { return cap_; }
  /// Forget the contents, keep the capacity.
  void clear() { size_ = 0; }
  /// Makes room for n more bytes and returns where they start; size grows by n.
  char* grow(std::size_t n) {
    if (size_ + n > cap_) [[unlikely]]
      growSlow(n);
    char* p = data_ + size_;
    size_ += n;
    return p;
  }
  /// Sets the size (growing without initialising).
  void resize(std::size_t n) {
    if (n > cap_) reserve(n);
    size_ = n;
  }
  void reserve(std::size_t n) {
    if (n <= cap_) return;
    char* d = n >= kHugePage ? static_cast<char*>(huge_alloc(n, 64)) : new char[n];
    if (size_) std::memcpy(d, data_, size_);
    release(data_, cap_);
    data_ = d;
    cap_ = n;
  }
  [[gnu::noinline]] void growSlow(std::size_t n) { reserve(std::max(size_ + n, cap_ * 2 + 256)); }
  void append(const void* p, std::size_t n) {
    if (n) std::memcpy(grow(n), p, n);
  }

 private:
  static void release(char* p, std::size_t cap) noexcept {
    if (cap >= kHugePage)
      huge_free(p, cap, 64);
    else
      delete[] p;
  }
  char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t cap_ = 0;
};

/// Reads values back from bytes; every read is bounds-checked (a corrupted buffer is a
/// CommError, never a read past the end).
class Reader {
 public:
  Reader(const char* begin, std::size_t n) : p_(begin), end_(begin + n) {}
  explicit Reader(const ByteBuffer& b) : Reader(b.data(), b.size()) {}
  /// Takes n raw bytes.
  const char* take(std::size_t n) {
    if (static_cast<std::size_t>(end_ - p_) < n) [[unlikely]]
      short_of(n);
    const char* q = p_;
    p_ += n;
    return q;
  }
  std::size_t left() const { return static_cast<std::size_t>(end_ - p_); }
  const char* position() const { return p_; }
  template <class T>
  T get();

 private:
  // Out of line, so that take() stays small enough to inline into every read.
  [[noreturn, gnu::noinline, gnu::cold]] void short_of(std::size_t n) const {
    throw CommError("corrupted buffer: wanted " + std::to_string(n) + " bytes, " +
                    std::to_string(end_ - p_) + " left");
  }

  const char* p_;
  const char* end_;
};

/// Appends values to a ByteBuffer.
class Writer {
 public:
  explicit Writer(ByteBuffer& b) : b_(b) {}
  template <class T>
  Writer& put(const T& v);
  ByteBuffer& buffer() { return b_; }

 private:
  ByteBuffer& b_;
};

namespace detail {
template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};
}  // namespace detail

/// A type that writes and reads itself: `void write(Writer&) const` and `static T read(Reader&)`
/// (a compact form of its own: ExactSum sends only the digits in use). Codec uses them before
/// any other rule.
template <class T>
concept SelfCoding = requires(const T& t, Writer& w, Reader& r) {
  t.write(w);
  { T::read(r) } -> std::same_as<T>;
};

/// How a value of type T is written to and read from bytes.
template <class T, class Enable = void>
struct Codec {
  // Generic path: Boost.Serialization binary archive, length-prefixed.
  static void write(Writer& w, const T& v) {
    std::ostringstream os(std::ios::binary);
    {
      boost::archive::binary_oarchive ar(os, boost::archive::no_header);
      ar << v;
    }
    const std::string s = os.str();
    w.put<std::uint64_t>(s.size());
    w.buffer().append(s.data(), s.size());
  }
  static T read(Reader& r) {
    const auto n = r.get<std::uint64_t>();
    const char* p = r.take(n);
    std::istringstream is(std::string(p, n), std::ios::binary);
    T v{};
    try {
      boost::archive::binary_iarchive ar(is, boost::archive::no_header);
      ar >> v;
    } catch (const std::exception& e) {
      throw CommError(std::string("corrupted buffer: cannot deserialize value: ") + e.what());
    }
    return v;
  }
};

template <class T>
struct Codec<T, std::enable_if_t<SelfCoding<T>>> {
  static void write(Writer& w, const T& v) { v.write(w); }
  static T read(Reader& r) { return T::read(r); }
};

template <class T>
struct Codec<T, std::enable_if_t<std::is_trivially_copyable_v<T> && !SelfCoding<T>>> {
  static void write(Writer& w, const T& v) {
    std::memcpy(w.buffer().grow(sizeof(T)), &v, sizeof(T));
  }
  static T read(Reader& r) {
    T v;
    std::memcpy(&v, r.take(sizeof(T)), sizeof(T));
    return v;
  }
};

template <>
struct Codec<std::string> {
  static void write(Writer& w, const std::string& v) {
    w.put<std::uint64_t>(v.size());
    w.buffer().append(v.data(), v.size());
  }
  static std::string read(Reader& r) {
    const auto n = r.get<std::uint64_t>();
    const char* p = r.take(n);
    return std::string(p, n);
  }
};

template <class E>
struct Codec<std::vector<E>, std::enable_if_t<std::is_trivially_copyable_v<E>>> {
  static void write(Writer& w, const std::vector<E>& v) {
    w.put<std::uint64_t>(v.size());
    w.buffer().append(v.data(), v.size() * sizeof(E));
  }
  static std::vector<E> read(Reader& r) {
    const auto n = r.get<std::uint64_t>();
    if (n > r.left() / (sizeof(E) ? sizeof(E) : 1))
      throw CommError("corrupted buffer: vector of " + std::to_string(n) + " entries");
    std::vector<E> v(n);
    if (n) std::memcpy(v.data(), r.take(n * sizeof(E)), n * sizeof(E));
    return v;
  }
};

template <>
struct Codec<std::vector<std::string>> {
  static void write(Writer& w, const std::vector<std::string>& v) {
    w.put<std::uint64_t>(v.size());
    for (auto& s : v) Codec<std::string>::write(w, s);
  }
  static std::vector<std::string> read(Reader& r) {
    const auto n = r.get<std::uint64_t>();
    if (n > r.left() / 8)
      throw CommError("corrupted buffer: list of " + std::to_string(n) + " strings");
    std::vector<std::string> v;
    v.reserve(n);
    for (std::uint64_t i = 0; i < n; ++i) v.push_back(Codec<std::string>::read(r));
    return v;
  }
};

/// A read-only array of trivially copyable E that a command carries (a Sparse message's indices,
/// a vector of field values): the writer sends it from where it lies, and the reader gets a view
/// of the received bytes, with no copy on either side (a command of 1e7 indices holds them once,
/// in its buffer). On the wire: the count (u64), a pad count (u8) and that many zero bytes, so
/// that the values start aligned for E within the writer's buffer, then the values. A reader
/// whose buffer puts them elsewhere than at E's alignment gets a copy it owns instead.
template <class E>
class ArrayView {
  static_assert(std::is_trivially_copyable_v<E>);

 public:
  ArrayView() = default;
  ArrayView(std::span<const E> s) : view_(s) {}     // NOLINT: implicit, as a span is
  ArrayView(const std::vector<E>& v) : view_(v) {}  // NOLINT
  ArrayView(const ArrayView& o) { *this = o; }
  ArrayView& operator=(const ArrayView& o) {
    if (this == &o) return *this;
    own_ = o.own_;
    view_ = o.own_.empty() ? o.view_ : std::span<const E>(own_);
    return *this;
  }
  ArrayView(ArrayView&&) = default;  // a vector's move keeps its storage: the view stays valid
  ArrayView& operator=(ArrayView&&) = default;

  const E* data() const { return view_.data(); }
  std::size_t size() const { return view_.size(); }
  bool empty() const { return view_.empty(); }
  const E& operator[](std::size_t i) const { return view_[i]; }
  const E* begin() const { return view_.data(); }
  const E* end() const { return view_.data() + view_.size(); }
  std::span<const E> span() const { return view_; }
  operator std::span<const E>() const { return view_; }  // NOLINT

  void write(Writer& w) const {
    w.put<std::uint64_t>(view_.size());
    ByteBuffer& b = w.buffer();
    const std::size_t at = b.size() + 1;  // where the pad begins, after the pad count
    const auto pad = static_cast<std::uint8_t>((alignof(E) - at % alignof(E)) % alignof(E));
    w.put<std::uint8_t>(pad);
    if (pad) std::memset(b.grow(pad), 0, pad);
    b.append(view_.data(), view_.size() * sizeof(E));
  }
  static ArrayView read(Reader& r) {
    const auto n = r.get<std::uint64_t>();
    const auto pad = r.get<std::uint8_t>();
    if (pad >= alignof(E))
      throw CommError("corrupted buffer: an array's padding of " + std::to_string(pad) +
                      " bytes (at most " + std::to_string(alignof(E) - 1) + ")");
    r.take(pad);
    if (n > r.left() / sizeof(E))
      throw CommError("corrupted buffer: array of " + std::to_string(n) + " entries, " +
                      std::to_string(r.left()) + " bytes left");
    const char* p = r.take(n * sizeof(E));
    ArrayView a;
    if (reinterpret_cast<std::uintptr_t>(p) % alignof(E) == 0) {
      a.view_ = std::span<const E>(reinterpret_cast<const E*>(p), n);
    } else {
      a.own_.resize(n);
      if (n) std::memcpy(a.own_.data(), p, n * sizeof(E));
      a.view_ = std::span<const E>(a.own_);
    }
    return a;
  }

 private:
  std::vector<E> own_;  // only when the bytes were not aligned for E
  std::span<const E> view_;
};

/// Reads a T into v: in place (keeping v's storage) where T has `void readFrom(Reader&)`, else
/// v = r.get<T>().
template <class T>
void read_into(Reader& r, T& v) {
  if constexpr (requires { v.readFrom(r); })
    v.readFrom(r);
  else
    v = r.get<T>();
}

template <class T>
T Reader::get() {
  return Codec<T>::read(*this);
}
template <class T>
Writer& Writer::put(const T& v) {
  Codec<T>::write(*this, v);
  return *this;
}

}  // namespace antler
#pragma GCC visibility pop
