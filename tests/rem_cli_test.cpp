// `redflow rem` as a user runs it: scheduler processes against a real
// memcached, some killed at seeded random moments, new ones started later;
// the outputs must equal the driver-mode run of the same graph.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "cli_helpers.hpp"
#include "rem_servers.hpp"

namespace redflow::testing {
namespace {

// Layers of 256x256 int32 matrix products, each reading two products of the
// layer before: enough work (about half a second) that kills land mid-run.
std::string matmul_mesh(int layers, int width, std::size_t n) {
  const std::size_t bytes = n * n * 4;
  std::string dot = "digraph mesh {\n";
  dot += fmt::format("  A [kind=input, bytes={}];\n  B [kind=input, bytes={}];\n", bytes, bytes);
  auto node = [](int l, int i) { return fmt::format("m{}_{}", l, i); };
  for (int l = 0; l < layers; ++l)
    for (int i = 0; i < width; ++i) {
      bool out = l + 1 == layers;
      dot += fmt::format("  {} [kind={}, bytes={}];\n  t{}_{} [actor=\"i32.matmul\"];\n", node(l, i), out ? "output" : "inner", bytes, l, i);
      std::string a = l == 0 ? (i % 2 ? "A" : "B") : node(l - 1, i);
      std::string b = l == 0 ? (i % 2 ? "B" : "A") : node(l - 1, (i + 1) % width);
      dot += fmt::format("  {} -> t{}_{} [port=0];\n  {} -> t{}_{} [port=1];\n  t{}_{} -> {};\n", a, l, i, b, l, i, l, i, node(l, i));
    }
  return dot + "}\n";
}


// Waits for `pid` at most `seconds`; kills it if it is still running then.
int wait_bounded(pid_t pid, int seconds) {
  for (int i = 0; i < seconds * 100; ++i) {
    int st;
    if (waitpid(pid, &st, WNOHANG) == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    usleep(10'000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -2;
}

// The processes whose parent is `parent`, from /proc.
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // pid (comm) state ppid ...: comm may hold spaces, so read after its ')'.
    std::istringstream rest(line.substr(line.rfind(')') + 1));
    char state;
    pid_t ppid = 0;
    if (rest >> state >> ppid && ppid == parent) out.push_back(static_cast<pid_t>(std::stoi(name)));
  }
  return out;
}

class RemCliTest : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    ASSERT_EQ(start_memcached(mc_, 256), "");  // 3 runs of 96 labels of 256 KiB each
    store_ = "memcached://127.0.0.1:" + std::to_string(mc_.port());
    constexpr int kLayers = 12, kWidth = 8;
    constexpr std::size_t kN = 256;
    write("mesh.dot", matmul_mesh(kLayers, kWidth, kN));
    std::mt19937 rng(5);
    std::vector<std::int32_t> a(kN * kN), b(kN * kN);
    for (auto& x : a) x = static_cast<std::int32_t>(rng() % 7);
    for (auto& x : b) x = static_cast<std::int32_t>(rng() % 7);
    write_i32("a.bin", a);
    write_i32("b.bin", b);
    std::string outs;
    for (int i = 0; i < kWidth; ++i) outs += fmt::format(" --output m{}_{}={}", kLayers - 1, i, path(fmt::format("drv{}.bin", i)));
    auto r = run_cli("run " + path("mesh.dot") + " --input A=" + path("a.bin") + " --input B=" + path("b.bin") + outs + " --tiles 2");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    width_ = kWidth;
    layers_ = kLayers;
  }
  std::vector<std::string> rem_args(const std::string& instance, bool with_inputs) {
    std::vector<std::string> v = {"rem", path("mesh.dot"), "--store", store_, "--instance", instance, "--timeout", "60"};
    if (with_inputs) v.insert(v.end(), {"--input", "A=" + path("a.bin"), "--input", "B=" + path("b.bin")});
    return v;
  }
  void expect_outputs_equal_driver(const std::string& instance) {
    std::string outs;
    for (int i = 0; i < width_; ++i) outs += fmt::format(" --output m{}_{}={}", layers_ - 1, i, path(fmt::format("rem{}.bin", i)));
    auto r = run_cli("rem " + path("mesh.dot") + " --store " + store_ + " --instance " + instance + " --timeout 60" + outs);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    for (int i = 0; i < width_; ++i) {
      auto drv = read_i32(fmt::format("drv{}.bin", i));
      ASSERT_FALSE(drv.empty());
      EXPECT_EQ(read_i32(fmt::format("rem{}.bin", i)), drv) << "output " << i;
    }
  }
  ServerProcess mc_;
  std::string store_;
  int width_ = 0, layers_ = 0;
};

TEST_F(RemCliTest, ProcsOnMemcachedAndInprocEqualDriverMode) {
  std::string outs;
  for (int i = 0; i < width_; ++i) outs += fmt::format(" --output m{}_{}={}", layers_ - 1, i, path(fmt::format("rem{}.bin", i)));
  const std::string in = " --input A=" + path("a.bin") + " --input B=" + path("b.bin");
  for (std::string store : {store_, std::string("inproc")}) {
    auto r = run_cli("rem " + path("mesh.dot") + " --store " + store + " --procs 3 --timeout 60 --stats " + path("s.json") + in + outs);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("3 scheduler(s)"), std::string::npos) << r.output;
    for (int i = 0; i < width_; ++i) EXPECT_EQ(read_i32(fmt::format("rem{}.bin", i)), read_i32(fmt::format("drv{}.bin", i)));
    std::ifstream s(path("s.json"));
    std::string json((std::istreambuf_iterator<char>(s)), std::istreambuf_iterator<char>());
    EXPECT_NE(json.find("\"duplicates\""), std::string::npos) << json;
  }
}

