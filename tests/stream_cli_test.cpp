// `redflow stream` and `redflow place`, the real commands on the example
// programs: results printed, the profile written and read back by place, every
// algorithm, named errors, and --help with examples.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <set>

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

// --stream-buffer bounds every stream: one token (8 bytes) still gives the
// same result (Parks' rule grows what the program needs), 0 is unbounded,
// and a value that is not a byte count is refused by name.
TEST_F(StreamCli, StreamBufferBoundsStreamsAndKeepsTheResult) {
  for (const char* bytes : {"8", "0", "65536"}) {
    auto r = run_cli("stream " + kStreams + "sum.dot --print --stream-buffer " + std::string(bytes));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("total: 1498500\n"), std::string::npos) << "--stream-buffer " << bytes << "\n" << r.output;
  }
  auto bad = run_cli("stream " + kStreams + "sum.dot --stream-buffer lots");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("--stream-buffer"), std::string::npos) << bad.output;
}

// --output NAME=FILE writes a collect operator's tokens, raw or as .npy,
// checked before anything runs; nothing is written when the run fails.
TEST_F(StreamCli, OutputWritesCollectedTokensRawOrAsNpy) {
  auto r = run_cli("stream " + kStreams + "sum.dot --output total=" + path("total.bin") + " -o all=" + path("all.npy"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream raw(path("total.bin"), std::ios::binary);
  const std::string total((std::istreambuf_iterator<char>(raw)), std::istreambuf_iterator<char>());
  ASSERT_EQ(total.size(), 8u);
  std::uint64_t v = 0;
  std::memcpy(&v, total.data(), 8);
  EXPECT_EQ(v, 1498500u);  // sum of 3i, i < 1000
  std::ifstream npy(path("all.npy"), std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(npy)), std::istreambuf_iterator<char>());
  ASSERT_GT(all.size(), 8000u);
  EXPECT_EQ(all.substr(0, 6), "\x93NUMPY");
  EXPECT_NE(all.find("'descr': '<u8'"), std::string::npos) << all.substr(0, 128);
  EXPECT_NE(all.find("'shape': (1000,)"), std::string::npos) << all.substr(0, 128);
  std::memcpy(&v, all.data() + all.size() - 8, 8);
  EXPECT_EQ(v, 3u * 999u);  // the last sum, 999 + 1998
  // Not a collect operator: refused by name before the run, nothing written.
  auto bad = run_cli("stream " + kStreams + "sum.dot --output add=" + path("add.bin") + " --output total=" + path("t2.bin"));
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--output add=" + path("add.bin") + ": the program has no collect operator 'add' (its collect operators: all, total)"),
            std::string::npos)
      << bad.output;
  EXPECT_FALSE(std::filesystem::exists(path("t2.bin")));
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
  auto w = run_cli("worker --cores 2");
  EXPECT_EQ(w.exit_code, 2);
  EXPECT_NE(w.output.find("give the driver's endpoint: --connect ADDR or --address-file FILE"), std::string::npos) << w.output;
  auto l = run_cli("stream " + kStreams + "sum.dot --min-workers 2");
  EXPECT_EQ(l.exit_code, 2);
  EXPECT_NE(l.output.find("--min-workers needs --listen ADDR or --address-file FILE"), std::string::npos) << l.output;
  auto far = run_cli("stream " + kStreams + "sum.dot --listen tcp://0.0.0.0:7000 --min-workers 2");
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_NE(far.output.find("--key"), std::string::npos) << "listening beyond loopback needs keys\n" << far.output;
  auto m = run_cli("place " + kStreams + "sum.dot --algo smart_min");
  EXPECT_EQ(m.exit_code, 2);
  EXPECT_NE(m.output.find("--algo smart_min needs --profile FILE.json"), std::string::npos) << m.output;
  for (const char* sub : {"stream", "place", "worker"}) {
    auto h = run_cli(std::string(sub) + " --help");
    EXPECT_EQ(h.exit_code, 0);
    EXPECT_NE(h.output.find("Examples:\n  redflow " + std::string(sub)), std::string::npos) << h.output;
  }
}

// Three starters of one command line with --address-file: one becomes the
// driver, the two others its nodes; the driver prints the same result as a
// local run, and which operators ran on which node.
TEST_F(StreamCli, AnAddressFileMakesOneStarterTheDriverAndTheOthersItsNodes) {
  const std::string cmd = "stream " + kStreams + "sum.dot --print --address-file " + path("job.addr") + " --min-workers 2 --place topological";
  auto r = run_cli(cmd + " > " + path("o1") + " 2>&1 & " + REDFLOW_CLI + " " + cmd + " > " + path("o2") + " 2>&1 & " + REDFLOW_CLI + " " + cmd +
                   " > " + path("o3") + " 2>&1; wait");
  int drivers = 0;
  for (const char* o : {"o1", "o2", "o3"}) {
    std::ifstream in(path(o));
    const std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (out.find("(2 nodes, topological placement)") == std::string::npos) {
      EXPECT_NE(out.find("serves a stream node"), std::string::npos) << out;
      continue;
    }
    ++drivers;
    EXPECT_NE(out.find("total: 1498500\n"), std::string::npos) << out;
    EXPECT_NE(out.find("  node 0 '"), std::string::npos) << out;
    EXPECT_NE(out.find("  node 1 '"), std::string::npos) << out;
  }
  EXPECT_EQ(drivers, 1);
  EXPECT_FALSE(fs::exists(path("job.addr"))) << "the driver removes its address file";
}

