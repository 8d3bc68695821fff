// The built-in reduce classes against independent serial computations (long double two-pass),
// folded the way the reduce path folds them: chunks per "thread", merged per "node", merged.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/buffer.hpp"
#include "reduce/reduce_extremes.hpp"
#include "reduce/reduce_field_dimension.hpp"
#include "reduce/reduce_stats.hpp"

using namespace antler;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/// Folds v as `nodes` x `threads` contiguous chunks: primary per chunk, secondary per node,
/// tertiary across nodes, with a serialization round trip between nodes as on the wire.
template <class R>
R fold(const std::vector<double>& v, int nodes, int threads) {
  std::vector<R> nodeParts;
  const std::size_t n = v.size();
  for (int p = 0; p < nodes; ++p) {
    const std::size_t nb = n * p / nodes, ne = n * (p + 1) / nodes;
    std::vector<R> parts(threads);
    for (int t = 0; t < threads; ++t) {
      const std::size_t b = nb + (ne - nb) * t / threads, e = nb + (ne - nb) * (t + 1) / threads;
      for (std::size_t i = b; i < e; ++i) parts[t].primaryReduce(v[i]);
    }
    for (int t = 1; t < threads; ++t) parts[0].secondaryReduce(parts[t]);
    ByteBuffer b;
    Writer(b).put(parts[0]);
    Reader r(b);
    nodeParts.push_back(r.get<R>());
  }
  R out = nodeParts[0];
  for (int p = 1; p < nodes; ++p) out.tertiaryReduce(nodeParts[p]);
  return out;
}

struct Reference {
  std::size_t n = 0;
  double sum = 0, mean = kNaN, sdev = kNaN, min = kNaN, max = kNaN;
};

Reference reference(const std::vector<double>& v) {
  Reference r;
  r.n = v.size();
  long double s = 0;
  for (double x : v) s += x;
  r.sum = static_cast<double>(s);
  if (v.empty()) return r;
  const long double m = s / static_cast<long double>(v.size());
  long double q = 0;
  for (double x : v) q += (x - m) * (x - m);
  r.mean = static_cast<double>(m);
  r.sdev = static_cast<double>(std::sqrt(q / static_cast<long double>(v.size())));
  bool any = false;
  for (double x : v) {
    if (std::isnan(x)) continue;
    if (!any || x < r.min) r.min = x;
    if (!any || x > r.max) r.max = x;
    any = true;
  }
  return r;
}

bool close(double a, double b, double rel = 1e-12) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::abs(a - b) <= rel * std::max(1.0, std::max(std::abs(a), std::abs(b)));
}

std::vector<double> population(std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = 1e3 + 7.5 * std::sin(0.37 * static_cast<double>(i)) -
           0.001 * static_cast<double>(i % 13);  // large mean
  return v;
}

void check_all(const std::vector<double>& v) {
  const Reference ref = reference(v);
  for (auto [P, T] : {std::pair{1, 1}, {1, 3}, {2, 2}, {4, 1}, {3, 2}}) {
    CAPTURE(P);
    CAPTURE(T);
    const auto s = fold<ReduceStats>(v, P, T);
    CHECK(s.count() == ref.n);
    CHECK(close(s.sum(), ref.sum));
    CHECK(close(s.mean(), ref.mean));
    CHECK(close(s.sdev(), ref.sdev, 1e-9));  // relative to a value ~7.5 with mean 1e3
    CHECK(close(s.min(), ref.min));
    CHECK(close(s.max(), ref.max));
    const auto mx = fold<ReduceMax<double>>(v, P, T);
    const auto mn = fold<ReduceMin<double>>(v, P, T);
    const auto sm = fold<ReduceSum<double>>(v, P, T);
    CHECK(mx.has() == !std::isnan(ref.max));
    if (mx.has()) CHECK(mx.value() == ref.max);
    if (mn.has()) CHECK(mn.value() == ref.min);
    CHECK(close(sm.value(), ref.sum));
    CHECK(sm.count() == ref.n);
  }
}

}  // namespace