TEST_F(RemCliTest, KilledSchedulersAreReplacedAndTheOutputsStayRight) {
  std::mt19937 rng(2026);  // seeded: the kill moments are the same on every run
  for (int round = 0; round < 2; ++round) {
    const std::string inst = "kill" + std::to_string(round);
    std::vector<pid_t> first;
    for (int i = 0; i < 4; ++i) first.push_back(testing::spawn_cli(rem_args(inst, true), path(fmt::format("first{}_{}.log", round, i))));
    // Round 0 kills half of them, round 1 all of them, each at its own random moment.
    const int kills = round == 0 ? 2 : 4;
    std::vector<int> delays;
    for (int i = 0; i < kills; ++i) delays.push_back(static_cast<int>(rng() % 150) + 10);
    std::sort(delays.begin(), delays.end());
    int slept = 0;
    for (int i = 0; i < kills; ++i) {
      usleep(static_cast<useconds_t>((delays[i] - slept) * 1000));
      slept = delays[i];
      kill(first[i], SIGKILL);
    }
    // New schedulers join later: one restarted with the inputs (all first ones may have died before
    // writing them), one with only the instance id; together they finish the run.
    std::vector<pid_t> later;
    for (int i = 0; i < 2; ++i) later.push_back(testing::spawn_cli(rem_args(inst, i == 0), path(fmt::format("later{}_{}.log", round, i))));
    int killed_mid_run = 0;
    for (int i = 0; i < 4; ++i) {
      int rc = wait_bounded(first[i], 60);
      if (i >= kills) {
        EXPECT_EQ(rc, 0) << "survivor " << i;
      } else {
        killed_mid_run += rc == -1;  // died of the signal, not of having finished
      }
    }
    EXPECT_GT(killed_mid_run, 0) << "every kill came after its process had finished: the test would prove nothing";
    for (pid_t p : later) EXPECT_EQ(wait_bounded(p, 60), 0);
    expect_outputs_equal_driver(inst);
  }
}

