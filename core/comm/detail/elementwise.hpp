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

/// out[i] = f(a[i], b[i]) for `count` elements of T (out is a or b: in place).
template <class T, class F>
[[gnu::always_inline]] inline void apply_elementwise_t(char* out, const char* a, const char* b,
                                                       std::size_t count, F f) {
  for (std::size_t i = 0; i < count; ++i) {
    T x, y;
    std::memcpy(&x, a + i * sizeof(T), sizeof(T));
    std::memcpy(&y, b + i * sizeof(T), sizeof(T));
    const T r = f(x, y);
    std::memcpy(out + i * sizeof(T), &r, sizeof(T));
  }
}

/// The operators on one element of T. Integer sums and products wrap: computed unsigned, at
/// least as wide as unsigned int (no signed overflow, no promotion of narrow types to int).
template <class T>
struct ElementOps {
  using W = std::conditional_t<
      std::is_integral_v<T>,
      std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned,
                         std::make_unsigned_t<std::conditional_t<std::is_integral_v<T>, T, int>>>,
      T>;
  static T sum(T x, T y) {
    return static_cast<T>(static_cast<W>(static_cast<W>(x) + static_cast<W>(y)));
  }
  static T prod(T x, T y) {
    return static_cast<T>(static_cast<W>(static_cast<W>(x) * static_cast<W>(y)));
  }
  static T min(T x, T y) { return y < x ? y : x; }
  static T max(T x, T y) { return x < y ? y : x; }
  static T land(T x, T y) { return static_cast<T>(x && y); }
  static T lor(T x, T y) { return static_cast<T>(x || y); }
  static T band(T x, T y) { return static_cast<T>(x & y); }
  static T bor(T x, T y) { return static_cast<T>(x | y); }
};

/// acc[i] = op(acc[i], b[i]) for `count` elements (or, for ElementwiseKernel::onto, op(b[i],
/// acc[i])).
using ElementwiseFn = void (*)(char* acc, const char* b, std::size_t count);
/// An operator's forms over one type: in place with the accumulator the left operand, and onto
/// it, the accumulator the right operand.
struct ElementwiseKernel {
  ElementwiseFn inPlace = nullptr;
  ElementwiseFn onto = nullptr;
};

template <class T, T (*F)(T, T)>
void elementwise_in_place(char* acc, const char* b, std::size_t count) {
  apply_elementwise_t<T>(acc, acc, b, count, F);
}
template <class T, T (*F)(T, T)>
void elementwise_onto(char* acc, const char* b, std::size_t count) {
  apply_elementwise_t<T>(acc, b, acc, count, F);
}
template <class T, T (*F)(T, T)>
constexpr ElementwiseKernel kernel_of() {
  return {&elementwise_in_place<T, F>, &elementwise_onto<T, F>};
}

template <class T>
ElementwiseKernel elementwise_kernel_t(OpKind op) {
  using O = ElementOps<T>;
  switch (op) {
    case OpKind::sum:
      return kernel_of<T, &O::sum>();
    case OpKind::prod:
      return kernel_of<T, &O::prod>();
    case OpKind::min:
      return kernel_of<T, &O::min>();
    case OpKind::max:
      return kernel_of<T, &O::max>();
    case OpKind::land:
      return kernel_of<T, &O::land>();
    case OpKind::lor:
      return kernel_of<T, &O::lor>();
    case OpKind::band:
      if constexpr (std::is_integral_v<T>) return kernel_of<T, &O::band>();
      return {};
    case OpKind::bor:
      if constexpr (std::is_integral_v<T>) return kernel_of<T, &O::bor>();
      return {};
    case OpKind::none:
      return {};
  }
  return {};
}

/// The functions applying op to elements of type t; empty where op does not apply to t (see
/// elementwise_valid).
inline ElementwiseKernel elementwise_kernel(Prim t, OpKind op) {
  switch (t) {
    case Prim::i8:
      return elementwise_kernel_t<std::int8_t>(op);
    case Prim::u8:
      return elementwise_kernel_t<std::uint8_t>(op);
    case Prim::i16:
      return elementwise_kernel_t<std::int16_t>(op);
    case Prim::u16:
      return elementwise_kernel_t<std::uint16_t>(op);
    case Prim::i32:
      return elementwise_kernel_t<std::int32_t>(op);
    case Prim::u32:
      return elementwise_kernel_t<std::uint32_t>(op);
    case Prim::i64:
      return elementwise_kernel_t<std::int64_t>(op);
    case Prim::u64:
      return elementwise_kernel_t<std::uint64_t>(op);
    case Prim::f32:
      return elementwise_kernel_t<float>(op);
    case Prim::f64:
      return elementwise_kernel_t<double>(op);
    case Prim::none:
      return {};
  }
  return {};
}
/// The in-place form alone.
inline ElementwiseFn elementwise_fn(Prim t, OpKind op) {
  return elementwise_kernel(t, op).inPlace;
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
