// Lost workers: `kill -9` of a worker process at a random moment (20 seeded
// trials; bench/soak-remote.sh runs more), a worker frozen past the
// heartbeat timeout and woken again (everything it sends late is discarded
// and counted), and garbage on the driver's socket from a raw ZeroMQ DEALER
// while a real run goes on. Every time the outputs equal the reference. And
// what a loss costs: only the actor a pipelined worker was running takes a
// strike, and each value lost with a worker is recomputed once.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <signal.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "net_workers.hpp"
#include "redflow/redflow.hpp"
#include "watchdog.hpp"

namespace redflow {
namespace {

using testing::WorkerProcesses;

// The heartbeat timeout of the kill trials: short, so that a killed
// worker is found lost within a trial, but not so short that a live
// worker's heartbeats, late on a machine loaded many times over, make it
// look dead too. Under a sanitizer, with both sanitizer stages running at
// once (load 15 on 2 cores), 0.3 s and then 1 s were too short: the
// surviving worker of a trial, busy with values of 3 MB under TSan, was
// declared lost beside the killed one. The trials' budget grows with it.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr double kKillTrialHeartbeatS = 3.0;
constexpr int kKillTrialsBudgetS = 280;  // under the 300 s CTest gives each test
#else
constexpr double kKillTrialHeartbeatS = 0.3;
constexpr int kKillTrialsBudgetS = 120;
#endif

// Executions of `loaded` around a `kill -9` of `victim`, `delay` after the
// first starts: they go on until the kill has landed (an event, whatever the
// machine's speed) and then until the tile is lost or three heartbeat
// timeouts and a second have passed, and each must equal `want`. Returns
// the tiles they lost, in all, and whether the kill landed while an
// execution ran (`mid`). A tile lost between two executions (the kill came
// after the last answer the execution needed) is lost in no execution's
// count, but its stats say so from the next one on: that ends the trial too.
struct AcrossAKill {
  std::uint64_t lost = 0;
  int executions = 0;
  bool mid = false;
};
AcrossAKill execute_across_a_kill(LoadedGraph& loaded, const Inputs& inputs, const Outputs& want, WorkerProcesses& workers, pid_t victim,
                                  std::chrono::microseconds delay, const std::string& trial) {
  std::atomic<bool> killed{false};
  std::thread killer([&] {
    std::this_thread::sleep_for(delay);
    workers.kill9(victim);
    killed = true;
  });
  AcrossAKill a;
  const auto patience = std::chrono::duration<double>(3 * kKillTrialHeartbeatS + 1);
  std::optional<std::chrono::steady_clock::time_point> landed;
  while (a.executions < 100000) {
    const bool after = killed.load();
    if (after && !landed) landed = std::chrono::steady_clock::now();
    auto out = loaded.execute(inputs);
    ++a.executions;
    if (!after && killed.load()) a.mid = true;
    EXPECT_TRUE(out.ok()) << trial << ", execution " << a.executions << ": " << out.status().ToString();
    if (!out.ok()) break;
    EXPECT_EQ(*out, want) << trial << ", execution " << a.executions;
    a.lost += loaded.last_stats().lost_tiles;
    const auto& tiles = loaded.last_stats().tiles;
    const bool gone = std::any_of(tiles.begin(), tiles.end(), [](const TileStats& t) { return t.lost; });
    if (after && (a.lost > 0 || gone || std::chrono::steady_clock::now() - *landed > patience)) break;
  }
  killer.join();
  return a;
}

TEST(NetCrash, KillNineOfAWorkerAtARandomMomentTwentyTrials) {
  int lost = 0, mid = 0;
  testing::within_seconds(kKillTrialsBudgetS, "20 kill trials", [&] {
    // bench/soak-remote.sh sets REDFLOW_SOAK_ROUND: other seeds each round.
    const char* round = std::getenv("REDFLOW_SOAK_ROUND");
    const std::uint32_t base = round != nullptr ? static_cast<std::uint32_t>(std::atoi(round)) * 20 : 0;
    for (std::uint32_t trial = 0; trial < 20; ++trial) {
      std::mt19937 rng(4000 + base + trial);
      const Graph g = testing::random_builtin_dag(80, 100 + trial);
      const auto x0 = testing::seeded_bytes(testing::kNetBytes, trial), x1 = testing::seeded_bytes(testing::kNetBytes, trial + 99);
      const Inputs inputs{{"X0", x0}, {"X1", x1}};
      const Outputs want = testing::local_reference(g, inputs);
      const Scheduler scheduler = trial % 2 == 0 ? Scheduler::kSteal : Scheduler::kHeft;
      WorkerProcesses workers;
      // One local tile so that a run always has a tile left; two workers, one of which dies.
      RuntimeOptions o = testing::remote_options(1, 2, scheduler, kKillTrialHeartbeatS);
      o.cluster.on_listening = [&](const std::string& endpoint) { workers.spawn_n(2, endpoint, testing::kWorkerSlots); };
      Runtime rt(o);
      auto loaded = rt.load(g, Registry::with_builtins());
      ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
      const pid_t victim = workers.pids()[rng() % 2];
      const AcrossAKill a = execute_across_a_kill(*loaded, inputs, want, workers, victim, std::chrono::microseconds(rng() % 20000),
                                                  "trial " + std::to_string(trial));
      EXPECT_LE(a.lost, 1u) << "trial " << trial << ", " << a.executions << " executions";
      lost += static_cast<int>(a.lost);
      mid += a.mid;
      EXPECT_EQ(workers.wait_exit(victim, 5), -2) << "the victim died of its signal";
    }
  });
  std::printf("%d of 20 trials saw the killed worker's tile lost; %d kills landed while an execution ran\n", lost, mid);
  EXPECT_GE(lost, 10) << "too few trials lost the killed worker's tile";
}

// Values larger than a chunk go to a worker in pieces (RemoteTile::
// send_in_pieces), pipelined ahead of their actors: a worker killed while
// they cross loses them with everything else it held, and the outputs are
// still the reference's (a value made on the other worker crosses in
// chunks from its peer socket, placed piece by piece the same way). The
// worker killed is the one the execution before gave the work (HEFT keeps
// these small graphs on one tile).
TEST(NetCrash, KillNineWhileLargeValuesCrossInPieces) {
  constexpr std::size_t kBytes = (std::size_t{3} << 20) + 4;  // 3 whole pieces and a partial one
  const std::vector<std::string> slots = {"--slots", "8", "--slot-bytes", std::to_string(4 << 20)};
  int lost = 0, mid = 0;
  testing::within_seconds(kKillTrialsBudgetS, "5 kill trials with values in pieces", [&] {
    const char* round = std::getenv("REDFLOW_SOAK_ROUND");  // bench/soak-remote.sh: other seeds each round
    const std::uint32_t base = round != nullptr ? static_cast<std::uint32_t>(std::atoi(round)) * 5 : 0;
    for (std::uint32_t trial = 0; trial < 5; ++trial) {
      std::mt19937 rng(7000 + base + trial);
      const Graph g = testing::random_builtin_dag(12, 300 + base + trial, kBytes);
      const auto x0 = testing::seeded_bytes(kBytes, trial), x1 = testing::seeded_bytes(kBytes, trial + 99);
      const Inputs inputs{{"X0", x0}, {"X1", x1}};
      const Outputs want = testing::local_reference(g, inputs);
      WorkerProcesses workers;
      // Two workers and no local tile: every value crosses to a worker.
      RuntimeOptions o = testing::remote_options(0, 2, trial % 2 == 0 ? Scheduler::kSteal : Scheduler::kHeft, kKillTrialHeartbeatS);
      o.slot_bytes = 4 << 20;
      o.cluster.on_listening = [&](const std::string& endpoint) { workers.spawn_n(2, endpoint, slots); };
      Runtime rt(o);
      auto loaded = rt.load(g, Registry::with_builtins());
      ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
      // Two executions first: HEFT plans the second with the costs the first
      // measured, and the next one as the second.
      Result<Outputs> out = Outputs{};
      for (int warm = 0; warm < 2; ++warm) {
        out = loaded->execute(inputs);
        ASSERT_TRUE(out.ok()) << "trial " << trial << ": " << out.status().ToString();
        EXPECT_EQ(*out, want) << "trial " << trial << ", before the kill";
      }
      const auto& tiles = loaded->last_stats().tiles;
      const TileStats& busy = tiles[0].actors >= tiles[1].actors ? tiles[0] : tiles[1];
      // From the driver in pieces, or fetched from the other worker in chunks: either way written piece by piece.
      ASSERT_GT(busy.bytes_sent + busy.peer_bytes_in, kBytes) << "no large value crossed to the busy worker";
      const pid_t victim = static_cast<pid_t>(std::stol(busy.worker.substr(busy.worker.rfind(':') + 1)));  // HOST:PID
      ASSERT_NE(std::find(workers.pids().begin(), workers.pids().end(), victim), workers.pids().end()) << busy.worker;
      // Into the next execution, a value or two in.
      const AcrossAKill a = execute_across_a_kill(*loaded, inputs, want, workers, victim, std::chrono::microseconds(rng() % 5000),
                                                  "trial " + std::to_string(trial));
      EXPECT_LE(a.lost, 1u) << "trial " << trial << ", " << a.executions << " executions";
      lost += static_cast<int>(a.lost);
      mid += a.mid;
    }
  });
  std::printf("%d of 5 trials saw the killed worker's tile lost; %d kills landed while an execution ran\n", lost, mid);
  EXPECT_GE(lost, 3) << "too few trials lost the killed worker's tile";
}

TEST(NetCrash, AFrozenWorkerIsLostAndWhatItSendsWhenWokenIsDiscarded) {
  const Graph g = testing::random_builtin_dag(60, 7);
  const auto x0 = testing::seeded_bytes(testing::kNetBytes, 1), x1 = testing::seeded_bytes(testing::kNetBytes, 2);
  const Inputs inputs{{"X0", x0}, {"X1", x1}};
  const Outputs want = testing::local_reference(g, inputs);
  WorkerProcesses workers;
  RuntimeOptions o = testing::remote_options(1, 1, Scheduler::kHeft, 0.3);
  // No speculative copies: the local tile could otherwise finish the frozen
  // worker's actors itself, and the execution end before the worker is
  // declared lost (its inputs go ahead of its actors without a round trip,
  // so its runner is not stuck sending them).
  o.speculate_after_s = 0;
  o.cluster.on_listening = [&](const std::string& endpoint) { workers.spawn(endpoint, testing::kWorkerSlots); };
  testing::within_seconds(30, "frozen worker", [&] {
    Runtime rt(o);
    auto loaded = rt.load(g, Registry::with_builtins());
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    const pid_t frozen = workers.pids()[0];
    auto out = loaded->execute(inputs);  // the worker is surely past its WELCOME now
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_GT(loaded->last_stats().tiles[1].actors, 0u);
    ::kill(frozen, SIGSTOP);
    out = loaded->execute(inputs);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(*out, want);
    EXPECT_EQ(loaded->last_stats().lost_tiles, 1u);
    {  // The one report shape shows the loss under "failed" and the lost worker by name.
      const auto j = nlohmann::json::parse(to_json(report(loaded->last_stats())));
      EXPECT_EQ(j["failed"]["workers_lost"].get<std::uint64_t>(), 1u);
      EXPECT_EQ(j["recovered"]["recomputed"].get<std::uint64_t>(), loaded->last_stats().recomputed_actors);
      ASSERT_EQ(j["places"].size(), loaded->last_stats().tiles.size() + (loaded->last_stats().driver.actors > 0 ? 1 : 0));
      EXPECT_TRUE(j["places"].back()["lost"].get<bool>()) << j.dump(2);
      EXPECT_EQ(j["places"].back()["name"], loaded->last_stats().tiles[1].worker);
    }
    ::kill(frozen, SIGCONT);
    // Woken, it beats its heart (late; tile_worker.cpp sends a due beat even
    // when the BYE is read in the same pass), may answer requests it had, and
    // leaves on the driver's BYE.
    EXPECT_EQ(workers.wait_exit(frozen, 10), 0);
    // What it sent reaches the driver's I/O thread in its own time, possibly
    // after the next execution's report: execute until the count shows it,
    // for at most 5 s.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    do {
      out = loaded->execute(inputs);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_EQ(*out, want);
      EXPECT_EQ(loaded->last_stats().tiles[1].actors, 0u) << "a lost worker is never taken back";
      if (loaded->last_stats().late_messages == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    } while (loaded->last_stats().late_messages == 0 && std::chrono::steady_clock::now() < deadline);
    EXPECT_GT(loaded->last_stats().late_messages, 0u);
  });
}

// An actor that kills every worker it lands on, on `limit` + 1 workers:
// poisoned after `limit` losses (RuntimeOptions::crash_limit), with the last
// worker alive and never sent it. `args` and `speculate_after_s` make it slow
// to die and copied while it dies (`want_copies` times; -1: any number).
// Under a sanitizer with the other stage beside it, 0.3 s of silence came
// from live workers (and from the driver, to them) and took the worker that
// must stay alive: 1 s there.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr double kPoisonHeartbeatS = 1.0;
#else
constexpr double kPoisonHeartbeatS = 0.3;
#endif

void expect_poisoned_after(unsigned limit, const std::string& args, double speculate_after_s, int want_copies) {
  Graph g("poison");
  const DataId x = g.input("X", 64);
  g.actor("killer", "test.crash", {x}, g.output("Y", 64)).args(args);
  Registry reg = Registry::with_builtins();
  ASSERT_TRUE(reg.load_plugin(REDFLOW_TEST_PLUGIN).ok());
  WorkerProcesses workers;
  std::vector<std::string> extra = testing::kWorkerSlots;
  extra.insert(extra.end(), {"--lib", REDFLOW_TEST_PLUGIN});
  RuntimeOptions o = testing::remote_options(0, limit + 1, Scheduler::kSteal, kPoisonHeartbeatS);
  o.speculate_after_s = speculate_after_s;
  o.crash_limit = limit;
  o.cluster.on_listening = [&](const std::string& endpoint) { workers.spawn_n(limit + 1, endpoint, extra); };
  testing::within_seconds(30, "poisoned actor", [&] {
    Runtime rt(o);
    auto loaded = rt.load(g, reg);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    const std::vector<std::byte> in(64);
    auto out = loaded->execute({{"X", in}});
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), Status::Code::kGaveUp) << out.status().ToString();
    const std::string lost = limit == 1 ? "1 tile was lost while it ran on them (tile " : std::to_string(limit) + " tiles were lost while it ran on them (tiles ";
    EXPECT_NE(out.status().message().find("actor 'killer' is poisoned: " + lost), std::string::npos) << out.status().message();
    EXPECT_NE(out.status().message().find("its crash limit; it is not retried"), std::string::npos) << out.status().message();
    EXPECT_EQ(loaded->last_stats().lost_tiles, limit);
    if (want_copies >= 0) {
      EXPECT_EQ(loaded->last_stats().speculative_copies, static_cast<std::uint64_t>(want_copies));
    }
    // The last worker is alive and was never sent the poisoned actor.
    int alive = 0;
    for (pid_t p : std::vector<pid_t>(workers.pids())) alive += ::kill(p, 0) == 0 && workers.wait_exit(p, 0.01) == -1;
    EXPECT_EQ(alive, 1);
  });
}

