// detail::due_step (models/step_time.hpp) against its definition, searched by brute force: the
// first step n > last with n * dt + slack >= time, whatever first guess the caller's 1 / dt makes.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "core/random.hpp"
#include "models/step_time.hpp"

using namespace antler;

namespace {
std::uint64_t brute(double time, double dt, std::uint64_t last) {
  const double slack = detail::step_slack(dt);
  std::uint64_t n = last + 1;
  while (static_cast<double>(n) * dt + slack < time) ++n;
  return n;
}
}  // namespace

TEST_CASE("due_step is the first step whose end (plus the slack) reaches the time") {
  Rng r(5, 17);
  const double dts[] = {1e-4, 1e-3, 0.1, 0.025, 1.0 / 3.0, 7e-5};
  for (int k = 0; k < 20000; ++k) {
    const double dt = dts[k % 6];
    const std::uint64_t last = static_cast<std::uint64_t>(r.uniform() * 1000);
    // Times on and around step ends (a few ulps either side, and the slack's edge), and between.
    const std::uint64_t step = last + static_cast<std::uint64_t>(r.uniform() * 60);
    double time = static_cast<double>(step) * dt;
    switch (k % 5) {
      case 0:
        break;
      case 1:
        time = std::nextafter(time, 1e300);
        break;
      case 2:
        time = std::nextafter(time, -1e300);
        break;
      case 3:
        time += detail::step_slack(dt) * (r.uniform() < 0.5 ? 1.0 : 1.0000001);
        break;
      default:
        time += r.uniform() * dt;
        break;
    }
    const std::uint64_t want = brute(time, dt, last);
    const std::uint64_t limit = last + 1 + 100;
    CAPTURE(dt);
    CAPTURE(time);
    CAPTURE(last);
    CHECK(detail::due_step(time, dt, last, limit) == want);
    // A cached 1 / dt a few ulps off only moves the first guess.
    CHECK(detail::due_step(time, dt, (1.0 / dt) * (1 + 4e-16), last, limit) == want);
    CHECK(detail::due_step(time, dt, (1.0 / dt) * (1 - 4e-16), last, limit) == want);
  }
  // Far, infinite and NaN times: the limit.
  CHECK(detail::due_step(1e300, 1e-3, 0, 50) == 50);
  CHECK(detail::due_step(std::numeric_limits<double>::infinity(), 1e-3, 0, 50) == 50);
  CHECK(detail::due_step(std::nan(""), 1e-3, 0, 50) == 50);
  CHECK(detail::due_step(-std::numeric_limits<double>::infinity(), 1e-3, 7, 50) == 8);
}
