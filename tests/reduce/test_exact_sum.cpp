// ExactSum and the exact built-in statistics (issue: the same bits on any split). The oracle is
// CPython's math.fsum algorithm (Shewchuk's partials with its final half-way correction), written
// here: a different method from the superaccumulator under test. Each set is summed whole, and
// split into random parts merged in a random tree; every result must equal the oracle's bits.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "core/buffer.hpp"
#include "core/comm/reductions.hpp"
#include "reduce/exact_sum.hpp"
#include "reduce/reduce_extremes.hpp"
#include "reduce/reduce_stats.hpp"
#include "shell/field.hpp"
#include "shell/simulation.hpp"
#include "tests/support/fsum.hpp"
#include "tests/support/model.hpp"

using namespace antler;
using antler::test::fsum;

namespace {

/// v folded by ExactSum's block path on the scalar loops (path 0), the AVX2 kernels (1) or the
/// AVX-512 band sums (2; a CPU without them runs the best it has):
/// the sum, the squares, the plain add's sum, and the extremes.
struct Folded {
  ExactSum s, q, plain;
  double mn = std::numeric_limits<double>::infinity(), mx = -mn;
};
Folded fold_block(const std::vector<double>& v, int path) {
  detail::set_exact_vector_level(path);
  Folded f;
  f.s.addWithSquares(v.data(), v.size(), f.q, f.mn, f.mx);
  f.plain.add(v.data(), v.size());
  return f;
}

/// Each x^2 as two doubles, hi + lo = x^2 exactly (fma), for the oracle's sum of squares.
std::vector<double> exact_squares(const std::vector<double>& v) {
  std::vector<double> out;
  for (double x : v) {
    out.push_back(x * x);
    out.push_back(std::fma(x, x, -(x * x)));
  }
  return out;
}

bool same(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b) ||
         (std::isnan(a) && std::isnan(b));
}

/// v summed in `parts` random pieces (random sizes, values in order), merged in a random tree.
template <class Acc, class Add>
Acc split_sum(const std::vector<double>& v, int parts, std::mt19937_64& g, Add add) {
  std::vector<Acc> acc(static_cast<std::size_t>(parts));
  for (double x : v) add(acc[g() % acc.size()], x);
  while (acc.size() > 1) {
    const std::size_t i = g() % (acc.size() - 1);
    Acc a = acc[i], b = acc[i + 1];
    if (g() % 2) {
      a.merge(b);
      acc[i] = a;
    } else {
      b.merge(a);
      acc[i] = b;
    }
    acc.erase(acc.begin() + static_cast<std::ptrdiff_t>(i) + 1);
  }
  return acc[0];
}

/// Adversarial sets: wide exponent ranges, cancellation, alternating signs, subnormals, values
/// near the top of the range, the Vm.
std::vector<double> make_set(int kind, std::mt19937_64& g) {
  std::vector<double> v;
  const int n = 1 + static_cast<int>(g() % 400);
  for (int i = 0; i < n; ++i) {
    double x = 0;
    const auto mant = static_cast<double>(g() >> 11);
    switch (kind) {
      case 0:
        x = std::ldexp(mant, static_cast<int>(g() % 200) - 153);
        break;
      case 1:
        x = std::ldexp(mant, static_cast<int>(g() % 2000) - 1074);
        break;
      case 2:
        x = std::sin(i * 0.37) * 1e3 + 1e-7 * i;
        break;
      case 3: {
        const double y = std::ldexp(mant, static_cast<int>(g() % 40) - 60);
        x = i % 2 ? y : -y * (1 + 0x1p-52 * static_cast<double>(g() % 3));
      } break;
      case 4:
        x = std::ldexp(mant, -1127 + static_cast<int>(g() % 80));
        break;  // subnormal
      case 5:
        x = std::ldexp(1.0, static_cast<int>(g() % 2000) - 1000);
        break;
      default:
        x = std::ldexp(mant, 960 - 53 + static_cast<int>(g() % 10));
        break;  // near max
    }
    v.push_back(g() % 2 ? -x : x);
  }
  if (kind == 6) {  // keep the partial sums finite for the oracle: cancel in pairs
    std::vector<double> w;
    for (double x : v) {
      w.push_back(x);
      w.push_back(-x * 0.5);
    }
    v = w;
  }
  return v;
}

}  // namespace

