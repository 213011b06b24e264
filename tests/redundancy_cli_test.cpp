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
  // Fault decisions depend only on the run's number, so `--repeat k` ends
  // with exactly the k-th run of the longer sequence: every run is checked.
  const std::vector<std::string> list = {"none", "2x-same", "3x-diff", "2x-diff"};
  for (std::size_t k = 1; k <= list.size(); ++k) {
    const std::string y = "y" + std::to_string(k) + ".bin", s = "s" + std::to_string(k) + ".json";
    auto r = run_cli("run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --output Y=" + path(y) + " --stats " + path(s) +
                     " --tiles 3 --scheduler steal --redundancy none,2x-same,3x-diff,2x-diff --repeat " + std::to_string(k) +
                     " --inject bitflip:p=0.2,seed=4 --quarantine-after 0");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto stats = nlohmann::json::parse(std::ifstream(path(s)));
    const std::string& config = list[k - 1];
    EXPECT_EQ(stats["redundancy"], config) << "run " << k << " uses the list's configuration " << k;
    for (const char* key : {"injected_faults", "detected_faults", "reexecutions", "quarantined_tiles"}) EXPECT_TRUE(stats.contains(key)) << key;
    if (config == "none") {
      EXPECT_EQ(stats["detected_faults"], 0);
      EXPECT_EQ(read_i32(y) == read_i32("plain.bin"), stats["injected_faults"] == 0) << "run " << k << ": a flip without redundancy shows";
    } else {
      EXPECT_EQ(read_i32(y), read_i32("plain.bin")) << "run " << k << " (" << config << ")";
      EXPECT_EQ(stats["injected_faults"], stats["detected_faults"]) << "run " << k << " (" << config << ")";
    }
  }
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

// The campaign's "silent" count sees a wrong output that the stats do not
// flag: many split -> sort blocks gathered by a collect, with few slots, where
// a rejected replica result displaced to main memory must never reach the
// output.
TEST_F(CliTest, CampaignCountsSilentRunsWithFewSlots) {
  std::string dot = "digraph sorts {\n  X [kind=input, bytes=16384];\n  Y [kind=output, bytes=16384];\n  join [actor=\"rf.collect\"];\n";
  for (int i = 0; i < 16; ++i) {
    const std::string n = std::to_string(i);
    dot += "  p" + n + " [kind=inner, bytes=1024]; s" + n + " [kind=inner, bytes=1024];\n";
    dot += "  split" + n + " [actor=\"rf.split\", args=\"offset=" + std::to_string(1024 * i) + "\"]; sort" + n + " [actor=\"i32.sort\"];\n";
    dot += "  X -> split" + n + " [port=0]; split" + n + " -> p" + n + "; p" + n + " -> sort" + n + " [port=0]; sort" + n + " -> s" + n +
           "; s" + n + " -> join [port=" + n + "];\n";
  }
  dot += "  join -> Y;\n}\n";
  write("sorts.dot", dot);
  for (const char* sched : {"heft", "steal"}) {
    auto r = run_cli("campaign " + path("sorts.dot") + " --runs 150 --tiles 3 --slots 3 --slot-bytes 1024 --scheduler " + sched +
                     " --redundancy none,2x-same,2x-diff,3x-diff --quarantine-after 0 --inject bitflip:p=0.05,seed=1 --json " + path("c.json"));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto j = nlohmann::json::parse(std::ifstream(path("c.json")));
    ASSERT_EQ(j["configurations"].size(), 4u);
    for (const auto& c : j["configurations"]) {
      const std::string name = std::string(c["redundancy"]) + "/" + sched;
      EXPECT_EQ(c["failed"], 0) << name;
      EXPECT_GT(c["injected"].get<int>(), 0) << name;
      if (c["redundancy"] == "none") {
        EXPECT_GT(c["silent"].get<int>(), 0) << name << ": the count must see wrong outputs";
      } else {
        EXPECT_EQ(c["silent"], 0) << name;
        EXPECT_GT(c["reexecutions"].get<int>(), 0) << name;
        EXPECT_EQ(c["corrected"], c["injected"]) << name;
      }
    }
  }
}

