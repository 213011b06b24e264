// Small newcomer traps: sizes that overflow a sum in shape checks.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "redflow/registry.hpp"

namespace {

TEST(SmallFixes, CollectOfTwoHugeInputsDoesNotWrapToZero) {
  redflow::Registry reg = redflow::Registry::with_builtins();
  const redflow::ActorSpec* collect = reg.find("rf.collect");
  ASSERT_NE(collect, nullptr);
  const std::vector<std::size_t> inputs = {std::size_t{1} << 63, std::size_t{1} << 63};
  std::string problem = collect->check({inputs, 0, ""});
  EXPECT_NE(problem, "") << "2^63 + 2^63 bytes wrapped to 0 and matched the 0-byte output";
  EXPECT_EQ(problem.find("hold 0 bytes"), std::string::npos) << problem;
  EXPECT_NE(problem.find("more than"), std::string::npos) << problem;
}

}  // namespace
