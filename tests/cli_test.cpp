// The `redflow` command as a user runs it: real processes, real files.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

namespace fs = std::filesystem;

namespace {

using redflow::testing::CliTest;
using redflow::testing::kDemo;
using redflow::testing::RunResult;
RunResult run(const std::string& args) { return redflow::testing::run_cli(args); }

// What examples/demo/pipeline.dot computes, worked out here without redflow:
// Y = rows of (A·B + K) as 8x8 int32 (wrapping), then the top four rows
// sorted and the bottom four rows sorted.
std::vector<std::int32_t> demo_expected_output() {
  auto load = [](const char* name) {
    std::ifstream in(kDemo + name, std::ios::binary);
    std::vector<std::int32_t> v(64);
    in.read(reinterpret_cast<char*>(v.data()), 256);
    EXPECT_EQ(in.gcount(), 256) << name;
    return v;
  };
  const auto a = load("A.bin"), b = load("B.bin"), k = load("K.bin");
  std::vector<std::int32_t> y(64);
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) {
      std::int64_t dot = 0;
      for (int m = 0; m < 8; ++m) dot += std::int64_t{a[i * 8 + m]} * b[m * 8 + j];
      y[i * 8 + j] = static_cast<std::int32_t>(static_cast<std::uint32_t>(dot + k[i * 8 + j]));
    }
  }
  std::sort(y.begin(), y.begin() + 32);
  std::sort(y.begin() + 32, y.end());
  return y;
}

TEST_F(CliTest, DemoRunsWithBothSchedulersAndWritesOutputsAndStats) {
  const std::vector<std::int32_t> expected = demo_expected_output();
  for (const char* sched : {"heft", "steal"}) {
    auto r = run("run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --output Y=" + path("y.bin") + " --stats " +
                 path("s.json") + " --scheduler " + sched + " --tiles 3 --repeat 5");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    // Byte for byte what the graph says (read_i32 would drop a trailing partial int).
    std::ifstream out(path("y.bin"), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
    ASSERT_EQ(bytes.size(), 256u);
    EXPECT_EQ(bytes, std::string(reinterpret_cast<const char*>(expected.data()), 256)) << sched;
    EXPECT_EQ(read_i32("y.bin"), expected) << sched;  // the same, readable when it fails
    std::ifstream in(path("s.json"));
    auto j = nlohmann::json::parse(in);
    EXPECT_EQ(j["actors_executed"], 7);
    EXPECT_EQ(j["tiles"].size(), 3u);
    EXPECT_EQ(j["scheduler"], sched);
    EXPECT_EQ(j["driver"]["actors"], 3);  // two splits and the collect are special actors
  }
}

// --resume-file: how many --repeat executions completed, so a run started
// again runs only the rest (the last always, for its outputs).
TEST_F(CliTest, AResumedRunRunsOnlyTheExecutionsLeft) {
  const std::vector<std::int32_t> expected = demo_expected_output();
  const std::string cmd = "run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --output Y=" + path("y.bin") + " --repeat 5 --resume-file " +
                          path("r.resume");
  auto whole = run(cmd);
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  EXPECT_NE(whole.output.find(", 5 run(s)"), std::string::npos) << whole.output;
  std::ifstream recorded(path("r.resume"));
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(recorded), {}), "5 5\n");
  write("r.resume", "3 5\n");  // as a start killed after its third execution left it
  std::filesystem::remove(path("y.bin"));
  auto rest = run(cmd);
  ASSERT_EQ(rest.exit_code, 0) << rest.output;
  EXPECT_NE(rest.output.find("resuming after execution 3 of 5"), std::string::npos) << rest.output;
  EXPECT_NE(rest.output.find(", 2 run(s)"), std::string::npos) << rest.output;
  EXPECT_EQ(read_i32("y.bin"), expected);
  auto again = run(cmd);  // all 5 done: the last runs again, for the outputs
  EXPECT_NE(again.output.find(", 1 run(s)"), std::string::npos) << again.output;
  write("r.resume", "3 8\n");  // another run's
  auto other = run(cmd);
  EXPECT_NE(other.output.find("is of another run"), std::string::npos) << other.output;
  EXPECT_NE(other.output.find(", 5 run(s)"), std::string::npos) << other.output;
}

TEST_F(CliTest, RunComputesWhatTheGraphSays) {
  write("g.dot", R"(digraph g {
    X [kind=input, bytes=16]; K [kind=constant, bytes=16, file="k.bin"]; S [kind=inner, bytes=16]; Y [kind=output, bytes=16];
    add [actor="i32.add"]; mul [actor="i32.mul"];
    X -> add [port=0]; K -> add [port=1]; add -> S; S -> mul [port=0]; K -> mul [port=1]; mul -> Y; })");
  write_i32("k.bin", {2, 3, 4, 5});
  write_i32("x.bin", {10, 20, 30, 40});
  auto r = run("run " + path("g.dot") + " --input X=" + path("x.bin") + " --output Y=" + path("y.bin"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_i32("y.bin"), (std::vector<std::int32_t>{24, 69, 136, 225}));
}