// `redflow rem --procs 3` on memcached, SIGKILL to 1 and then to 2 of its
// scheduler processes at seeded moments, 10 runs each: the command replaces
// every process killed before the run finished, says so, exits 0 and writes
// the outputs the driver gives.
TEST_F(RemCliTest, ProcessesOfProcsKilledMidRunAreReplacedAndTheRunExitsZero) {
  std::mt19937 rng(38);  // seeded: the same kill moments and victims on every run
  auto read_text = [](const std::string& file) {
    std::ifstream in(file);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  int landed = 0;
  for (int kills : {1, 2}) {
    for (int trial = 0; trial < 10; ++trial) {
      SCOPED_TRACE(fmt::format("{} killed, run {}", kills, trial));
      const std::string inst = fmt::format("procs{}_{}", kills, trial), log = path(inst + ".log");
      std::vector<std::string> args = rem_args(inst, true);
      args.insert(args.end(), {"--procs", "3"});
      for (int i = 0; i < width_; ++i) args.insert(args.end(), {"--output", fmt::format("m{}_{}={}", layers_ - 1, i, path(fmt::format("{}_{}.bin", inst, i)))});
      const pid_t parent = testing::spawn_cli(args, log);
      std::vector<pid_t> kids;
      for (int i = 0; i < 2000 && kids.size() < 3; ++i) {
        usleep(5'000);
        kids = children_of(parent);
      }
      ASSERT_EQ(kids.size(), 3u) << "the command did not start its 3 scheduler processes";
      usleep(static_cast<useconds_t>(rng() % 100) * 1000);
      std::shuffle(kids.begin(), kids.end(), rng);
      for (int k = 0; k < kills; ++k) kill(kids[static_cast<std::size_t>(k)], SIGKILL);
      EXPECT_EQ(wait_bounded(parent, 60), 0) << read_text(log);
      const std::string text = read_text(log);
      int said = 0;
      for (std::size_t at = 0; (at = text.find("was killed by signal 9", at)) != std::string::npos; ++at) ++said;
      EXPECT_LE(said, kills) << text;
      landed += said;
      for (int i = 0; i < width_; ++i)
        EXPECT_EQ(read_i32(fmt::format("{}_{}.bin", inst, i)), read_i32(fmt::format("drv{}.bin", i))) << "output " << i;
      // Cleaned out, so twenty runs fit the server (--clean as a user runs it between runs).
      auto clean = run_cli("rem " + path("mesh.dot") + " --store " + store_ + " --instance " + inst + " --clean");
      EXPECT_EQ(clean.exit_code, 0) << clean.output;
      EXPECT_NE(clean.output.find("removed"), std::string::npos) << clean.output;
    }
  }
  // Most kills must have landed before their process finished, or this proves little.
  EXPECT_GE(landed, 10);
}

TEST_F(RemCliTest, AnotherProgramUnderTheSameInstanceIsRefusedByName) {
  // The mesh with one actor changed: t0_0 adds instead of multiplying.
  std::string dot = matmul_mesh(layers_, width_, 256);
  const std::string matmul = "t0_0 [actor=\"i32.matmul\"]";
  ASSERT_NE(dot.find(matmul), std::string::npos);
  dot.replace(dot.find(matmul), matmul.size(), "t0_0 [actor=\"i32.add\"]");
  write("changed.dot", dot);
  const std::string in = " --input A=" + path("a.bin") + " --input B=" + path("b.bin");
  const std::string y = fmt::format("m{}_0", layers_ - 1);
  auto first = run_cli("rem " + path("changed.dot") + " --store " + store_ + " --instance reuse1 --timeout 60" + in + " --output " + y + "=" +
                       path("changed0.bin"));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  ASSERT_NE(read_i32("changed0.bin"), read_i32("drv0.bin"));  // serving it for the real graph would be a wrong output
  // The real graph, same inputs, same instance, several scheduler processes: refused once, by name, before any runs.
  auto second = run_cli("rem " + path("mesh.dot") + " --store " + store_ + " --instance reuse1 --procs 2 --timeout 60" + in + " --output " + y +
                        "=" + path("real0.bin"));
  EXPECT_NE(second.exit_code, 0) << second.output;
  const std::string refused = "instance 'reuse1' belongs to another program";
  ASSERT_NE(second.output.find(refused), std::string::npos) << second.output;
  EXPECT_EQ(second.output.find(refused), second.output.rfind(refused)) << "refused by every process, not once:\n" << second.output;
  EXPECT_NE(second.output.find("use another --instance"), std::string::npos) << second.output;
  EXPECT_EQ(second.output.find("task executions"), std::string::npos) << second.output;
  EXPECT_TRUE(read_i32("real0.bin").empty()) << "an output was written";
  // A joiner without inputs is refused too; under its own instance the real graph gives the driver's outputs.
  auto joiner = run_cli("rem " + path("mesh.dot") + " --store " + store_ + " --instance reuse1 --timeout 60");
  EXPECT_NE(joiner.exit_code, 0) << joiner.output;
  EXPECT_NE(joiner.output.find(refused), std::string::npos) << joiner.output;
  auto own = run_cli("rem " + path("mesh.dot") + " --store " + store_ + " --instance real1 --timeout 60" + in);
  ASSERT_EQ(own.exit_code, 0) << own.output;
  expect_outputs_equal_driver("real1");
}

// --coalesce-auto: the command chooses once, records the choice under the
// instance, runs its processes with it; a scheduler that joins later takes
// the recorded choice (and finds the run finished).
TEST_F(RemCliTest, CoalesceAutoIsChosenOnceAndJoinersTakeIt) {
  std::string outs;
  for (int i = 0; i < width_; ++i) outs += fmt::format(" --output m{}_{}={}", layers_ - 1, i, path(fmt::format("rem{}.bin", i)));
  const std::string in = " --input A=" + path("a.bin") + " --input B=" + path("b.bin");
  auto r = run_cli("rem " + path("mesh.dot") + " --store " + store_ + " --procs 2 --timeout 60 --coalesce-auto --instance auto1" + in + outs);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("redflow rem: coalescing chosen: tasks="), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("a round trip"), std::string::npos) << r.output;
  for (int i = 0; i < width_; ++i) EXPECT_EQ(read_i32(fmt::format("rem{}.bin", i)), read_i32(fmt::format("drv{}.bin", i)));
  r = run_cli("rem " + path("mesh.dot") + " --store " + store_ + " --timeout 60 --coalesce-auto --instance auto1 --stats " + path("j.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("(recorded for instance auto1)"), std::string::npos) << r.output;
  std::ifstream s(path("j.json"));
  std::string json((std::istreambuf_iterator<char>(s)), std::istreambuf_iterator<char>());
  EXPECT_NE(json.find("\"executed\": 0,"), std::string::npos) << json;
  r = run_cli("rem " + path("mesh.dot") + " --store " + store_ + " --coalesce-auto --coalesce-tasks 2 --instance auto1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--coalesce-tasks excludes --coalesce-auto"), std::string::npos) << r.output;
}

TEST_F(RemCliTest, BadFlagsAreNamed) {
  auto r = run_cli("rem " + path("mesh.dot") + " --store nosuch://x");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("nosuch://x"), std::string::npos) << r.output;
  r = run_cli("rem " + path("mesh.dot") + " --store " + store_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--instance"), std::string::npos) << r.output;
  r = run_cli("rem " + path("mesh.dot") + " --input Q=" + path("a.bin"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("no input data node 'Q'"), std::string::npos) << r.output;
  r = run_cli("rem " + path("mesh.dot") + " --instance 'bad id' --store " + store_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("instance id 'bad id'"), std::string::npos) << r.output;
  // The same --output checks as `redflow run` (one helper): a node bound twice, .npy without type=.
  const std::string y = fmt::format("m{}_0", layers_ - 1);
  r = run_cli("rem " + path("mesh.dot") + " --output " + y + "=" + path("x.bin") + " --output " + y + "=" + path("y.bin"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("'" + y + "' is given twice"), std::string::npos) << r.output;
  r = run_cli("rem " + path("mesh.dot") + " --output " + y + "=" + path("x.npy"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("has no type="), std::string::npos) << r.output;
}

}  // namespace
}  // namespace redflow::testing
