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
  EXPECT_NE(r.output.find("--calibrate"), std::string::npos) << r.output;
}

}  // namespace

namespace {

using redflow::testing::CliTest;
using redflow::testing::kDemo;
using redflow::testing::run_cli;

// "estimated makespan 2.099 µs" -> seconds.
double makespan_of(const std::string& output) {
  const std::string key = "estimated makespan ";
  const auto at = output.find(key);
  if (at == std::string::npos) return -1;
  std::size_t used = 0;
  const double v = std::stod(output.substr(at + key.size()), &used);
  const std::string unit = output.substr(at + key.size() + used + 1, output.find('\n', at) - (at + key.size() + used + 1));
  if (unit == "ns") return v * 1e-9;
  if (unit == "µs") return v * 1e-6;
  if (unit == "ms") return v * 1e-3;
  return v;
}

TEST_F(CliTest, CalibrateMeasuresOnceCachesAndRaisesTheEstimate) {
  const char* old = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old != nullptr ? old : "";
  setenv("XDG_CACHE_HOME", path("cache").c_str(), 1);
  auto plain = run_cli("schedule " + kDemo + "pipeline.dot --tiles 2");
  auto again = run_cli("schedule " + kDemo + "pipeline.dot --tiles 2 --calibrate");
  auto calibrated = run_cli("schedule " + kDemo + "pipeline.dot --tiles 2 --calibrate");
  if (old != nullptr) setenv("XDG_CACHE_HOME", saved.c_str(), 1); else unsetenv("XDG_CACHE_HOME");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("measured now"), std::string::npos) << again.output;
  EXPECT_NE(calibrated.output.find("measured earlier"), std::string::npos) << calibrated.output;
  EXPECT_TRUE(std::filesystem::exists(path("cache") + "/redflow")) << again.output;
  // 7 actors, 5 of them not zero-copy: each adds the measured overhead.
  EXPECT_GT(makespan_of(calibrated.output), makespan_of(plain.output)) << calibrated.output << "\n" << plain.output;
  EXPECT_GT(makespan_of(plain.output), 0);
}

}  // namespace