TEST_CASE("ExactSum: the correctly rounded sum (math.fsum's), whole and split any way") {
  std::mt19937_64 g(2026);
  int checked = 0;
  for (int t = 0; t < 1400; ++t) {
    const std::vector<double> v = make_set(t % 7, g);
    const double want = fsum(v);
    ExactSum whole;
    for (double x : v) whole.add(x);
    REQUIRE_MESSAGE(same(whole.value(), want),
                    "set " << t << ": " << whole.value() << " vs " << want);
    // rest(): the sum less value(), correctly rounded (fsum of the values and -value()).
    std::vector<double> less = v;
    less.push_back(-want);
    const double rest = fsum(less);
    REQUIRE_MESSAGE(same(whole.rest(), rest),
                    "set " << t << ": rest " << whole.rest() << " vs " << rest);
    double hi = 0, lo = 0;
    whole.split(hi, lo);
    REQUIRE((same(hi, want) && same(lo, rest)));
    for (int parts : {2, 3, 7, 64}) {
      const ExactSum s = split_sum<ExactSum>(v, parts, g, [](ExactSum& a, double x) { a.add(x); });
      REQUIRE(same(s.value(), want));
    }
    ++checked;
  }
  CHECK(checked == 1400);
  // Through more values than one normalisation covers (1023 adds), of one sign then cancelled.
  std::vector<double> many(5000, 0x1.fffffffffffffp+1023 / 8192);
  for (std::size_t i = 0; i < 4999; ++i) many.push_back(-many[i]);
  ExactSum m;
  for (double x : many) m.add(x);
  CHECK(m.value() == many[0]);
}

TEST_CASE("ExactSum: merges of sums with many adds since their last carry stay exact") {
  // Merging adds digits as they are while the two sums' adds since their carries allow it, and
  // normalises both first otherwise: sums of 1 to 1022 same-signed large adds, merged in chains.
  std::mt19937_64 g(77);
  for (int t = 0; t < 60; ++t) {
    std::vector<double> all;
    ExactSum acc;
    for (int part = 0; part < 5; ++part) {
      const int n = g() % 2 ? 1 + static_cast<int>(g() % 60) : 960 + static_cast<int>(g() % 63);
      ExactSum s;
      for (int i = 0; i < n; ++i) {
        const double x = std::ldexp(1.0 + static_cast<double>(g() % 4096) / 4096,
                                    900 + static_cast<int>(g() % 100));
        s.add(x);
        all.push_back(x);
      }
      acc.merge(s);
      if (part % 2 == 0) continue;
      // Keep the oracle's partial sums finite: cancel most of it with one exact value.
      const double back = -acc.value();
      acc.add(back);
      all.push_back(back);
    }
    REQUIRE(same(acc.value(), fsum(all)));
  }
}