TEST(NetCrash, AnActorThatKillsEveryWorkerItLandsOnIsPoisonedAfterThree) { expect_poisoned_after(3, "", 0.1, -1); }

// --crash-limit: the user's limit, here 1 (no copy may run beside the
// original: two could die at once) and 2.
TEST(NetCrash, TheCrashLimitIsTheUsersToSet) {
  expect_poisoned_after(1, "", 0.1, 0);
  expect_poisoned_after(2, "", 10, 0);
}

// Its first two runs die at once (each declared lost within a heartbeat,
// 75 ms; longer under the sanitizers), the third takes 1.5 s to: a copy of
// the third (after 0.5 s) would die too, beside it, and take down the
// fourth worker. An actor two tiles were lost under is not copied. (Copies
// are not counted: under ASan the second run may die slowly enough to be
// copied itself, which the first rule keeps within the limit.)
TEST(NetCrash, AnActorTwoTilesWereLostUnderIsNotCopied) {
  const std::string runs = (std::filesystem::temp_directory_path() / ("redflow-crash-runs-" + std::to_string(::getpid()))).string();
  std::filesystem::remove(runs);
  expect_poisoned_after(3, "ms=1500,slow_from=3,runs=" + runs, 0.5, -1);
  std::filesystem::remove(runs);
}

