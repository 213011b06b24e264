// Checks on a Status that tests share: an error that names what was wrong,
// and the status of parsing a DOT text.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "redflow/graph.hpp"
#include "redflow/status.hpp"

namespace redflow::testing {

// Expects `s` to have failed with a message that mentions every one of `names`.
inline void expect_error_naming(const Status& s, std::initializer_list<std::string> names) {
  ASSERT_FALSE(s.ok()) << "expected an error naming " << *names.begin();
  for (const std::string& name : names) EXPECT_NE(s.message().find(name), std::string::npos) << s.ToString();
}

inline Status parse_status(const std::string& dot, const std::string& base_dir = ".") {
  return Graph::from_dot_string(dot, base_dir).status();
}

}  // namespace redflow::testing
