#pragma once
// A hang must fail fast and say where. On the driver (rank 0, which runs the test cases) a
// watchdog thread gives each test case a deadline; a case still running past it prints its name
// and ends the process with exit code 124, and mpirun then ends the other ranks. A worker that
// hangs leaves the driver waiting inside the same case, so the driver's deadline covers it too.
//
// The deadline is ANTLER_TEST_CASE_TIMEOUT seconds (default 120, 360 in a sanitizer build: the
// slowest case takes about a second on a quiet 2-core machine and up to ~20 s on a loaded one).
// ctest's TIMEOUT stays as the outer net.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace antler::test {

class Watchdog {
 public:
  using Clock = std::chrono::steady_clock;
  static Watchdog& instance() {
    static Watchdog w;
    return w;
  }
  /// Starts the watchdog thread (call once, on the driver).
  void start(double seconds) {
    limit_ = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    arm("(before the first test case)");
    thread_ = std::thread([this] { watch(); });
  }
  /// A test case begins: a new deadline.
  void arm(const std::string& name) {
    std::lock_guard<std::mutex> g(m_);
    name_ = name;
    deadline_ = Clock::now() + limit_;
  }
  /// Stops the thread (the run is over).
  void stop() {
    {
      std::lock_guard<std::mutex> g(m_);
      done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void watch() {
    std::unique_lock<std::mutex> g(m_);
    while (!done_) {
      if (Clock::now() >= deadline_) {
        const double s = std::chrono::duration<double>(limit_).count();
        std::fprintf(stderr,
                     "antler_tests: test case \"%s\" still running after %.0f s: a hang (or a case "
                     "slower than ANTLER_TEST_CASE_TIMEOUT); aborting\n",
                     name_.c_str(), s);
        std::fflush(stderr);
        std::_Exit(124);
      }
      cv_.wait_until(g, deadline_);
    }
  }
  Clock::duration limit_{};
  Clock::time_point deadline_{};
  std::string name_;
  bool done_ = false;
  std::mutex m_;
  std::condition_variable cv_;
  std::thread thread_;
};

/// Re-arms the watchdog at each test case (and subcase) start.
struct WatchdogListener : doctest::IReporter {
  explicit WatchdogListener(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData& tc) override {
    Watchdog::instance().arm(tc.m_name);
  }
  void test_case_reenter(const doctest::TestCaseData& tc) override {
    Watchdog::instance().arm(tc.m_name);
  }
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace antler::test
