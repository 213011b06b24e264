// An actor's own ctx.fail() is reported as the actor's error, not as an
// internal error of the runtime, and a failed run still writes the --trace
// and --gantt asked for, marked as failed (outputs and stats stay unwritten).
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "redflow/redflow.hpp"

namespace {

using redflow::testing::CliTest;
using redflow::testing::run_cli;

// test.refuse always fails (ctx.fail).
const char* kFailingGraph = R"(digraph f {
  Y [kind=output, bytes=16];
  filler [actor="test.refuse"];
  filler -> Y;
})";

TEST_F(CliTest, ActorFailureIsTheActorsErrorAndTheTraceIsWrittenMarkedFailed) {
  write("f.dot", kFailingGraph);
  auto r = run_cli("run " + path("f.dot") + " --lib " + REDFLOW_TEST_PLUGIN + " --tiles 1 --output Y=" + path("y.bin") + " --stats " +
                   path("s.json") + " --trace " + path("t.json") + " --gantt " + path("g.svg"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("user code error: actor 'filler' failed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("refused on purpose"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(path("y.bin")));
  EXPECT_FALSE(std::filesystem::exists(path("s.json")));
  ASSERT_TRUE(std::filesystem::exists(path("t.json"))) << r.output;
  auto trace = nlohmann::json::parse(std::ifstream(path("t.json")));
  ASSERT_TRUE(trace["otherData"].contains("failure")) << trace["otherData"].dump();
  EXPECT_NE(trace["otherData"]["failure"].get<std::string>().find("'filler'"), std::string::npos);
  std::ifstream svg(path("g.svg"));
  ASSERT_TRUE(svg.good());
  std::string text((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("FAILED"), std::string::npos);
}

TEST(FailureReport, ApiGivesActorFailedCode) {
  redflow::Registry reg = redflow::Registry::with_builtins();
  reg.add("bad", [](redflow::ActorContext& ctx) { ctx.fail("refuses"); });
  redflow::Graph g("f");
  auto y = g.output("Y", 8);
  g.actor("a", "bad", {}, y);
  redflow::Runtime rt({.tiles = 1, .trace = true});
  auto loaded = rt.load(g, reg);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto out = loaded->execute({});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), redflow::Status::Code::kActorFailed) << out.status().ToString();
  EXPECT_NE(loaded->last_trace().failure.find("refuses"), std::string::npos);
}

}  // namespace
