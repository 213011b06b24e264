// `redflow graph` checks what `run` checks, with the same runtime flags:
// memory fit, the tiles a *-diff configuration needs, required protection.
#include "cli_helpers.hpp"

namespace {

using redflow::testing::CliTest;
using redflow::testing::kDemo;
using redflow::testing::run_cli;

TEST_F(CliTest, GraphRefusesWhatRunRefuses) {
  write("huge.dot", R"(digraph huge {
  X [kind=input, bytes=1000000000000];
  Y [kind=output, bytes=1000000000000];
  a [actor="i32.sort"];
  X -> a [port=0];
  a -> Y;
})");
  auto g = run_cli("graph " + path("huge.dot"));
  EXPECT_EQ(g.exit_code, 1) << g.output;
  EXPECT_NE(g.output.find("data node 'X' needs 1000000000000 bytes"), std::string::npos) << g.output;
  EXPECT_EQ(g.output.find("valid"), std::string::npos) << g.output;
  auto r = run_cli("run " + path("huge.dot"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("data node 'X' needs 1000000000000 bytes"), std::string::npos) << r.output;
}

TEST_F(CliTest, GraphChecksTheRuntimeFlagsLikeRun) {
  auto tiles = run_cli("graph " + kDemo + "pipeline.dot --redundancy 3x-diff --tiles 2");
  EXPECT_EQ(tiles.exit_code, 2) << "flags that need each other are a usage error\n" << tiles.output;
  EXPECT_NE(tiles.output.find("3 compute tiles"), std::string::npos) << tiles.output;
  auto run = run_cli("run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --redundancy 3x-diff --tiles 2");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("3 compute tiles"), std::string::npos) << run.output;
  auto prot = run_cli("graph " + kDemo + "pipeline.dot --redundancy 3x-diff --tiles 3 --slot-bytes 16 --require-protection");
  EXPECT_EQ(prot.exit_code, 2) << prot.output;
  EXPECT_NE(prot.output.find("'mm'"), std::string::npos) << prot.output;
  auto ok = run_cli("graph " + kDemo + "pipeline.dot --redundancy 3x-diff --tiles 3");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("valid"), std::string::npos) << ok.output;
}

}  // namespace
