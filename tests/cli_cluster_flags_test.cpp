// The cluster flags of `run`, `stream` and `spits`: one set of names and help
// (tools/cluster_flags.cpp), the old names still accepted but not shown.
#include <gtest/gtest.h>

#include <string>

#include "cli_helpers.hpp"

namespace redflow::testing {
namespace {

class ClusterFlagsCli : public CliTest {};

// The help line of `flag` in `help`, from the flag to the end of its line.
std::string help_line(const std::string& help, const std::string& flag) {
  const auto at = help.find("  " + flag + " ");
  if (at == std::string::npos) return {};
  return help.substr(at, help.find('\n', at) - at);
}

TEST_F(ClusterFlagsCli, RunStreamAndSpitsShowTheSameFlagsAndTheOldNamesNot) {
  std::string heartbeat_help;
  for (const char* sub : {"run", "stream", "spits"}) {
    auto h = run_cli(std::string(sub) + " --help");
    ASSERT_EQ(h.exit_code, 0) << h.output;
    for (const char* flag : {"--listen", "--min-workers", "--wait", "--heartbeat-timeout", "--key", "--authorized-keys"})
      EXPECT_NE(help_line(h.output, flag), "") << sub << " lacks " << flag << "\n" << h.output;
    for (const char* old : {"--min-tiles", "--max-tiles", "--tile-wait"})
      EXPECT_EQ(h.output.find(old), std::string::npos) << sub << " shows " << old << "\n" << h.output;
    const std::string line = help_line(h.output, "--heartbeat-timeout");
    if (heartbeat_help.empty()) heartbeat_help = line;
    EXPECT_EQ(line.substr(0, 40), heartbeat_help.substr(0, 40)) << sub;
  }
  EXPECT_NE(help_line(run_cli("run --help").output, "--max-workers"), "") << "graph runs take joins";
}

TEST_F(ClusterFlagsCli, TheOldNamesStillWork) {
  const std::string demo = std::string(REDFLOW_SOURCE_DIR) + "/examples/demo/";
  auto r = run_cli("run " + demo + "pipeline.dot --input A=" + demo + "A.bin --listen 'tcp://127.0.0.1:*' --min-tiles 2 --tile-wait 0.5");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("waiting for 2 remote tile(s)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("0 came"), std::string::npos) << r.output;
  r = run_cli("run " + demo + "pipeline.dot --input A=" + demo + "A.bin --listen 'tcp://127.0.0.1:*' --min-tiles 2 --max-tiles 1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("max_workers (--max-workers) 1 is below min_workers (--min-workers) 2"), std::string::npos) << r.output;
  auto s = run_cli("stream " + std::string(REDFLOW_SOURCE_DIR) + "/examples/streams/sum.dot --min-tiles 2");
  EXPECT_EQ(s.exit_code, 2) << s.output;
  EXPECT_NE(s.output.find("--min-workers needs --listen ADDR or --address-file FILE"), std::string::npos) << s.output;
}

}  // namespace
}  // namespace redflow::testing