TEST_CASE("ReduceStats, Max, Min, Sum on populations of 0, 1, 7 and 100000") {
  for (std::size_t n : {0u, 1u, 7u, 100000u}) {
    CAPTURE(n);
    check_all(population(n));
  }
  const ReduceStats empty;
  CHECK(empty.count() == 0);
  CHECK(std::isnan(empty.mean()));
  CHECK(std::isnan(empty.sdev()));
  CHECK(std::isnan(empty.min()));
  CHECK(!ReduceMax<double>().has());
}

TEST_CASE("negative values") {
  auto v = population(1001);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = -v[i] * ((i % 3) ? 1 : -0.5);
  check_all(v);
}

TEST_CASE("NaN: sum, mean and sdev become NaN; min and max skip it") {
  auto v = population(100);
  v[37] = kNaN;
  const auto s = fold<ReduceStats>(v, 2, 2);
  CHECK(std::isnan(s.sum()));
  CHECK(std::isnan(s.mean()));
  CHECK(std::isnan(s.sdev()));
  CHECK(s.count() == 100);
  const Reference ref = reference(v);
  CHECK(s.min() == ref.min);
  CHECK(s.max() == ref.max);
  CHECK(fold<ReduceMax<double>>(v, 2, 2).value() == ref.max);
  CHECK(fold<ReduceMin<double>>(v, 3, 1).value() == ref.min);
  const auto all = fold<ReduceStats>(std::vector<double>(5, kNaN), 1, 2);
  CHECK(std::isnan(all.min()));
  CHECK(!fold<ReduceMax<double>>(std::vector<double>(5, kNaN), 1, 2).has());
}

TEST_CASE("+inf and -inf: sum and mean are the infinity (NaN with both), sdev NaN, min/max exact") {
  auto v = population(100);
  v[10] = kInf;
  v[90] = kInf;  // in another thread's chunk than v[10]
  auto s = fold<ReduceStats>(v, 2, 2);
  CHECK(s.sum() == kInf);
  CHECK(s.mean() == kInf);
  CHECK(std::isnan(s.sdev()));
  CHECK(s.max() == kInf);
  CHECK(s.min() == reference(v).min);
  v[50] = -kInf;
  s = fold<ReduceStats>(v, 1, 3);
  CHECK(std::isnan(s.sum()));
  CHECK(std::isnan(s.mean()));
  CHECK(s.min() == -kInf);
  CHECK(s.max() == kInf);
  CHECK(fold<ReduceMin<double>>(v, 2, 1).value() == -kInf);
}

TEST_CASE("ReduceFieldDimension is the maximum count") {
  ReduceFieldDimension a, b;
  for (Index i : {3u, 9u, 2u}) a.primaryReduce(i);
  b.primaryReduce(11);
  a.tertiaryReduce(b);
  CHECK(a.maxIndex() == 11);
  CHECK(ReduceFieldDimension().maxIndex() == 0);
}

TEST_CASE("ReduceSum's sum is exact: the same bits however the values are cut and merged") {
  // Values whose exact sum is known: multiples of 2^-20 below 2^20 (their sum fits in 53 bits),
  // plus a huge value and its negation that any rounding fold would lose the small ones to.
  std::vector<double> v;
  long long units = 0;  // the exact sum in units of 2^-20
  for (int i = 0; i < 1003; ++i) {
    const long long u = (i * 7919LL) % 1000003 - 500000;
    v.push_back(std::ldexp(static_cast<double>(u), -20));
    units += u;
  }
  v.insert(v.begin() + 500, 1e300);
  v.push_back(-1e300);
  const double exact = std::ldexp(static_cast<double>(units), -20);
  ReduceSum<double> whole;
  whole.primaryReduceBlock(v.data(), v.size());
  CHECK(whole.value() == exact);
  CHECK(whole.count() == v.size());
  for (std::size_t cut : {std::size_t{1}, std::size_t{333}, v.size() - 1}) {
    ReduceSum<double> a, b;
    a.primaryReduceBlock(v.data(), cut);
    for (std::size_t i = cut; i < v.size(); ++i) b.primaryReduce(v[i]);
    b.tertiaryReduce(a);  // merged the other way round
    CHECK(b.value() == exact);
  }
}

