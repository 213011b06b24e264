// A test's own scratch path under the system's temporary directory, named
// after the process and the running test, so that tests run at once (ctest
// -j) never share files and a path left behind says which test left it.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>

// PREFIX_<pid>_<test name>. A parameterized test's name ("Name/3") has its
// '/' replaced, so the path is one directory deep and removing it removes
// everything the test wrote.
inline std::filesystem::path test_scratch_path(const std::string& prefix) {
  std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::replace(name.begin(), name.end(), '/', '_');
  return std::filesystem::temp_directory_path() / (prefix + "_" + std::to_string(getpid()) + "_" + name);
}
