// A watchdog for tests of code that could hang: a regression then fails the
// test and ends the process instead of stalling CI until its time limit.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <string>

namespace redflow::testing {

// Runs `f` on another thread and returns its result; a call that does not
// return within `limit` seconds fails the test and aborts (stuck threads
// cannot be joined).
template <typename F>
auto within_seconds(int limit, const std::string& what, F f) {
  auto future = std::async(std::launch::async, std::move(f));
  if (future.wait_for(std::chrono::seconds(limit)) != std::future_status::ready) {
    ADD_FAILURE() << what << " did not return within " << limit << " s";
    std::fprintf(stderr, "%s hangs: aborting\n", what.c_str());
    std::fflush(stderr);
    std::abort();
  }
  return future.get();
}

}  // namespace redflow::testing