TEST_CASE("ExactSum: overflow, infinities, NaN, zeros and ties as IEEE rounds them") {
  auto sum = [](std::vector<double> v) {
    ExactSum s;
    for (double x : v) s.add(x);
    return s.value();
  };
  const double inf = std::numeric_limits<double>::infinity(), big = 1e308,
               mx = std::numeric_limits<double>::max();
  CHECK(sum({big, big, -big, -big, big}) == big);  // overflows only in a wrong order
  CHECK(sum({mx, mx}) == inf);
  CHECK(sum({-mx, -mx}) == -inf);
  CHECK(sum({mx, 0x1p970}) == inf);   // a tie at the top rounds to even: overflow
  CHECK(sum({mx, 0x1p969}) == mx);    // below the tie
  CHECK(sum({1.0, 0x1p-53}) == 1.0);  // a tie rounds to even
  CHECK(sum({1.0, 0x1p-53, 0x1p-105}) == 1.0 + 0x1p-52);
  CHECK(sum({0x1p-1074, 0x1p-1074, -0x1p-1073}) == 0.0);
  CHECK(sum({0x1p-1074, 0x1p-1074}) == 0x1p-1073);
  CHECK(sum({inf, 1.0}) == inf);
  CHECK(std::isnan(sum({inf, -inf})));
  CHECK(std::isnan(sum({1.0, std::nan("")})));
  CHECK(std::signbit(sum({-0.0})));
  CHECK(std::signbit(sum({-0.0, -0.0})));
  CHECK_FALSE(std::signbit(sum({-0.0, 0.0})));
  CHECK_FALSE(std::signbit(sum({})));
  CHECK_FALSE(std::signbit(sum({1.0, -1.0})));
  CHECK(sum({1e100, 1.0, -1e100}) == 1.0);
  // value() + rest() holds the sum to about 106 bits.
  ExactSum s;
  s.add(1.0);
  s.add(0x1p-80);
  CHECK(s.value() == 1.0);
  CHECK(s.rest() == 0x1p-80);
  // The rest of a sum that rounded up is negative; of a negative sum, of the other sign.
  auto rest = [](std::vector<double> v) {
    ExactSum s;
    for (double x : v) s.add(x);
    return s.rest();
  };
  CHECK(rest({1.0, 0x1p-53, 0x1p-105}) == -0x1.ffffffffffffep-54);
  CHECK(rest({-1.0, -0x1p-53, -0x1p-105}) == 0x1.ffffffffffffep-54);
  CHECK(rest({-1.0, -0x1p-80}) == -0x1p-80);
  CHECK(rest({1.0, 0x1p-1074}) == 0x1p-1074);  // a subnormal rest
  CHECK(rest({0x1p-1000, 0x1p-1074}) == 0x1p-1074);
  CHECK(rest({0x1p-1000, -0x1p-1074}) == -0x1p-1074);
  CHECK(rest({0x1p-1060, 0x1p-1074}) == 0.0);  // subnormal: exact in value()
  CHECK(rest({1.0, 0x1p-60, -1.0}) == 0.0);
  CHECK(rest({0x1.fffffffffffffp+1023, 0x1p970}) == 0.0);  // value() overflows: no rest
  CHECK(rest({}) == 0.0);
}

TEST_CASE("ExactSum: its compact form and its Boost form carry it whole; corrupted bytes fail") {
  std::mt19937_64 g(5);
  const std::vector<double> v = make_set(1, g);
  ExactSum s;
  for (double x : v) s.add(x);
  ByteBuffer b;
  Writer(b).put<ExactSum>(s);
  CHECK(b.size() <= ExactSum::kSerializedSizeBound);
  Reader r(b);
  CHECK(same(r.get<ExactSum>().value(), fsum(v)));
  // A narrow set takes a few digits, not 67.
  ExactSum small;
  small.add(1.5);
  small.add(2.25);
  ByteBuffer sb;
  Writer(sb).put<ExactSum>(small);
  CHECK(sb.size() < 40);
  ByteBuffer bad = sb;
  bad.data()[2] = 99;  // a digit range past the end
  Reader br(bad);
  CHECK_THROWS_AS(br.get<ExactSum>(), CommError);
  // A digit that write() could not have sent (not normalised) is refused, and the sum it was
  // to be read into keeps its value.
  ByteBuffer wild = sb;
  std::int64_t huge = std::int64_t{1} << 40;
  std::memcpy(wild.data() + 3, &huge, 8);
  ExactSum kept;
  kept.add(7.0);
  Reader wr(wild);
  CHECK_THROWS_AS(kept.readFrom(wr), CommError);
  CHECK(kept.value() == 7.0);
  // A sum in the top digits, of either sign, travels whole.
  for (double sign : {1.0, -1.0}) {
    ExactSum top;
    for (int i = 0; i < 3000; ++i) top.add(sign * 0x1.fffffffffffffp+1023);
    for (int i = 0; i < 2999; ++i) top.add(-sign * 0x1.fffffffffffffp+1023);
    ByteBuffer tb;
    Writer(tb).put<ExactSum>(top);
    Reader tr(tb);
    CHECK(tr.get<ExactSum>().value() == sign * 0x1.fffffffffffffp+1023);
  }
  // Boost (a user's reduce class that serializes an ExactSum member).
  std::ostringstream os(std::ios::binary);
  {
    boost::archive::binary_oarchive ar(os, boost::archive::no_header);
    ar << s;
  }
  std::istringstream is(os.str(), std::ios::binary);
  ExactSum back;
  {
    boost::archive::binary_iarchive ar(is, boost::archive::no_header);
    ar >> back;
  }
  CHECK(same(back.value(), s.value()));
}

