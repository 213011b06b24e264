// Redundancy and fault injection from the command line: --redundancy lists
// applied run by run, --inject, the campaign table, and Fig. 3 as DOT.
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

namespace {

using redflow::testing::CliTest;
using redflow::testing::kDemo;
using redflow::testing::run_cli;

TEST_F(CliTest, RedundancyListAppliesRunByRunAndOutputsStayCorrect) {
  auto plain = run_cli("run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --output Y=" + path("plain.bin") + " --tiles 3");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  auto r = run_cli("run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --output Y=" + path("y.bin") + " --stats " + path("s.json") +
                   " --tiles 3 --scheduler steal --redundancy none,2x-same,3x-diff --repeat 3 --inject bitflip:p=0.2,seed=4 --quarantine-after 0");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_i32("y.bin"), read_i32("plain.bin"));
  auto stats = nlohmann::json::parse(std::ifstream(path("s.json")));
  EXPECT_EQ(stats["redundancy"], "3x-diff") << "the third run uses the third configuration";
  for (const char* key : {"injected_faults", "detected_faults", "reexecutions", "quarantined_tiles"}) EXPECT_TRUE(stats.contains(key)) << key;
  EXPECT_EQ(stats["injected_faults"], stats["detected_faults"]);
}

TEST_F(CliTest, BadRedundancyAndFaultSpecsAreRefusedByName) {
  auto r = run_cli("run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --redundancy none,4x-diff");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("'4x-diff'"), std::string::npos) << r.output;
  r = run_cli("run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --inject bitflip:p=7");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("bitflip:p=7"), std::string::npos) << r.output;
  r = run_cli("run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --tiles 2 --inject faulty-tile:5");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("faulty-tile:5"), std::string::npos) << r.output;
  r = run_cli("run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --tiles 2 --redundancy 3x-diff --output Y=" + path("y.bin"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("3 compute tiles"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(path("y.bin")));
}

TEST_F(CliTest, CampaignCountsSilentCorruptionOnlyWithoutRedundancy) {
  auto r = run_cli("campaign " + kDemo + "pipeline.dot --runs 200 --tiles 3 --inject bitflip:p=0.05,seed=2 --json " + path("c.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("silent"), std::string::npos) << r.output;
  auto j = nlohmann::json::parse(std::ifstream(path("c.json")));
  ASSERT_EQ(j["configurations"].size(), 5u);
  for (const auto& c : j["configurations"]) {
    const std::string name = c["redundancy"];
    EXPECT_EQ(c["runs"], 200) << name;
    EXPECT_GT(c["injected"].get<int>(), 0) << name;
    EXPECT_EQ(c["failed"], 0) << name;
    if (name == "none") {
      EXPECT_GT(c["silent"].get<int>(), 0) << "flips without redundancy must corrupt outputs";
      EXPECT_EQ(c["detected"], 0);
    } else {
      EXPECT_EQ(c["silent"], 0) << name;
      EXPECT_EQ(c["detected"], c["injected"]) << name;
      EXPECT_EQ(c["corrected"], c["detected"]) << name;
    }
  }
  // A campaign without faults is a mistake worth naming.
  r = run_cli("campaign " + kDemo + "pipeline.dot --runs 2");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--inject"), std::string::npos) << r.output;
}

TEST_F(CliTest, GraphEmitsTheRedundancyTransformation) {
  auto r = run_cli("graph " + kDemo + "pipeline.dot --redundancy 3x-diff --tiles 3 --emit dot --out " + path("fig3.dot"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(path("fig3.dot"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* node : {"\"mm.r1\"", "\"mm.r3\"", "\"mm.compare\"", "\"P.r2\""}) EXPECT_NE(text.find(node), std::string::npos) << node;
  EXPECT_EQ(text.find("\"split_lo.r1\""), std::string::npos) << "driver actors are never replicated";
  // The written graph runs as it is: its compare actors vote.
  std::filesystem::copy_file(kDemo + "B.bin", path("B.bin"));
  std::filesystem::copy_file(kDemo + "K.bin", path("K.bin"));
  auto run = run_cli("run " + path("fig3.dot") + " --input A=" + kDemo + "A.bin --tiles 3 --output Y=" + path("y.bin"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto plain = run_cli("run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --output Y=" + path("plain.bin"));
  ASSERT_EQ(plain.exit_code, 0);
  EXPECT_EQ(read_i32("y.bin"), read_i32("plain.bin"));
}

}  // namespace