// Fault tolerance that gives up is an outcome of the faults, not a bug:
// its own category and exit status 3, and the message names the actor and
// the attempts; the summary names quarantined tiles as tiles.
TEST_F(CliTest, AGiveUpUnderFaultsExitsThreeAndTheSummaryNamesQuarantinedTiles) {
  auto r = run_cli("run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --tiles 3 --redundancy 2x-diff --quarantine-after 0" +
                   " --inject bitflip:p=1,seed=1 --output Y=" + path("y.bin"));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("redflow: error: gave up under faults: actor '"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("replicas agreed in 8 attempts"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(path("y.bin")));
  r = run_cli("run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --tiles 4 --redundancy 3x-diff --inject faulty-tile:0 --repeat 4");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("; quarantined: tile 0;"), std::string::npos) << r.output;
  r = run_cli("run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --tiles 4 --redundancy 3x-diff --inject faulty-tile:0 --quarantine-after 0");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("; quarantined: no tile;"), std::string::npos) << r.output;
  // A campaign's failed runs keep the category.
  r = run_cli("campaign " + kDemo + "pipeline.dot --runs 2 --tiles 3 --redundancy 2x-diff --quarantine-after 0 --inject bitflip:p=1,seed=1 --json " +
              path("c.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(std::ifstream(path("c.json")));
  EXPECT_EQ(j["configurations"][0]["failed"], 2);
  EXPECT_EQ(j["configurations"][0]["first_failure"].get<std::string>().rfind("gave up under faults: actor '", 0), 0u) << j.dump();
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

// The summary line names every fault the run survived, not only --stats:
// a lost tile and the actors recomputed for it, outvoted replica results,
// quarantined tiles. A run without faults says nothing of them.
TEST_F(CliTest, TheSummaryLineNamesTheFaultsSurvived) {
  const std::string run = "run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --output Y=" + path("y.bin") + " --tiles 3";
  auto plain = run_cli(run);
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_NE(plain.output.find(" steals\n"), std::string::npos) << plain.output;
  EXPECT_EQ(plain.output.find("survived"), std::string::npos) << plain.output;
  const auto expected = read_i32("y.bin");
  auto lost = run_cli(run + " --inject crash-tile:0,after=1");
  ASSERT_EQ(lost.exit_code, 0) << lost.output;
  EXPECT_EQ(read_i32("y.bin"), expected);
  const std::size_t summary = lost.output.find(" actors on 3 tiles");
  ASSERT_NE(summary, std::string::npos) << lost.output;
  const std::string line = lost.output.substr(summary, lost.output.find('\n', summary) - summary);
  EXPECT_NE(line.find("; survived: 1 tile lost"), std::string::npos) << line;
  auto voted = run_cli("run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --output Y=" + path("y.bin") +
                       " --tiles 4 --redundancy 3x-diff --inject faulty-tile:1 --quarantine-after 1");
  ASSERT_EQ(voted.exit_code, 0) << voted.output;
  EXPECT_EQ(read_i32("y.bin"), expected);
  EXPECT_NE(voted.output.find("wrong replica result"), std::string::npos) << voted.output;
  EXPECT_NE(voted.output.find("tile 1 on probation"), std::string::npos) << voted.output;
}

// The chart of an execution after the one that quarantined a tile labels
// that tile's empty row (docs/guide.md promises `tile N (quarantined)`).
TEST_F(CliTest, TheChartAfterAQuarantineLabelsTheTile) {
  auto r = run_cli("run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --tiles 4 --redundancy 3x-diff --inject faulty-tile:1 "
                   "--quarantine-after 1 --repeat 3 --gantt " + path("g.svg") + " --stats " + path("s.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(path("g.svg"));
  const std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(svg.find(">tile 1 (quarantined)</text>"), std::string::npos) << svg.substr(0, 4000);
  auto stats = nlohmann::json::parse(std::ifstream(path("s.json")));
  EXPECT_EQ(stats["quarantined_tiles"], nlohmann::json::array({1})) << stats.dump();
}

}  // namespace
