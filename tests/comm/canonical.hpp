#pragma once
// The canonical fold order written out independently of core/comm, for tests on both backends:
// fold[a, a + 2m) = fold[a, a + m) . fold[a + m, a + 2m), the right part clipped at P.

namespace antler::test {

/// Rank r's contribution: doubles whose sum depends on the association.
inline double contribution(int r) {
  return (r % 2 ? -1e16 : 1e16) * (r % 3 == 0 ? 1.0 : 0.5) + r * 0.1 + 1.0 / (r + 3);
}

inline double canonical_sum(int P, int a, int m) {
  if (m == 1) return contribution(a);
  const int h = m / 2;
  if (a + h >= P) return canonical_sum(P, a, h);
  return canonical_sum(P, a, h) + canonical_sum(P, a + h, h);
}

/// The canonical-order sum of every rank's contribution on P ranks.
inline double canonical_sum(int P) {
  int m = 1;
  while (m < P) m *= 2;
  return canonical_sum(P, 0, m);
}

/// The canonical-order sum over P ranks of value(r), for any value.
template <class F>
double canonical_sum_of(int P, const F& value, int a = 0, int m = 0) {
  if (m == 0) {
    m = 1;
    while (m < P) m *= 2;
  }
  if (m == 1) return value(a);
  const int h = m / 2;
  if (a + h >= P) return canonical_sum_of(P, value, a, h);
  return canonical_sum_of(P, value, a, h) + canonical_sum_of(P, value, a + h, h);
}

}  // namespace antler::test