// The killer takes 400 ms to die, so an idle tile copies it (speculation at
// 50 ms) and the copy dies too. The copy's loss is a strike, but the run is
// handed on once, by the original's runner: before, both handed it on and
// the fourth worker died as well (seen under AddressSanitizer, whose crash
// report makes every worker slow to die).
TEST(NetCrash, ACopiedKillerIsHandedOnOnceAndStillPoisonedAfterThree) { expect_poisoned_after(3, "ms=400", 0.05, 1); }

// A pipelined worker killed with several actors in flight (docs/remote.md,
// "Pipelining"): only the actor it was running counts towards poisoning; the
// ones queued behind it are handed on without a strike. The killer (300 ms,
// then SIGSEGV; its second run ends well) and its innocents are given costs
// (work) that make HEFT order the killer first on its tile and some
// innocents after it there, so its runner sends it first and innocents
// behind it. Evidence they were in flight at the loss: the lost tile had two
// or more actor messages unanswered at once and booked none (it ran only the
// killer, which never answered). A trial where that did not happen proves
// nothing and is run again.
Graph killer_among_innocents(const std::string& runs, int innocents, bool with_killer) {
  Graph g("strikes");
  const DataId x = g.input("X", testing::kNetBytes);
  for (int i = 0; i < innocents; ++i) {
    const std::string n = std::to_string(i);
    const DataId k = g.constant("K" + n, testing::seeded_bytes(testing::kNetBytes, 50 + static_cast<std::uint32_t>(i)));
    g.actor("innocent" + n, "i32.add", {x, k}, g.output("Y" + n, testing::kNetBytes)).work(100e6);
  }
  if (with_killer) g.actor("killer", "test.crash", {x}, g.output("Z", testing::kNetBytes)).args("ms=300,crashes=1,runs=" + runs).work(300e6);
  return g;
}