TEST_F(CliTest, BadInputsFailByNameAndWriteNothing) {
  write_i32("x.bin", {1, 2, 3});
  const std::string base = "run " + kDemo + "pipeline.dot --output Y=" + path("y.bin") + " --stats " + path("s.json");
  auto wrong_size = run(base + " --input A=" + path("x.bin"));
  EXPECT_NE(wrong_size.exit_code, 0);
  EXPECT_NE(wrong_size.output.find("'A'"), std::string::npos) << wrong_size.output;
  EXPECT_NE(wrong_size.output.find("12 bytes"), std::string::npos) << wrong_size.output;
  auto unknown = run(base + " --input Nope=" + path("x.bin"));
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.output.find("'Nope'"), std::string::npos) << unknown.output;
  auto missing = run(base);
  EXPECT_EQ(missing.exit_code, 2) << "a value the command line leaves out is a usage error\n" << missing.output;
  EXPECT_NE(missing.output.find("input data node 'A' was not given: add --input A=FILE"), std::string::npos) << missing.output;
  auto bad_binding = run(base + " --input A");
  EXPECT_NE(bad_binding.exit_code, 0);
  EXPECT_NE(bad_binding.output.find("NAME=FILE"), std::string::npos) << bad_binding.output;
  EXPECT_FALSE(fs::exists(path("y.bin")));
  EXPECT_FALSE(fs::exists(path("s.json")));
}

TEST_F(CliTest, MalformedAndCyclicGraphsAreRefusedByName) {
  write("bad.dot", "digraph g { A [kind=input, bytes=4]; A -> ; }");
  auto r = run("run " + path("bad.dot") + " --output Y=" + path("y.bin"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("bad.dot"), std::string::npos) << r.output;
  write("cycle.dot", R"(digraph g { d1 [kind=inner, bytes=4]; d2 [kind=inner, bytes=4];
    ping [actor="i32.sort"]; pong [actor="i32.sort"]; d1 -> ping [port=0]; ping -> d2; d2 -> pong [port=0]; pong -> d1; })");
  auto c = run("graph " + path("cycle.dot"));
  EXPECT_NE(c.exit_code, 0);
  EXPECT_NE(c.output.find("cycle"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("ping"), std::string::npos) << c.output;
  write("unknown.dot", R"(digraph g { X [kind=input, bytes=4]; Y [kind=output, bytes=4]; f [actor="no.such"]; X -> f [port=0]; f -> Y; })");
  auto u = run("run " + path("unknown.dot") + " --input X=" + path("unknown.dot"));
  EXPECT_NE(u.exit_code, 0);
  EXPECT_NE(u.output.find("no.such"), std::string::npos) << u.output;
  EXPECT_FALSE(fs::exists(path("y.bin")));
}

TEST_F(CliTest, GraphEmitDotRoundTrips) {
  auto r = run("graph " + kDemo + "pipeline.dot --emit dot --out " + path("again.dot"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The written graph names its constants by absolute path, so it runs from anywhere.
  auto a = run("run " + kDemo + "pipeline.dot --input A=" + kDemo + "A.bin --output Y=" + path("y1.bin"));
  auto b = run("run " + path("again.dot") + " --input A=" + kDemo + "A.bin --output Y=" + path("y2.bin"));
  ASSERT_EQ(a.exit_code, 0) << a.output;
  ASSERT_EQ(b.exit_code, 0) << b.output;
  EXPECT_EQ(read_i32("y1.bin"), read_i32("y2.bin"));
}

#ifdef REDFLOW_TEST_PLUGIN
TEST_F(CliTest, LibLoadsPluginActors) {
  write("neg.dot", R"(digraph g { X [kind=input, bytes=8]; Y [kind=output, bytes=8]; n [actor="test.negate"]; X -> n [port=0]; n -> Y; })");
  write_i32("x.bin", {5, -7});
  auto without = run("run " + path("neg.dot") + " --input X=" + path("x.bin"));
  EXPECT_NE(without.exit_code, 0);
  EXPECT_NE(without.output.find("test.negate"), std::string::npos);
  auto with = run("run " + path("neg.dot") + " --lib " + REDFLOW_TEST_PLUGIN + " --input X=" + path("x.bin") + " --output Y=" + path("y.bin"));
  ASSERT_EQ(with.exit_code, 0) << with.output;
  EXPECT_EQ(read_i32("y.bin"), (std::vector<std::int32_t>{-5, 7}));
  auto listed = run(std::string("actors --lib ") + REDFLOW_TEST_PLUGIN);
  EXPECT_NE(listed.output.find("test.negate"), std::string::npos);
  EXPECT_NE(listed.output.find("rf.split"), std::string::npos);
}
#endif

TEST_F(CliTest, HelpShowsDefaultsAndExamples) {
  auto r = run("run --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* s : {"--scheduler", "heft", "--tiles", "--slots", "16", "--slot-bytes", "8388608", "--repeat", "--stats", "Examples"})
    EXPECT_NE(r.output.find(s), std::string::npos) << s << "\n" << r.output;
  auto bad = run("run --scheduler fifo x.dot");
  EXPECT_NE(bad.exit_code, 0);
}

}  // namespace
