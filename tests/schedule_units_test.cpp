// `redflow schedule` says what its estimates are: times with units, and the
// model that turns `work` hints and bytes into them.
#include "cli_helpers.hpp"

namespace {

using redflow::testing::CliTest;
using redflow::testing::kDemo;
using redflow::testing::run_cli;

TEST_F(CliTest, ScheduleStatesItsModelAndUnits) {
  auto r = run_cli("schedule " + kDemo + "pipeline.dot --tiles 2 --no-calibrate");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto header = r.output.find("estimated makespan ");
  ASSERT_NE(header, std::string::npos) << r.output;
  const std::string line = r.output.substr(header, r.output.find('\n', header) - header);
  EXPECT_TRUE(line.ends_with(" ns") || line.ends_with(" µs") || line.ends_with(" ms") || line.ends_with(" s")) << line;
  EXPECT_NE(r.output.find("1e+09 operations/s per core"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("10 GB/s"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("overhead"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("not modelled (--no-calibrate)"), std::string::npos) << r.output;
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

// Scoped XDG_CACHE_HOME, so the test neither reads nor writes the user's cache.
class CacheHome {
 public:
  explicit CacheHome(const std::string& dir) {
    const char* old = std::getenv("XDG_CACHE_HOME");
    had_ = old != nullptr;
    if (had_) saved_ = old;
    setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  }
  ~CacheHome() {
    if (had_) setenv("XDG_CACHE_HOME", saved_.c_str(), 1); else unsetenv("XDG_CACHE_HOME");
  }

 private:
  bool had_ = false;
  std::string saved_;
};

// The default model is calibrated against this machine, measured at first use and cached.
TEST_F(CliTest, ScheduleCalibratesByDefaultMeasuringOnceAndCaching) {
  CacheHome cache(path("cache"));
  auto bare = run_cli("schedule " + kDemo + "pipeline.dot --tiles 2 --no-calibrate");
  auto first = run_cli("schedule " + kDemo + "pipeline.dot --tiles 2");
  auto second = run_cli("schedule " + kDemo + "pipeline.dot --tiles 2");
  auto again = run_cli("schedule " + kDemo + "pipeline.dot --tiles 2 --calibrate");
  ASSERT_EQ(bare.exit_code, 0) << bare.output;
  ASSERT_EQ(first.exit_code, 0) << first.output;
  ASSERT_EQ(second.exit_code, 0) << second.output;
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(first.output.find("measured now"), std::string::npos) << first.output;
  EXPECT_NE(second.output.find("measured earlier"), std::string::npos) << second.output;
  EXPECT_NE(again.output.find("measured now"), std::string::npos) << again.output;  // --calibrate ignores the cache
  EXPECT_TRUE(std::filesystem::exists(path("cache") + "/redflow")) << first.output;
  // 7 actors, 5 of them not zero-copy: each adds the measured overhead.
  EXPECT_GT(makespan_of(second.output), makespan_of(bare.output)) << second.output << "\n" << bare.output;
  EXPECT_GT(makespan_of(bare.output), 0);
}

TEST_F(CliTest, ScheduleRefusesCalibrateWithNoCalibrate) {
  auto r = run_cli("schedule " + kDemo + "pipeline.dot --calibrate --no-calibrate");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("contradict"), std::string::npos) << r.output;
}

}  // namespace