TEST(NetCrash, OnlyTheActorAWorkerWasRunningCountsTowardsPoisoning) {
  constexpr int kInnocents = 12;
  const std::vector<std::string> slots = {"--slots", "32", "--slot-bytes", "65536", "--lib", REDFLOW_TEST_PLUGIN};
  const auto x = testing::seeded_bytes(testing::kNetBytes, 5);
  Outputs want = testing::local_reference(killer_among_innocents("", kInnocents, false), {{"X", x}});
  want["Z"] = std::vector<std::byte>(testing::kNetBytes);  // the killer's run that ends writes zeros
  bool shown = false;
  testing::within_seconds(60, "a killer among innocents", [&] {
    for (std::uint64_t trial = 0; trial < 4 && !shown; ++trial) {
      const std::string runs = (std::filesystem::temp_directory_path() / ("redflow-strike-runs-" + std::to_string(::getpid()))).string();
      std::filesystem::remove(runs);
      const Graph g = killer_among_innocents(runs, kInnocents, true);
      WorkerProcesses workers;
      RuntimeOptions o = testing::remote_options(0, 2, Scheduler::kHeft, 2);
      o.slots = 32;
      o.speculate_after_s = 0;  // no copies: a copy's loss is a strike of its own
      o.trace = true;
      o.cluster.on_listening = [&](const std::string& endpoint) { workers.spawn_n(2, endpoint, slots); };
      const Registry reg = testing::registry_with_test_plugin();
      Runtime rt(o);
      auto loaded = rt.load(g, reg);
      ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
      auto out = loaded->execute({{"X", x}});
      std::filesystem::remove(runs);
      ASSERT_TRUE(out.ok()) << "trial " << trial << ": " << out.status().ToString();
      EXPECT_EQ(*out, want) << "trial " << trial;
      const ExecutionStats& stats = loaded->last_stats();
      ASSERT_EQ(stats.lost_tiles, 1u) << "trial " << trial;
      std::vector<std::string> strikes;
      for (const TracedMark& m : loaded->last_trace().marks)
        if (m.what == "strike") strikes.push_back(m.detail + " [tile " + std::to_string(m.tile) + "]");
      ASSERT_EQ(strikes.size(), 1u) << "trial " << trial << ": " << ::testing::PrintToString(strikes);
      EXPECT_EQ(strikes[0].rfind("'killer': 1 of 3 (tile ", 0), 0u) << strikes[0];
      for (const TileStats& t : stats.tiles) {
        if (!t.lost) continue;
        EXPECT_NE(strikes[0].find("[tile " + std::to_string(&t - stats.tiles.data()) + "]"), std::string::npos) << strikes[0];
        shown = t.actors == 0 && t.most_in_flight >= 2;
        std::printf("trial %llu: the lost tile had %llu actor messages in flight at most and booked %llu\n", static_cast<unsigned long long>(trial),
                    static_cast<unsigned long long>(t.most_in_flight), static_cast<unsigned long long>(t.actors));
      }
    }
  });
  EXPECT_TRUE(shown) << "no trial had innocents in flight behind the killer when its worker died";
}