TEST_CASE("ReduceStats and ReduceSum: sum, mean and sdev have the same bits on every split") {
  std::mt19937_64 g(11);
  for (int t = 0; t < 200; ++t) {
    const std::vector<double> v = make_set(t % 4 == 1 ? 2 : t % 4, g);
    const double n = static_cast<double>(v.size());
    ReduceStats whole;
    whole.primaryReduceBlock(v.data(), v.size());
    const double want = fsum(v);
    CHECK(same(whole.sum(), want));
    CHECK(same(whole.mean(), want / n));
    // The variance against a reference built with the oracle: M2 = sum(x^2) - 2 m S + n m^2 with
    // every square and product split exactly (by fma) and summed by math.fsum's method.
    const double m = want / n;
    std::vector<double> terms = exact_squares(v);
    terms.push_back(-2 * m * want);
    terms.push_back(std::fma(-2 * m, want, -(-2 * m * want)));
    const double mm = m * m;
    terms.push_back(n * mm);
    terms.push_back(std::fma(n, mm, -(n * mm)));
    const double me = std::fma(m, m, -mm);
    terms.push_back(n * me);
    terms.push_back(std::fma(n, me, -(n * me)));
    const double refVar = std::max(0.0, fsum(terms)) / n;
    if (std::isfinite(refVar) && refVar > 0)
      CHECK(std::fabs(whole.variance() - refVar) <= 1e-12 * refVar + 1e-300);
    for (int parts : {2, 3, 5, 16}) {
      std::vector<ReduceStats> acc(static_cast<std::size_t>(parts));
      std::vector<ReduceSum<double>> sums(static_cast<std::size_t>(parts));
      std::size_t at = 0;
      for (int p = 0; p < parts; ++p) {  // contiguous pieces, as threads and nodes hold them
        const std::size_t end =
            v.size() * static_cast<std::size_t>(p + 1) / static_cast<std::size_t>(parts);
        acc[static_cast<std::size_t>(p)].primaryReduceBlock(v.data() + at, end - at);
        for (std::size_t i = at; i < end; ++i)
          sums[static_cast<std::size_t>(p)].primaryReduce(v[i]);
        at = end;
      }
      for (int p = parts - 1; p > 0; --p) {  // merged in another order than they were made
        acc[static_cast<std::size_t>(p - 1)].tertiaryReduce(acc[static_cast<std::size_t>(p)]);
        sums[static_cast<std::size_t>(p - 1)].tertiaryReduce(sums[static_cast<std::size_t>(p)]);
      }
      CHECK(same(acc[0].sum(), whole.sum()));
      CHECK(same(acc[0].mean(), whole.mean()));
      CHECK(same(acc[0].sdev(), whole.sdev()));
      CHECK(same(sums[0].value(), want));
      CHECK(acc[0].count() == v.size());
    }
  }
}

