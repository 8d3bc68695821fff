#pragma once
// The predefined operators applied element by element to arrays of a primitive type (internal):
// what the Local backend's vendor reductions and comm::Reductions' elementwise merges compute,
// as MPI's predefined operations do. Elements are read and written with memcpy, so the arrays
// need no alignment (a payload inside a batched packet has none to speak of).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/comm/algorithms.hpp"

namespace antler::comm::detail {

template <class T, class F>
inline void apply_elementwise_t(char* acc, const char* b, std::size_t count, F f) {
  for (std::size_t i = 0; i < count; ++i) {
    T x, y;
    std::memcpy(&x, acc + i * sizeof(T), sizeof(T));
    std::memcpy(&y, b + i * sizeof(T), sizeof(T));
    const T r = f(x, y);
    std::memcpy(acc + i * sizeof(T), &r, sizeof(T));
  }
}

/// acc[i] = op(acc[i], b[i]) for `count` elements.
using ElementwiseFn = void (*)(char* acc, const char* b, std::size_t count);

template <class T>
ElementwiseFn elementwise_fn_t(OpKind op) {
  // Integer sums and products wrap: computed unsigned, at least as wide as unsigned int (no
  // signed overflow, no promotion of narrow types to int).
  using W = std::conditional_t<
      std::is_integral_v<T>,
      std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned,
                         std::make_unsigned_t<std::conditional_t<std::is_integral_v<T>, T, int>>>,
      T>;
  switch (op) {
    case OpKind::sum:
      return [](char* a, const char* b, std::size_t n) {
        apply_elementwise_t<T>(a, b, n, [](T x, T y) {
          return static_cast<T>(static_cast<W>(static_cast<W>(x) + static_cast<W>(y)));
        });
      };
    case OpKind::prod:
      return [](char* a, const char* b, std::size_t n) {
        apply_elementwise_t<T>(a, b, n, [](T x, T y) {
          return static_cast<T>(static_cast<W>(static_cast<W>(x) * static_cast<W>(y)));
        });
      };
    case OpKind::min:
      return [](char* a, const char* b, std::size_t n) {
        apply_elementwise_t<T>(a, b, n, [](T x, T y) { return y < x ? y : x; });
      };
    case OpKind::max:
      return [](char* a, const char* b, std::size_t n) {
        apply_elementwise_t<T>(a, b, n, [](T x, T y) { return x < y ? y : x; });
      };
    case OpKind::land:
      return [](char* a, const char* b, std::size_t n) {
        apply_elementwise_t<T>(a, b, n, [](T x, T y) { return static_cast<T>(x && y); });
      };
    case OpKind::lor:
      return [](char* a, const char* b, std::size_t n) {
        apply_elementwise_t<T>(a, b, n, [](T x, T y) { return static_cast<T>(x || y); });
      };
    case OpKind::band:
      if constexpr (std::is_integral_v<T>)
        return [](char* a, const char* b, std::size_t n) {
          apply_elementwise_t<T>(a, b, n, [](T x, T y) { return static_cast<T>(x & y); });
        };
      return nullptr;
    case OpKind::bor:
      if constexpr (std::is_integral_v<T>)
        return [](char* a, const char* b, std::size_t n) {
          apply_elementwise_t<T>(a, b, n, [](T x, T y) { return static_cast<T>(x | y); });
        };
      return nullptr;
    case OpKind::none:
      return nullptr;
  }
  return nullptr;
}

/// The function applying op to elements of type t; nullptr where op does not apply to t (see
/// elementwise_valid).
inline ElementwiseFn elementwise_fn(Prim t, OpKind op) {
  switch (t) {
    case Prim::i8:
      return elementwise_fn_t<std::int8_t>(op);
    case Prim::u8:
      return elementwise_fn_t<std::uint8_t>(op);
    case Prim::i16:
      return elementwise_fn_t<std::int16_t>(op);
    case Prim::u16:
      return elementwise_fn_t<std::uint16_t>(op);
    case Prim::i32:
      return elementwise_fn_t<std::int32_t>(op);
    case Prim::u32:
      return elementwise_fn_t<std::uint32_t>(op);
    case Prim::i64:
      return elementwise_fn_t<std::int64_t>(op);
    case Prim::u64:
      return elementwise_fn_t<std::uint64_t>(op);
    case Prim::f32:
      return elementwise_fn_t<float>(op);
    case Prim::f64:
      return elementwise_fn_t<double>(op);
    case Prim::none:
      return nullptr;
  }
  return nullptr;
}

/// Whether op applies to elements of type t (the bitwise ones to integers only).
inline bool elementwise_valid(Prim t, OpKind op) {
  return elementwise_fn(t, op) != nullptr;
}

/// acc[i] = op(acc[i], b[i]) for the `count` elements of type t of both arrays (nothing where op
/// does not apply to t).
inline void apply_elementwise(char* acc, const char* b, std::size_t count, Prim t, OpKind op) {
  if (ElementwiseFn f = elementwise_fn(t, op)) f(acc, b, count);
}

}  // namespace antler::comm::detail
