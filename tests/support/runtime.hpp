#pragma once
// The test program's Runtime (tests/support/main.cpp makes it on every rank): the test cases,
// written as if serial, reach their simulation through it.
#include "shell/runtime.hpp"

namespace antler::test {
Runtime& runtime();
}  // namespace antler::test