// ---- through the reduce path, on the nodes and threads ctest runs this at ----

TEST_CASE("Stats over the issue's cancelling values: fsum's sum and mean on every split") {
  antler::test::Model m;
  Shell& s = m.s;
  const std::size_t n = 100003;
  std::vector<double> x(n);
  for (std::size_t i = 0; i < n; ++i)
    x[i] = std::sin(static_cast<double>(i) * 0.37) * 1e3 + 1e-7 * static_cast<double>(i);
  const double want = fsum(x);
  s.create("Neutral", "/s");
  const ObjId b = s.create("TestBlocks", "/s/b", n);  // a field nothing changes during a step
  Field<double>::setVec(s, b.id, "value", x);
  const ObjId st = s.create("Stats", "/s/st");
  s.addMsg("Reduce", st, "reduce", b, "getValue");
  s.setClock(0, 1e-4);
  s.useClock(0, "/s/st");
  std::vector<double> sdevs;
  for (unsigned threads : {1u, 2u, 3u}) {
    s.setNumThreads(threads);
    s.reinit();
    s.start(1e-4);
    CAPTURE(threads);
    CHECK(same(Field<double>::get(s, st, "sum"), want));
    CHECK(same(Field<double>::get(s, st, "mean"), want / static_cast<double>(n)));
    sdevs.push_back(Field<double>::get(s, st, "sdev"));
  }
  CHECK(same(sdevs[0], sdevs[1]));
  CHECK(same(sdevs[0], sdevs[2]));
  // The same value every node count gives (ctest runs this file at 1-4 nodes): within 1e-14 of a
  // two-pass reference in long double, far closer than any split-dependent fold would keep.
  long double mean = 0, q = 0;
  for (double v : x) mean += v;
  mean /= n;
  for (double v : x) q += (v - mean) * (v - mean);
  CHECK(std::fabs(sdevs[0] - std::sqrt(static_cast<double>(q / n))) <= 1e-13 * sdevs[0]);
}