// Values that lived only on a worker lost mid-execution are recomputed on
// main memory, each once whoever needs it first (docs/runtime.md, "Lost
// tiles"). The worker is lost to the crash fault: a killer (test.crash, its
// first run only) reads a value halfway down a random DAG, so it runs, and
// kills its worker, mid-execution, with values in that worker's slots that
// later actors need. Counted from the trace: a recomputed producer runs on
// the driver (no actor of these graphs does otherwise), having run on a tile
// before (on the lost one, or on another its value left for the lost one),
// at most once per execution, and there are as many such runs as the stats'
// recomputed_actors; the outputs are the sequential interpreter's. A value
// read by several actors after the loss is where a second recompute would
// show: trials go on until 100 values were recomputed in all, or 10 ran.
Graph with_a_killer_halfway(Graph g, const std::string& runs) {
  for (int k = 40;; ++k) {
    const auto& data = g.data();
    const auto it = std::find_if(data.begin(), data.end(), [&](const auto& d) { return d.name == "d" + std::to_string(k); });
    if (it == data.end()) break;
    if (it->kind != DataKind::kInner) continue;
    g.actor("killer", "test.crash", {static_cast<DataId>(it - data.begin())}, g.output("Z", testing::kNetBytes)).args("crashes=1,runs=" + runs);
    break;
  }
  return g;
}

