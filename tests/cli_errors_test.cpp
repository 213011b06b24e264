// The command line's own errors teach: the nearest flag or subcommand, the
// operating system's reason a file cannot be read, and no node bound twice.
#include "cli_helpers.hpp"

namespace {

using redflow::testing::CliTest;
using redflow::testing::kDemo;
using redflow::testing::run_cli;

TEST_F(CliTest, MisspeltFlagSuggestsTheNearest) {
  auto r = run_cli("run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --tile 3");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("unknown option '--tile' (did you mean '--tiles'?)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("redflow run --help"), std::string::npos) << r.output;
}

TEST_F(CliTest, MisspeltSubcommandSuggestsTheNearest) {
  auto r = run_cli("rnu " + kDemo + "pipeline.dot");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("unknown command 'rnu' (did you mean 'run'?)"), std::string::npos) << r.output;
}

TEST_F(CliTest, MissingFilesSayWhy) {
  auto g = run_cli("run " + path("nope.dot"));
  EXPECT_NE(g.exit_code, 0);
  EXPECT_NE(g.output.find("cannot open '" + path("nope.dot") + "': No such file or directory"), std::string::npos) << g.output;
  auto i = run_cli("run " + kDemo + "pipeline.dot --input A=" + path("missing.bin"));
  EXPECT_EQ(i.exit_code, 2) << i.output;  // a file named that cannot be read: a usage error
  EXPECT_NE(i.output.find("--input A=" + path("missing.bin") + ": cannot open '" + path("missing.bin") + "': No such file or directory"),
            std::string::npos)
      << i.output;
}

TEST_F(CliTest, ANodeBoundTwiceIsRefused) {
  auto o = run_cli("run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --output Y=" + path("a.bin") + " --output Y=" + path("b.bin"));
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("output data node 'Y' is given twice"), std::string::npos) << o.output;
  EXPECT_FALSE(std::filesystem::exists(path("a.bin")));
  EXPECT_FALSE(std::filesystem::exists(path("b.bin")));
  auto i = run_cli("run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --input A=" + kDemo + "A.bin");
  EXPECT_EQ(i.exit_code, 2) << i.output;
  EXPECT_NE(i.output.find("input data node 'A' is given twice"), std::string::npos) << i.output;
}

// A repeatable flag takes one value each time: the graph after it is the graph.
TEST_F(CliTest, RepeatableFlagsTakeOneValueEach) {
  auto inject = run_cli("run --inject=bitflip:p=0.2 " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --tiles 2");
  EXPECT_EQ(inject.exit_code, 0) << inject.output;
  auto spaced = run_cli("run --inject bitflip:p=0.2 --inject slow-tile:0,factor=2 " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --tiles 2");
  EXPECT_EQ(spaced.exit_code, 0) << spaced.output;
  auto lib = run_cli(std::string("run --lib ") + REDFLOW_TEST_PLUGIN + " " + kDemo + "pipeline.dot -i A=" + kDemo + "A.bin --tiles 2");
  EXPECT_EQ(lib.exit_code, 0) << lib.output;
  // Two values after one --input: the second is not taken as another binding.
  auto two = run_cli("run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin " + path("extra.dot"));
  EXPECT_EQ(two.exit_code, 2) << two.output;
}

}  // namespace