TEST_CASE("ExactSum: the AVX-512 and AVX2 kernels and the scalar loops give the same bits") {
  // Chunks of one band (up to 6 binades), of several (up to 48), wider ones (value by value),
  // with zeros of both signs among them, chunks of zeros only, and NaNs; every length, so that
  // the kernels' tails and the short chunks' scalar loops are covered.
  std::mt19937_64 g(99);
  const bool had = detail::exact_vector_path();
  // Each level this CPU has is granted (so that the comparisons below run its kernels).
  CHECK(detail::set_exact_vector_level(0) == 0);
  if (__builtin_cpu_supports("avx2")) CHECK(detail::set_exact_vector_level(1) == 1);
  if (__builtin_cpu_supports("avx512f")) CHECK(detail::set_exact_vector_level(2) == 2);
  int compared = 0;
  for (int t = 0; t < 2000; ++t) {
    const int n = 1 + static_cast<int>(g() % 300);
    const int e0 = static_cast<int>(g() % 1200) - 600;
    const int span = 1 + static_cast<int>(g() % (t % 3 == 0 ? 9 : 70));
    const unsigned zeros = t % 10 == 0 ? 2 : t % 25 == 1 ? 1000 : 211;  // one in `zeros` (2: half)
    std::vector<double> v(static_cast<std::size_t>(n));
    for (double& x : v) {
      x = std::ldexp(static_cast<double>(g() >> 11), e0 + static_cast<int>(g() % span) - 53);
      if (g() % 2) x = -x;
      if (zeros == 1000 || g() % zeros == 0) x = g() % 3 ? 0.0 : -0.0;
      if (t % 5 != 0 && g() % 997 == 0) x = std::nan("");
    }
    if (t % 50 == 7) std::fill(v.begin(), v.end(), -0.0);  // a sum of -0.0s only is -0.0
    double r[3][6];
    for (int path = 0; path < 3; ++path) {
      const Folded f = fold_block(v, path);
      const double got[6] = {f.s.value(), f.s.rest(), f.q.value(), f.plain.value(), f.mn, f.mx};
      std::memcpy(r[path], got, sizeof got);
    }
    // Against one value at a time, too.
    ExactSum one, oneSq;
    for (double x : v) {
      one.add(x);
      oneSq.addProduct(x, x);
    }
    for (int k = 0; k < 6; ++k) {
      CHECK(same(r[0][k], r[1][k]));
      CHECK(same(r[0][k], r[2][k]));
    }
    CHECK(same(r[0][0], one.value()));
    CHECK(same(r[0][2], oneSq.value()));
    if (t % 5 == 0) {  // no NaN: fsum's bits, and the squares' too (x^2 = hi + lo by fma)
      const std::vector<double> squares = exact_squares(v);
      CHECK(same(r[0][0], fsum(v)));
      if (e0 > -400 && e0 + span < 400) CHECK(same(r[0][2], fsum(squares)));
    }
    if (t % 50 == 7) CHECK(std::signbit(r[0][0]));
    ++compared;
  }
  // Chunks after the first try the previous chunk's band in one pass: smooth data that stays in
  // it, data that leaves it (up, down, to zeros, NaN, a subnormal), and back.
  {
    std::vector<double> v;
    for (int i = 0; i < 1500; ++i) v.push_back(1.5 + 0.25 * std::sin(0.01 * i));  // one band
    for (int i = 0; i < 200; ++i) v.push_back(std::ldexp(1.0 + i * 1e-3, 20));    // above it
    for (int i = 0; i < 200; ++i) v.push_back(-std::ldexp(1.0 + i * 1e-3, -30));  // below it
    for (int i = 0; i < 300; ++i) v.push_back(i % 3 ? 0.0 : 2.0);                 // zeros
    v.push_back(0x1p-1070);                                                       // subnormal
    for (int i = 0; i < 300; ++i) v.push_back(1.75 - i * 1e-4);                   // back
    for (int i = 0; i < 1000; ++i) v.push_back(1.0 + i * 0.126);  // drifting out by one binade
    for (int path = 0; path < 3; ++path) {
      const Folded f = fold_block(v, path);
      CHECK(same(f.s.value(), fsum(v)));
      CHECK(same(f.plain.value(), fsum(v)));
      CHECK(f.mn == *std::min_element(v.begin(), v.end()));
      CHECK(f.mx == *std::max_element(v.begin(), v.end()));
      ExactSum oneSq;
      for (double x : v) oneSq.addProduct(x, x);
      CHECK(same(f.q.value(), oneSq.value()));
    }
    v.push_back(std::nan(""));
    ExactSum s;
    s.add(v.data(), v.size());
    CHECK(std::isnan(s.value()));
  }
  // A population's Vm: most values in the top two bands, a few far under them (neurons just reset
  // to a tiny vReset, decaying), some chunks with many under them (a vector pass further down),
  // some with values 48 binades or more under the top or subnormal (one by one), and blocks of
  // every size folded into one sum after another (the bands' guess carried from call to call,
  // right and wrong).
  {
    std::mt19937_64 h(7);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    ExactSum acc[3], accSq[3];
    double mn[3] = {INFINITY, INFINITY, INFINITY}, mx[3] = {-INFINITY, -INFINITY, -INFINITY};
    std::vector<double> all;
    for (int block = 0; block < 60; ++block) {
      const int n =
          block % 7 == 0 ? 1 + static_cast<int>(h() % 20) : 100 + static_cast<int>(h() % 900);
      const int many = block % 5 == 1;  // one value in 4 under the bands
      std::vector<double> v(static_cast<std::size_t>(n));
      for (double& x : v) {
        const unsigned r = static_cast<unsigned>(h() % 1000);
        if (r < (many ? 250u : 40u))
          x = -1e-7 * std::pow(0.995, static_cast<double>(h() % 40));  // a reset, decaying
        else if (r < (many ? 260u : 45u))
          x = std::ldexp(u(h), -13 - static_cast<int>(h() % 6));  // the tail, a band or two down
        else if (r < (many ? 262u : 46u))
          x = block % 2 ? 0x1p-1060 * u(h) : std::ldexp(u(h), -60);  // subnormal, or far under
        else if (r < (many ? 264u : 48u))
          x = 0.0;
        else
          x = (block % 3 ? 1.0 : 64.0) * (u(h) * 1.1 - 0.1);  // tops move between blocks
      }
      all.insert(all.end(), v.begin(), v.end());
      for (int path = 0; path < 3; ++path) {
        detail::set_exact_vector_level(path);
        acc[path].addWithSquares(v.data(), v.size(), accSq[path], mn[path], mx[path]);
      }
    }
    std::vector<double> squares = exact_squares(all);
    for (int path = 0; path < 3; ++path) {
      CHECK(same(acc[path].value(), fsum(all)));
      CHECK(same(acc[path].rest(), acc[0].rest()));
      CHECK(same(accSq[path].value(), fsum(squares)));
      CHECK(mn[path] == *std::min_element(all.begin(), all.end()));
      CHECK(mx[path] == *std::max_element(all.begin(), all.end()));
    }
  }
  // One ExactSum fed by both forms: the guess add() leaves (bands up to 2^1023, or down to
  // 2^-1000) must not be taken by addWithSquares, whose squares' bands stop at 2^512 and 2^-485.
  for (double scale : {0x1p+1000, 0x1p-990}) {
    std::vector<double> wide(256), squared(256);
    for (std::size_t k = 0; k < wide.size(); ++k) {
      wide[k] = scale * (1.0 + 0.001 * static_cast<double>(k));
      squared[k] = scale * (1.5 - 0.002 * static_cast<double>(k));  // (squares past the range)
    }
    for (int path = 0; path < 3; ++path) {
      detail::set_exact_vector_level(path);
      ExactSum s, q, one, oneSq;
      double mn = INFINITY, mx = -INFINITY;
      s.add(wide.data(), wide.size());
      s.addWithSquares(squared.data(), squared.size(), q, mn, mx);
      for (double x : wide) one.add(x);
      for (double x : squared) {
        one.add(x);
        oneSq.addProduct(x, x);
      }
      CHECK(same(s.value(), one.value()));
      CHECK(same(q.value(), oneSq.value()));
    }
  }
  // Band sums wait over up to 16 chunks before they reach the digits: 40 chunks of the largest
  // integers a band holds, squares included (each chunk's near 2^123), one sign then the other.
  for (double sign : {1.0, -1.0}) {
    std::vector<double> v(128 * 40, sign * 0x1.fffffffffffffp+5);
    for (std::size_t k = 0; k < v.size(); k += 97) v[k] = sign * 0x1.fffffffffffffp-1;  // band 1
    const std::vector<double> squares = exact_squares(v);
    for (int path = 0; path < 3; ++path) {
      const Folded f = fold_block(v, path);
      CHECK(same(f.s.value(), fsum(v)));
      CHECK(same(f.q.value(), fsum(squares)));
    }
  }
  // The largest integers a band holds (58 bits), 127 of one sign with the band's smallest value
  // in one chunk: each kernel lane's sum comes within 2^58 of int64's limit, and is still exact.
  for (double sign : {1.0, -1.0}) {
    std::vector<double> v(128, sign * 0x1.fffffffffffffp+5);
    v[0] = sign * 1.0;
    const std::vector<double> squares = exact_squares(v);
    for (int path = 0; path < 3; ++path) {
      const Folded f = fold_block(v, path);
      CHECK(same(f.s.value(), fsum(v)));
      CHECK(same(f.q.value(), fsum(squares)));
    }
  }
  detail::set_exact_vector_path(had);
  CHECK(compared == 2000);
}