// A node killed mid-run: the driver goes on from its last checkpoint on the
// two others, prints the right result and says what happened, as
// docs/streams.md "When a node is lost" shows.
TEST_F(StreamCli, ANodeKilledMidRunIsSurvivedAndReported) {
  {
    std::ofstream dot(path("paced.dot"));
    dot << "digraph paced { src [operator=\"counter\", args=\"n=6000 start=1 rate=3000\"]; x [operator=\"scale\", args=\"k=2\"];\n"
           "s [operator=\"sum\"]; total [operator=\"collect\"]; src -> x [token=8]; x -> s [token=8]; s -> total [token=8]; }\n";
  }
  // The driver listens on a free port and says which; the workers connect there.
  const std::string driver = path("driver.txt");
  const std::string worker = std::string(" ") + REDFLOW_CLI + " worker --connect $ep --cores 1 --name ";
  auto r = run_cli("stream " + path("paced.dot") + " --print --listen 'tcp://127.0.0.1:*' --min-workers 3 --heartbeat-timeout 2" +
                   " --checkpoint-every 0.2 --place naive > " + driver + " 2>&1 & for i in $(seq 200); do ep=$(sed -n 's/.*listening on \\([^;]*\\);.*/\\1/p' " +
                   driver + " | head -1); [ -n \"$ep\" ] && break; sleep 0.05; done;" + worker + "w0 > /dev/null 2>&1 &" + worker +
                   "w1 > /dev/null 2>&1 & victim=$!;" + worker + "w2 > /dev/null 2>&1 & sleep 1.2; kill -9 $victim; wait");
  std::ifstream in(driver);
  const std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::uint64_t total = 0;
  for (std::uint64_t i = 1; i <= 6000; ++i) total += 2 * i;
  EXPECT_NE(out.find("total: " + std::to_string(total) + "\n"), std::string::npos) << out;
  EXPECT_NE(out.find("(3 nodes, naive placement)"), std::string::npos) << out;
  EXPECT_NE(out.find("  node 'w1' lost "), std::string::npos) << out;
  EXPECT_NE(out.find("the others went on from checkpoint "), std::string::npos) << out;
  EXPECT_NE(out.find("  checkpoints: "), std::string::npos) << out;
}

// Over two workers the report says what each node sent straight to the
// other; with --no-direct-links nothing goes node to node and the driver
// carries the tokens. The result is the same both ways.
TEST_F(StreamCli, TheReportSaysWhatWentNodeToNodeAndNoDirectLinksSendsThroughTheDriver) {
  {
    std::ofstream dot(path("pipe.dot"));
    dot << "digraph pipe { src [operator=\"counter\", args=\"n=50000 start=1\"]; x [operator=\"scale\", args=\"k=2\"];\n"
           "s [operator=\"sum\"]; total [operator=\"collect\"]; src -> x [token=8]; x -> s [token=8]; s -> total [token=8]; }\n";
  }
  std::uint64_t total = 0;
  for (std::uint64_t i = 1; i <= 50000; ++i) total += 2 * i;
  // The bytes each node sent straight to other nodes, summed, from the driver's report.
  auto straight = [](const std::string& out) {
    std::uint64_t sum = 0;
    for (std::size_t at = out.find(" bytes straight to other nodes"); at != std::string::npos; at = out.find(" bytes straight to other nodes", at + 1)) {
      const std::size_t from = out.rfind(' ', at - 1) + 1;
      sum += std::stoull(out.substr(from, at - from));
    }
    return sum;
  };
  for (const bool direct : {true, false}) {
    const std::string driver = path(direct ? "direct.txt" : "relay.txt");
    const std::string worker = std::string(" ") + REDFLOW_CLI + " worker --connect $ep --cores 1 --name ";
    run_cli("stream " + path("pipe.dot") + " --print --listen 'tcp://127.0.0.1:*' --min-workers 2 --place topological" +
            (direct ? "" : " --no-direct-links") + " > " + driver + " 2>&1 & for i in $(seq 200); do ep=$(sed -n 's/.*listening on \\([^;]*\\);.*/\\1/p' " +
            driver + " | head -1); [ -n \"$ep\" ] && break; sleep 0.05; done;" + worker + "w0 > /dev/null 2>&1 &" + worker + "w1 > /dev/null 2>&1; wait");
    std::ifstream in(driver);
    const std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(out.find("total: " + std::to_string(total) + "\n"), std::string::npos) << out;
    ASSERT_NE(out.find(" bytes straight to other nodes"), std::string::npos) << out;
    if (direct) {
      EXPECT_GE(straight(out), 50000u * 8) << "topological placement on 2 nodes cuts the stream from x to s:\n" << out;
    } else {
      EXPECT_EQ(straight(out), 0u) << out;
    }
  }
}

// --trace and --gantt show when each operator fired: a thread per operator
// in the trace, a box per firing span in the chart.
TEST_F(StreamCli, TraceAndGanttShowEveryOperator) {
  auto r = run_cli("stream " + kStreams + "compute_heavy.dot --trace " + path("t.json") + " --gantt " + path("t.svg"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(path("t.json"));
  auto trace = nlohmann::json::parse(in);
  std::set<std::string> threads, sliced;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") threads.insert(e["args"]["name"].get<std::string>());
    if (e["ph"] == "X") {
      sliced.insert(e["name"].get<std::string>());
      EXPECT_GE(e["dur"].get<double>(), 0.0);
    }
  }
  EXPECT_EQ(threads.size(), 20u);
  EXPECT_EQ(sliced, threads) << "every operator fired at least once";
  std::ifstream svg(path("t.svg"));
  const std::string text((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("<svg"), std::string::npos);
  EXPECT_NE(text.find("b3s3"), std::string::npos) << "the chart names the operators";
}

}  // namespace
}  // namespace redflow::testing