TEST(NetCrash, ValuesLostWithAWorkerAreRecomputedEachOnce) {
  std::uint64_t recomputed = 0;
  int trials = 0;
  std::vector<std::string> slots = testing::kWorkerSlots;
  slots.insert(slots.end(), {"--lib", REDFLOW_TEST_PLUGIN});
  const Registry reg = testing::registry_with_test_plugin();
  const std::string runs = (std::filesystem::temp_directory_path() / ("redflow-recompute-runs-" + std::to_string(::getpid()))).string();
  testing::within_seconds(90, "values lost with a worker", [&] {
    for (std::uint32_t trial = 0; trial < 10 && recomputed < 100; ++trial, ++trials) {
      std::filesystem::remove(runs);
      const Graph g = with_a_killer_halfway(testing::random_builtin_dag(80, 900 + trial), runs);
      ASSERT_NE(g.data().back().name, "d79") << "no inner value to put the killer on";
      const auto x0 = testing::seeded_bytes(testing::kNetBytes, trial), x1 = testing::seeded_bytes(testing::kNetBytes, trial + 7);
      const Inputs inputs{{"X0", x0}, {"X1", x1}};
      Outputs want = testing::local_reference(testing::random_builtin_dag(80, 900 + trial), inputs);
      want["Z"] = std::vector<std::byte>(testing::kNetBytes);  // the killer's run that ends writes zeros
      WorkerProcesses workers;
      // Three workers and no local tile (the killer would take the test down with it).
      RuntimeOptions o = testing::remote_options(0, 3, trial % 2 == 0 ? Scheduler::kSteal : Scheduler::kHeft, 2);
      // No copies: a copy of the killer, run while its worker takes its time
      // to die (a sanitizer's report first), would end the execution before
      // the loss, and then no value is recomputed in it.
      o.speculate_after_s = 0;
      o.trace = true;
      o.cluster.on_listening = [&](const std::string& endpoint) { workers.spawn_n(3, endpoint, slots); };
      Runtime rt(o);
      auto loaded = rt.load(g, reg);
      ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
      auto out = loaded->execute(inputs);
      ASSERT_TRUE(out.ok()) << "trial " << trial << ": " << out.status().ToString();
      EXPECT_EQ(*out, want) << "trial " << trial;
      const ExecutionStats& stats = loaded->last_stats();
      const ExecutionTrace& trace = loaded->last_trace();
      EXPECT_EQ(stats.lost_tiles, 1u) << "trial " << trial;
      EXPECT_EQ(stats.driver.actors, 0u) << "a driver actor would run on the driver beside the recomputed ones";
      std::map<ActorId, int> on_driver;
      std::set<ActorId> on_tiles;
      for (const TracedActor& a : trace.actors) {
        if (a.tile < 0) {
          ++on_driver[a.actor];
        } else {
          on_tiles.insert(a.actor);
        }
      }
      std::uint64_t recomputes = 0;
      for (const auto& [actor, n] : on_driver) {
        recomputes += static_cast<std::uint64_t>(n);
        EXPECT_EQ(n, 1) << "trial " << trial << ": actor " << actor << " was recomputed " << n << " times";
        EXPECT_TRUE(on_tiles.contains(actor)) << "trial " << trial << ": actor " << actor << " was recomputed but had never run on a tile";
      }
      EXPECT_EQ(recomputes, stats.recomputed_actors) << "trial " << trial;
      recomputed += stats.recomputed_actors;
    }
  });
  std::filesystem::remove(runs);
  std::printf("%d trials recomputed %llu values in all\n", trials, static_cast<unsigned long long>(recomputed));
  EXPECT_GT(recomputed, 0u) << "no worker lost held values still needed";
}