namespace {

// Runs on every node (a Shell extension command: the node-level reductions are collective). Each
// rank sums its block of a cancelling set; the merge adds the children's sums exactly. Replies
// with this node's three results (the group's is NaN off the group).
void exact_reductions_handler(Simulation& sim, Reader&, Writer& w) {
  comm::Reductions red(sim.shell().comm());
  const int P = red.size(), me = red.rank();
  std::mt19937_64 g(404);  // the same sets on every rank
  const std::vector<double> a = make_set(1, g), b = make_set(3, g);
  auto block = [](const std::vector<double>& v, int part, int parts) {
    ExactSum s;
    const std::size_t n = v.size(),
                      lo = n * static_cast<std::size_t>(part) / static_cast<std::size_t>(parts),
                      hi = n * static_cast<std::size_t>(part + 1) / static_cast<std::size_t>(parts);
    for (std::size_t i = lo; i < hi; ++i) s.add(v[i]);
    return s;
  };
  const comm::StructMerge<ExactSum> merge = [](ExactSum mine, std::vector<ExactSum>& kids) {
    for (const ExactSum& k : kids) mine.merge(k);
    return mine;
  };
  // Two reductions by id, started in opposite orders on odd and even ranks.
  const comm::ReductionId ida = red.globalReductionId(), idb = red.globalReductionId();
  auto start = [&](comm::ReductionId id, const std::vector<double>& v) {
    return red.reduceStruct<ExactSum>(block(v, me, P), merge, {}, {.id = id, .toAll = true});
  };
  std::optional<comm::StructReduction<ExactSum>> ra, rb;
  if (me % 2) {
    rb = start(idb, b);
    ra = start(ida, a);
  } else {
    ra = start(ida, a);
    rb = start(idb, b);
  }
  ra->wait(std::chrono::seconds(60));
  rb->wait(std::chrono::seconds(60));
  // Over the even ranks only, each holding a block of `a` split among them.
  std::vector<int> evens;
  for (int r = 0; r < P; r += 2) evens.push_back(r);
  const comm::Group group = red.establishGroup(evens);
  double grouped = std::numeric_limits<double>::quiet_NaN();
  if (me % 2 == 0) {
    auto r =
        red.groupReduceStruct<ExactSum>(group, block(a, me / 2, static_cast<int>(evens.size())),
                                        merge, {}, {.id = std::nullopt, .toAll = true});
    r.wait(std::chrono::seconds(60));
    grouped = r.value().value();
  }
  w.put<double>(ra->value().value()).put<double>(rb->value().value()).put<double>(grouped);
}
[[maybe_unused]] const bool reg_exact =
    (Shell::registerCommand("test.exactReductions", &exact_reductions_handler), true);

}  // namespace

TEST_CASE("ExactSum partials through comm::Reductions: by id in any order and over a group") {
  // The node-level reductions carry ExactSum like any struct: fsum's bits on every rank.
  antler::test::Model m;
  std::mt19937_64 g(404);
  const std::vector<double> a = make_set(1, g), b = make_set(3, g);
  const auto replies = m.s.dispatchExtension("test.exactReductions", ByteBuffer());
  REQUIRE(replies.size() == static_cast<std::size_t>(m.s.numNodes()));
  for (std::size_t r = 0; r < replies.size(); ++r) {
    CAPTURE(r);
    Reader rd(replies[r]);
    CHECK(same(rd.get<double>(), fsum(a)));
    CHECK(same(rd.get<double>(), fsum(b)));
    const double grouped = rd.get<double>();
    if (r % 2 == 0)
      CHECK(same(grouped, fsum(a)));
    else
      CHECK(std::isnan(grouped));
  }
}
