// `redflow schedule` says what its estimates are: times with units, and the
// model that turns `work` hints and bytes into them.
#include "cli_helpers.hpp"

namespace {

using redflow::testing::CliTest;
using redflow::testing::kDemo;
using redflow::testing::run_cli;

TEST_F(CliTest, ScheduleStatesItsModelAndUnits) {
  auto r = run_cli("schedule " + kDemo + "pipeline.dot --tiles 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto header = r.output.find("estimated makespan ");
  ASSERT_NE(header, std::string::npos) << r.output;
  const std::string line = r.output.substr(header, r.output.find('\n', header) - header);
  EXPECT_TRUE(line.ends_with(" ns") || line.ends_with(" µs") || line.ends_with(" ms") || line.ends_with(" s")) << line;
  EXPECT_NE(r.output.find("1e+09 operations/s per core"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("10 GB/s"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("overhead"), std::string::npos) << r.output;
}

}  // namespace
