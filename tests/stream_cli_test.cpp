// `redflow stream` and `redflow place`, the real commands on the example
// programs: results printed, the profile written and read back by place, every
// algorithm, named errors, and --help with examples.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

namespace redflow::testing {
namespace {

const std::string kStreams = std::string(REDFLOW_SOURCE_DIR) + "/examples/streams/";

class StreamCli : public CliTest {};

TEST_F(StreamCli, RunsTheExamplesInBothModesAndPrintsTheResults) {
  for (const char* mode : {"pool", "threads"}) {
    auto r = run_cli("stream " + kStreams + "feedback.dot --print --mode " + std::string(mode));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("sums: 1 3 6 10 15 21 28 36 45 55\n"), std::string::npos) << r.output;
    auto s = run_cli("stream " + kStreams + "sum.dot --print --mode " + std::string(mode));
    ASSERT_EQ(s.exit_code, 0) << s.output;
    EXPECT_NE(s.output.find("total: 1498500\n"), std::string::npos) << s.output;  // sum of 3i, i < 1000
  }
}

TEST_F(StreamCli, TheProfileFeedsEveryPlacementAlgorithm) {
  auto r = run_cli("stream " + kStreams + "sum.dot --profile " + path("p.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(path("p.json"));
  auto profile = nlohmann::json::parse(in);
  ASSERT_EQ(profile["operators"].size(), 7u);
  for (const auto& s : profile["streams"])
    EXPECT_EQ(s["tokens"].get<int>(), s["from"] == "sum" ? 1 : 1000) << s.dump();
  for (const char* algo : {"naive", "topological", "smart", "smart_min", "smart_max"}) {
    auto p = run_cli("place " + kStreams + "sum.dot --nodes 2 --algo " + std::string(algo) + " --profile " + path("p.json"));
    ASSERT_EQ(p.exit_code, 0) << algo << "\n" << p.output;
    EXPECT_NE(p.output.find("edge cut"), std::string::npos) << p.output;
    // Every operator on exactly one of the two nodes.
    for (const char* op : {" a", " b", " add", " dup", " all", " sum", " total"}) {
      std::size_t hits = 0;
      for (auto at = p.output.find("node "); at != std::string::npos; at = p.output.find("node ", at + 1)) {
        const auto end = p.output.find('\n', at);
        const std::string line = p.output.substr(at, end - at) + " ";
        hits += line.find(std::string(op) + " ") != std::string::npos;
      }
      EXPECT_EQ(hits, 1u) << algo << " placed '" << op << "' " << hits << " times\n" << p.output;
    }
  }
}

TEST_F(StreamCli, BadInputIsANamedError) {
  write("bad.dot", "digraph g { a [operator=\"counter\"]; b [operator=\"add\"]; a -> b [token=8]; }");
  auto r = run_cli("stream " + path("bad.dot"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("input port 1 of 'b' (add) has 0 streams"), std::string::npos) << r.output;
  auto a = run_cli("place " + kStreams + "sum.dot --algo fastest");
  EXPECT_NE(a.exit_code, 0);
  EXPECT_NE(a.output.find("fastest"), std::string::npos) << a.output;
  auto m = run_cli("place " + kStreams + "sum.dot --algo smart_min");
  EXPECT_EQ(m.exit_code, 1);
  EXPECT_NE(m.output.find("give --profile"), std::string::npos) << m.output;
  for (const char* sub : {"stream", "place"}) {
    auto h = run_cli(std::string(sub) + " --help");
    EXPECT_EQ(h.exit_code, 0);
    EXPECT_NE(h.output.find("Examples:\n  redflow " + std::string(sub)), std::string::npos) << h.output;
  }
}

}  // namespace
}  // namespace redflow::testing