TEST_CASE("ReduceSum of double 0/1 blocks (spike flags): counted, the same bits as the band sums") {
  // primaryReduceBlock counts a block whose values are all +0.0 or 1.0 (with AVX2); a block with
  // any other value (-0.0, 2, 1 + ulp, a tiny value, NaN), wherever it sits, takes the exact sums.
  // Oracle: the scalar path (set_exact_vector_path(false)) and, for pure flags, the count.
  std::vector<double> v(1003);
  unsigned long long x = 777;
  std::size_t serial = 0;
  for (auto& f : v) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    f = (x >> 61) == 0 ? 1.0 : 0.0;
    serial += f == 1.0;
  }
  const double odd[] = {-0.0,   2.0,  std::nextafter(1.0, 2.0),
                        1e-300, -1.0, std::numeric_limits<double>::quiet_NaN()};
  const bool vec = detail::exact_vector_path();
  auto sum = [](const std::vector<double>& w, bool vector, std::size_t block) {
    detail::set_exact_vector_path(vector);
    ReduceSum<double> r;
    for (std::size_t i = 0; i < w.size(); i += block)
      r.primaryReduceBlock(w.data() + i, std::min(block, w.size() - i));
    return std::pair{r.value(), r.count()};
  };
  for (std::size_t block : {std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{512}}) {
    const auto [value, count] = sum(v, true, block);
    CHECK(value == static_cast<double>(serial));
    CHECK(count == v.size());
    for (std::size_t at : {std::size_t{0}, std::size_t{5}, std::size_t{511}, v.size() - 1})
      for (double o : odd) {
        std::vector<double> w = v;
        w[at] = o;
        const auto [fast, n1] = sum(w, true, block);
        const auto [scalar, n2] = sum(w, false, block);
        CHECK(n1 == n2);
        if (std::isnan(o))
          CHECK(std::isnan(fast));
        else
          CHECK(std::bit_cast<std::uint64_t>(fast) == std::bit_cast<std::uint64_t>(scalar));
      }
  }
  // All -0.0: not flags; the exact sum keeps the sign, as the scalar path does. Then a block of
  // +0.0 flags: the sum becomes +0.0 on both paths.
  std::vector<double> negz(100, -0.0);
  CHECK(std::bit_cast<std::uint64_t>(sum(negz, true, 8).first) ==
        std::bit_cast<std::uint64_t>(sum(negz, false, 8).first));
  CHECK(std::signbit(sum(negz, false, 100).first));
  negz.insert(negz.end(), 100, 0.0);
  CHECK(!std::signbit(sum(negz, true, 100).first));
  CHECK(!std::signbit(sum(negz, false, 100).first));
  detail::set_exact_vector_path(vec);
}

TEST_CASE("ReduceSum of flags counted a block at a time: the same sum and count as one by one") {
  // reduce_loop counts a block of a bool getter's values and adds the count once.
  std::vector<char> flags(5000);
  unsigned long long x = 12345;
  for (auto& f : flags) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    f = (x >> 60) == 0;  // about one in 16
  }
  ReduceSum<double> one, blocks;
  ReduceSum<long> ione, iblocks;
  std::size_t serial = 0;
  for (char f : flags) {
    one.primaryReduce(f ? 1.0 : 0.0);
    ione.primaryReduce(f ? 1 : 0);
    serial += f != 0;
  }
  for (std::size_t i = 0; i < flags.size(); i += 512) {
    const std::size_t m = std::min<std::size_t>(512, flags.size() - i);
    std::size_t ones = 0;
    for (std::size_t k = 0; k < m; ++k) ones += flags[i + k] != 0;
    blocks.primaryReduceFlags(ones, m);
    iblocks.primaryReduceFlags(ones, m);
  }
  CHECK(one.value() == static_cast<double>(serial));
  CHECK(blocks.value() == one.value());
  CHECK(blocks.count() == one.count());
  CHECK(iblocks.value() == ione.value());
  CHECK(iblocks.count() == flags.size());
  // Merged with a sum of other values, the result is the same too.
  ReduceSum<double> a = one, b = blocks, other;
  other.primaryReduce(0.1);
  other.primaryReduce(1e300);
  other.primaryReduce(-1e300);
  a.secondaryReduce(other);
  b.secondaryReduce(other);
  CHECK(a.value() == b.value());
}