// Raw bytes on the driver's socket, as a confused or hostile peer would send.
void send_garbage(const std::string& endpoint, int& sent) {
  zmq::context_t ctx(1);
  zmq::socket_t s(ctx, zmq::socket_type::dealer);
  s.set(zmq::sockopt::linger, 2000);
  s.connect(endpoint);
  auto part = [&](std::vector<std::byte> bytes, bool more) {
    s.send(zmq::buffer(bytes.data(), bytes.size()), more ? zmq::send_flags::sndmore : zmq::send_flags::none);
  };
  auto header = [](std::uint8_t kind, char first = 'R') {
    std::vector<std::byte> h(16);
    const char magic[4] = {first, 'F', 'N', 'E'};
    std::memcpy(h.data(), magic, 4);
    h[4] = std::byte{1};
    h[6] = std::byte{kind};
    return h;
  };
  part(std::vector<std::byte>(5, std::byte{0x41}), false);  // truncated header
  part(header(6, 'X'), true), part({}, false);               // bad magic
  part(header(99), false);                                   // unknown kind
  part(header(6), false);                                    // a REPLY without its body
  part(header(6), true), part({std::byte{1}}, true), part({std::byte{2}}, false);  // too many parts
  part(header(6), true), part(std::vector<std::byte>(64, std::byte{7}), false);   // a REPLY from a stranger
  part(header(1), true), part(std::vector<std::byte>(17 << 20, std::byte{0}), false);  // an oversized HELLO
  part(header(1), true), part(std::vector<std::byte>(40, std::byte{0xff}), false);     // a garbled HELLO
  sent = 8;
}

TEST(NetCrash, GarbageOnTheDriversSocketIsRefusedWhileARealRunContinues) {
  const Graph g = testing::random_builtin_dag(60, 9);
  const auto x0 = testing::seeded_bytes(testing::kNetBytes, 3), x1 = testing::seeded_bytes(testing::kNetBytes, 4);
  const Inputs inputs{{"X0", x0}, {"X1", x1}};
  const Outputs want = testing::local_reference(g, inputs);
  WorkerProcesses workers;
  std::string endpoint;
  RuntimeOptions o = testing::remote_options(0, 2, Scheduler::kSteal);
  o.cluster.on_listening = [&](const std::string& e) {
    endpoint = e;
    workers.spawn_n(2, e, testing::kWorkerSlots);
  };
  testing::within_seconds(60, "garbage", [&] {
    Runtime rt(o);
    auto loaded = rt.load(g, Registry::with_builtins());
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    int sent = 0;
    std::thread attacker([&] { send_garbage(endpoint, sent); });
    for (int i = 0; i < 20; ++i) {
      auto out = loaded->execute(inputs);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_EQ(*out, want);
    }
    attacker.join();
    // The last messages may still be on their way: wait until all are counted.
    std::uint64_t refused = 0;
    for (int i = 0; i < 100 && refused < static_cast<std::uint64_t>(sent); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      auto out = loaded->execute(inputs);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_EQ(*out, want);
      refused = loaded->last_stats().refused_messages;
    }
    EXPECT_EQ(refused, static_cast<std::uint64_t>(sent));
    EXPECT_EQ(loaded->last_stats().lost_tiles, 0u);
  });
}

}  // namespace
}  // namespace redflow
