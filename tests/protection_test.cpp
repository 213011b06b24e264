// Redundancy that cannot protect an actor (its data does not fit a slot, or it
// reads more inputs than a tile has slots, so it runs once on the driver) is
// said at load, counted in the stats and the campaign table, and refused with
// --require-protection / RuntimeOptions::require_protection.
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "redflow/redflow.hpp"

namespace {

using redflow::testing::CliTest;
using redflow::testing::kDemo;
using redflow::testing::run_cli;

TEST_F(CliTest, RunWarnsAboutUnprotectedActorsAndCountsThemInStats) {
  auto r = run_cli("run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --tiles 3 --redundancy 3x-diff --slot-bytes 16 --stats " +
                   path("s.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("without the protection of redundancy 3x-diff"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("'mm'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--slot-bytes"), std::string::npos) << r.output;
  auto stats = nlohmann::json::parse(std::ifstream(path("s.json")));
  EXPECT_EQ(stats["unprotected_actors"], 4) << "mm, add, sort_lo, sort_hi (split and collect are special actors)";

  auto ok = run_cli("run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --tiles 3 --redundancy 3x-diff --stats " + path("t.json"));
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_EQ(ok.output.find("without the protection"), std::string::npos) << ok.output;
  EXPECT_EQ(nlohmann::json::parse(std::ifstream(path("t.json")))["unprotected_actors"], 0);
}

TEST_F(CliTest, RequireProtectionRefusesToRunUnprotected) {
  auto r = run_cli("run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --tiles 3 --redundancy 3x-diff --slot-bytes 16 "
                   "--require-protection --output Y=" + path("y.bin"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("'mm'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Protection is required"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(path("y.bin")));
  // Without redundancy nothing needs protecting.
  auto none = run_cli("run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --tiles 3 --slot-bytes 16 --require-protection");
  EXPECT_EQ(none.exit_code, 0) << none.output;
}

TEST_F(CliTest, CampaignTableShowsUnprotectedActors) {
  auto r = run_cli("campaign " + kDemo + "pipeline.dot --runs 3 --tiles 3 --slot-bytes 16 --redundancy none,3x-diff "
                   "--inject bitflip:p=0.5 --json " + path("c.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("unprotected"), std::string::npos) << r.output;
  auto j = nlohmann::json::parse(std::ifstream(path("c.json")));
  ASSERT_EQ(j["configurations"].size(), 2u);
  EXPECT_EQ(j["configurations"][0]["unprotected_actors"], 0) << "none asks for no protection";
  EXPECT_EQ(j["configurations"][1]["unprotected_actors"], 4);
}

TEST(Protection, ApiListsUnprotectedActorsAndRequireProtectionRefuses) {
  redflow::Registry reg = redflow::Registry::with_builtins();
  redflow::Graph g("p");
  auto a = g.input("A", 64);
  auto b = g.input("B", 64);
  auto y = g.output("Y", 64);
  g.actor("sum", "i32.add", {a, b}, y);
  redflow::RuntimeOptions o;
  o.tiles = 2;
  o.slot_bytes = 32;
  o.redundancy = redflow::Redundancy::kDoubleDiff;
  {
    redflow::Runtime rt(o);
    auto loaded = rt.load(g, reg);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    const auto& un = loaded->unprotected_actors(redflow::Redundancy::kDoubleDiff);
    ASSERT_EQ(un.size(), 1u);
    EXPECT_EQ(un[0].name, "sum");
    EXPECT_NE(un[0].reason.find("64 bytes"), std::string::npos) << un[0].reason;
    EXPECT_TRUE(loaded->unprotected_actors(redflow::Redundancy::kNone).empty());
  }
  o.require_protection = true;
  redflow::Runtime rt(o);
  auto loaded = rt.load(g, reg);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("'sum'"), std::string::npos) << loaded.status().ToString();
}

}  // namespace
