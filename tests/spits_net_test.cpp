// SPITS over the network: real Task Manager processes (`redflow spits-worker`)
// on loopback, found through an announce list, driven by a Job Manager in
// this process (run_job with announce_dir) or in another (`redflow spits`).
// Every task is committed exactly once with 1, 2 and 5 Task Managers, when
// Task Managers are killed mid-job, when one joins mid-job (the commit rate
// rises), when the Job Manager is killed and restarted from its log, when a
// task crashes every Task Manager it reaches (poisoned, named), when a Task
// Manager drops its results after --linger (its Job Manager stopped), and when a
// Task Manager in a network namespace is cut off and comes back (its
// buffered results commit). And --address-file: later starters of the same
// command, `redflow worker` and `redflow spits-worker` given the file dial in
// to the Job Manager that published it. Each is bounded in time (Deadline).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <nlohmann/json.hpp>
#include <iterator>
#include <thread>

#include "net/address_file.hpp"
#include "net/keys.hpp"
#include "net_workers.hpp"
#include "netns.hpp"
#include "redflow/spits.hpp"
#include "redflow/visualize.hpp"
#include "scratch_dir.hpp"

namespace redflow::spits {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::WorkerProcesses;

// Ends the test process (with a message) if a test runs past its limit: a
// hang in the network code fails the suite instead of stalling CI.
class Deadline {
 public:
  explicit Deadline(std::chrono::seconds limit)
      : thread_([this, limit] {
          std::unique_lock lock(m_);
          if (!cv_.wait_for(lock, limit, [&] { return done_; })) {
            std::fprintf(stderr, "spits_net_test: a test ran past its %lld s limit: aborting\n", static_cast<long long>(limit.count()));
            std::abort();
          }
        }) {}
  ~Deadline() {
    {
      std::lock_guard lock(m_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

class SpitsNet : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_scratch_path("redflow_spits_net");
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    out_ = (dir_ / "commits.txt").string();
    announce_ = (dir_ / "tms").string();
  }
  void TearDown() override {
    // A Task Manager still leaving removes its own announce entry: ended
    // first, it cannot race remove_all (which threw under TSan when the
    // entry vanished between listing and removing).
    procs_.end_all();
    fs::remove_all(dir_);
  }

  // Starts a Task Manager process with W Workers; returns its PID.
  pid_t start_tm(const std::string& name, unsigned workers = 1, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"spits-worker", REDFLOW_SPITS_TEST_JOB, "--announce-dir", announce_, "--name", name,
                                     "-w", std::to_string(workers), "--linger", "20"};
    if (std::find(extra.begin(), extra.end(), "--wait") == extra.end()) args.insert(args.end(), {"--wait", "60"});
    args.insert(args.end(), extra.begin(), extra.end());
    return procs_.spawn_cli(args);
  }
  // Waits until `n` Task Managers are in the announce list.
  bool wait_announced(std::size_t n, std::chrono::seconds limit = 20s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      std::size_t k = 0;
      std::error_code ec;
      for (fs::directory_iterator it(announce_, ec), end; !ec && it != end; it.increment(ec)) k += it->path().extension() == ".tm";
      if (k >= n) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }
  std::map<std::string, int> commits() const {
    std::map<std::string, int> m;
    std::ifstream in(out_);
    for (std::string line; std::getline(in, line);) ++m[line];
    return m;
  }
  std::size_t commit_lines() const {
    std::ifstream in(out_);
    return static_cast<std::size_t>(std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n'));
  }
  void expect_each_once(long tasks, long except = -1) const {
    auto m = commits();
    EXPECT_EQ(m.size(), static_cast<std::size_t>(tasks - (except >= 0 ? 1 : 0)));
    for (long i = 0; i < tasks; ++i) EXPECT_EQ(m["0:" + std::to_string(i)], i == except ? 0 : 1) << "task 0:" << i;
  }
  Options remote_options() const {
    Options o;
    o.task_managers = 0;
    o.announce_dir = announce_;
    o.cluster.heartbeat_timeout_s = 1;
    o.cluster.wait_s = 30;
    return o;
  }
  Result<Report> run(std::vector<std::string> args, const Options& o) {
    args.push_back("out=" + out_);
    return run_job(REDFLOW_SPITS_TEST_JOB, args, o);
  }

  fs::path dir_;
  std::string out_, announce_;
  WorkerProcesses procs_;
};

class SpitsNetShapes : public SpitsNet, public ::testing::WithParamInterface<unsigned> {};

TEST_P(SpitsNetShapes, EveryTaskCommittedExactlyOnceAndTheTaskManagersEnd) {
  Deadline dog(90s);
  const unsigned n = GetParam();
  std::vector<pid_t> pids;
  for (unsigned i = 0; i < n; ++i) pids.push_back(start_tm("tm" + std::to_string(i), 2));
  ASSERT_TRUE(wait_announced(n));
  // Tasks of 1 ms, so the job outlasts the Task Managers' welcome (trivial
  // tasks could all be done by the first ones welcomed).
  auto report = run({"tasks=3000", "work_us=1000"}, remote_options());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  expect_each_once(3000);
  EXPECT_EQ(report->committed, 3000u);
  ASSERT_EQ(report->task_managers.size(), n);
  std::uint64_t pushed = 0;
  for (const auto& t : report->task_managers) {
    EXPECT_FALSE(t.host.empty()) << t.name;
    EXPECT_EQ(t.lost, 0u) << t.name;
    EXPECT_GT(t.committed, 0u) << t.name;
    pushed += t.pushed;
  }
  EXPECT_GE(pushed, 3000u);
  for (pid_t p : pids) EXPECT_EQ(procs_.wait_exit(p, 10), 0) << "a Task Manager did not end with 0 after the Job Manager's BYE";
  EXPECT_TRUE(fs::is_empty(announce_)) << "a Task Manager left its entry in the announce list";
}

INSTANTIATE_TEST_SUITE_P(TaskManagers, SpitsNetShapes, ::testing::Values(1u, 2u, 5u));

TEST_F(SpitsNet, TheTraceShowsEveryTaskOnTheTaskManagerThatRanIt) {
  Deadline dog(60s);
  start_tm("t0", 1);
  start_tm("t1", 1);
  ASSERT_TRUE(wait_announced(2));
  Options o = remote_options();
  o.trace = true;
  auto report = run({"tasks=200", "work_us=500"}, o);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  std::map<std::uint64_t, int> committed;
  for (const auto& t : report->trace) {
    EXPECT_LE(t.start_s, t.end_s);
    ASSERT_LT(t.task_manager, report->task_managers.size());
    if (t.outcome == TracedTask::Outcome::kCommitted) ++committed[t.id];
  }
  EXPECT_EQ(committed.size(), 200u);
  for (auto& [id, n] : committed) EXPECT_EQ(n, 1) << "task " << id << " traced as committed " << n << " times";
  const auto doc = nlohmann::json::parse(to_chrome_trace(*report));
  std::set<std::string> processes;
  std::size_t slices = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") processes.insert(e["args"]["name"].get<std::string>());
    slices += e["ph"] == "X";
  }
  EXPECT_EQ(slices, report->trace.size());
  EXPECT_EQ(processes.size(), 2u);
  for (const auto& p : processes) EXPECT_EQ(p.rfind("Task Manager t", 0), 0u) << p;
}

TEST_F(SpitsNet, KillNineOfTaskManagersMidJobLosesNothingAndCommitsNothingTwice) {
  Deadline dog(180s);
  // bench/soak-spits.sh sets REDFLOW_SOAK_ROUND for new seeds each round.
  const char* round = std::getenv("REDFLOW_SOAK_ROUND");
  const unsigned first = round ? static_cast<unsigned>(std::atoi(round)) * 3 + 1 : 1;
  for (unsigned seed = first; seed < first + 3; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    fs::remove(out_);
    std::mt19937 rng(seed);
    std::vector<pid_t> pids;
    for (unsigned i = 0; i < 3; ++i) pids.push_back(start_tm("s" + std::to_string(seed) + "tm" + std::to_string(i)));
    ASSERT_TRUE(wait_announced(3));
    const pid_t victim = pids[rng() % 3];
    // The kill lands mid-job: once 60-359 of the 600 tasks are committed
    // (not after a fixed time, which a slow machine may not reach in the job).
    const std::uint64_t kill_at = 60 + rng() % 300;
    std::uint64_t killed_at = 0, lost_seen = 0;
    Options o = remote_options();
    o.on_progress = [&](const Report& so_far) {
      const std::uint64_t committed = so_far.committed;
      std::uint64_t lost_now = 0;
      for (const auto& t : so_far.task_managers) lost_now += t.lost;
      lost_seen = std::max(lost_seen, lost_now);
      if (killed_at == 0 && committed >= kill_at) {
        procs_.kill9(victim);
        killed_at = committed;
      }
    };
    auto report = run({"tasks=600", "work_us=5000"}, o);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    ASSERT_GT(killed_at, 0u) << "the Task Manager was never killed";
    EXPECT_LT(killed_at, 600u) << "the kill landed after the job";
    expect_each_once(600);
    EXPECT_TRUE(report->poisoned.empty());
    std::uint64_t lost = 0;
    for (const auto& t : report->task_managers) lost += t.lost;
    // The killed one may not be declared lost at all: when the others finish
    // first, the queue's wrap re-runs its tasks before its silence counts.
    EXPECT_LE(lost, 1u) << "a Task Manager that was not killed was declared lost";
    EXPECT_LE(lost_seen, lost) << "the progress reports counted a loss the final report does not";
    // Each Task Manager's time per task came over the wire with its results: tasks of 5 ms.
    for (const auto& t : report->task_managers)
      if (t.results > 0) {
        EXPECT_GE(t.task_s, 0.005 * 0.99) << t.name;
        EXPECT_LT(t.task_s, 0.5) << t.name;
      }
    for (pid_t p : pids) {
      if (p != victim) {
        EXPECT_EQ(procs_.wait_exit(p, 10), 0);
      }
    }
    EXPECT_EQ(procs_.wait_exit(victim, 5), -2) << "the victim did not die of the signal";
    fs::remove_all(announce_);
  }
}

TEST_F(SpitsNet, ATaskManagerThatLeavesOnSigtermHandsBackItsTasksWithoutStrikes) {
  Deadline dog(60s);
  const pid_t leaver = start_tm("leaver", 2);
  start_tm("stayer", 1);
  ASSERT_TRUE(wait_announced(2));
  // SIGTERM once 50 of the 300 tasks are committed: mid-job, with both serving.
  bool signalled = false;
  Options o = remote_options();
  o.on_progress = [&](const Report& so_far) {
    if (!signalled && so_far.committed >= 50) signalled = ::kill(leaver, SIGTERM) == 0;
  };
  auto report = run({"tasks=300", "work_us=5000"}, o);
  ASSERT_TRUE(signalled) << "the leaver was never signalled";
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  expect_each_once(300);
  EXPECT_EQ(report->strikes, 0u) << "tasks handed back by a Task Manager that left were counted as failures";
  EXPECT_EQ(procs_.wait_exit(leaver, 10), 0) << "a Task Manager leaving on SIGTERM did not exit 0";
  const auto t = std::find_if(report->task_managers.begin(), report->task_managers.end(), [](const auto& tm) { return tm.name == "leaver"; });
  ASSERT_NE(t, report->task_managers.end()) << "the leaver never served the job";
  EXPECT_EQ(t->lost, 1u) << "the leaver's leaving was not counted";
  EXPECT_GT(t->committed, 0u) << "the leaver left before committing anything";
  EXPECT_GT(t->pushed, t->committed) << "the leaver had no tasks to hand back";
}

TEST_F(SpitsNet, ATaskManagerJoiningMidJobRaisesTheCommitRate) {
  Deadline dog(90s);
  start_tm("first", 1);
  ASSERT_TRUE(wait_announced(1));
  // When the commit count first reached each value, to compare the rate of
  // one Task Manager with that of three. Two join once 100 tasks are
  // committed (an event, not a time), so the first runs alone before.
  constexpr std::uint64_t kJoinAt = 100;
  std::mutex m;
  std::condition_variable reached;
  std::vector<std::pair<std::chrono::steady_clock::time_point, std::uint64_t>> samples;
  Options o = remote_options();
  o.on_progress = [&](const Report& so_far) {
    {
      std::lock_guard lock(m);
      samples.emplace_back(std::chrono::steady_clock::now(), so_far.committed);
    }
    reached.notify_all();
  };
  std::thread joiner([&] {
    {
      std::unique_lock lock(m);
      reached.wait(lock, [&] { return !samples.empty() && samples.back().second >= kJoinAt; });
    }
    start_tm("second", 1);
    start_tm("third", 1);
  });
  // 30 ms a task (a sleep): the rate is bound by the Workers, not by the
  // CPU, even on a loaded machine. At 10 ms, two TSan stages on 2 cores
  // spent about 14 ms a task on waking and messaging once three Task
  // Managers ran, and three of them reached only 1.37 times one's rate.
  auto report = run({"tasks=500", "work_us=30000"}, o);
  {
    std::lock_guard lock(m);
    samples.emplace_back(std::chrono::steady_clock::now(), ~std::uint64_t{0});  // lets a joiner still waiting (a failed run) go
  }
  reached.notify_all();
  joiner.join();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  expect_each_once(500);
  ASSERT_EQ(report->task_managers.size(), 3u) << "the Task Managers that joined were not used";
  for (const auto& t : report->task_managers) EXPECT_GT(t.committed, 0u) << t.name;
  auto first_at = [&](std::uint64_t n) {
    for (auto& [when, c] : samples)
      if (c >= n) return when;
    return samples.back().first;
  };
  auto per_second = [&](std::uint64_t from, std::uint64_t to) {
    return static_cast<double>(to - from) / std::chrono::duration<double>(first_at(to) - first_at(from)).count();
  };
  // One Task Manager: commits 20 to 100; three: the last 150 but the tail
  // (330 to 480), which leaves 230 tasks for the two to be found and welcomed.
  const double before = per_second(20, kJoinAt), after = per_second(330, 480);
  EXPECT_GT(after, 1.5 * before) << "commits/s before the join " << before << ", after " << after;
}

TEST_F(SpitsNet, AJobManagerKilledAndRestartedWithItsLogCommitsEachTaskOnce) {
  Deadline dog(120s);
  std::vector<pid_t> tms = {start_tm("a", 1), start_tm("b", 1)};
  ASSERT_TRUE(wait_announced(2));
  const std::string log = (dir_ / "jm.log").string();
  auto start_jm = [&] {
    // --announce, the old spelling of --announce-dir, still works.
    return procs_.spawn_cli({"spits", REDFLOW_SPITS_TEST_JOB, "tasks=400", "work_us=5000", "out=" + out_, "--announce", announce_, "--log", log,
                             "--heartbeat-timeout", "1", "--wait", "30"});
  };
  const pid_t first = start_jm();
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (commit_lines() < 100 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
  ASSERT_GE(commit_lines(), 100u);
  procs_.kill9(first);
  procs_.wait_exit(first, 5);
  const std::size_t before = commit_lines();
  ASSERT_LT(before, 400u) << "the first Job Manager finished before it was killed";
  const pid_t second = start_jm();
  EXPECT_EQ(procs_.wait_exit(second, 60), 0) << "the restarted Job Manager did not finish the job";
  expect_each_once(400);
  for (pid_t p : tms) EXPECT_EQ(procs_.wait_exit(p, 10), 0);
}

// A Task Manager whose Job Manager falls silent keeps its results for
// --linger seconds, then drops them, says how many and exits 1 (docs/spits.md,
// "Leaves, deaths, partitions"). The Job Manager (a process, SIGSTOPped once
// 50 tasks are committed) comes back after that, loses the Task Manager that
// left (what it held goes back to the queue) and finishes on another, and
// every task is committed once.
TEST_F(SpitsNet, ATaskManagerDropsItsResultsAfterLingerAndNothingIsCommittedTwice) {
  Deadline dog(90s);
  constexpr int kLinger = 3;
  const std::string tm_log = (dir_ / "lingerer.log").string(), stats = (dir_ / "stats.json").string();
  const pid_t lingerer = procs_.spawn_cli({"spits-worker", REDFLOW_SPITS_TEST_JOB, "--announce-dir", announce_, "--name", "lingerer", "-w", "1",
                                           "--linger", std::to_string(kLinger), "--wait", "60"},
                                          tm_log);
  ASSERT_TRUE(wait_announced(1));
  const pid_t jm = procs_.spawn_cli({"spits", REDFLOW_SPITS_TEST_JOB, "tasks=600", "work_us=5000", "out=" + out_, "--announce-dir", announce_,
                                     "--heartbeat-timeout", "2", "--wait", "30", "--stats", stats});
  const auto give_up = std::chrono::steady_clock::now() + 30s;
  while (commit_lines() < 50 && std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(5ms);
  ASSERT_GE(commit_lines(), 50u) << "the job never got going";
  ASSERT_EQ(::kill(jm, SIGSTOP), 0);
  const auto stopped = std::chrono::steady_clock::now();
  const std::size_t before = commit_lines();
  EXPECT_EQ(procs_.wait_exit(lingerer, 30), 1) << testing::file_text(tm_log);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count();
  // It heard the Job Manager last shortly before the stop (its heartbeats
  // come every 0.5 s; a second allows for a loaded machine).
  EXPECT_GE(waited, kLinger - 1.0) << "the Task Manager left before its --linger";
  const std::string said = testing::file_text(tm_log);
  const std::string line = "the Job Manager has been silent for more than " + std::to_string(kLinger) + " s (--linger); the ";
  const auto at = said.find(line);
  ASSERT_NE(at, std::string::npos) << said;
  const long dropped = std::atol(said.c_str() + at + line.size());
  EXPECT_GT(dropped, 0) << "it had no results to drop: " << said;
  std::printf("the Task Manager left %.2f s after its Job Manager stopped: %s", waited, said.c_str() + at);
  EXPECT_NE(said.find(" result batch(es) kept here for it are dropped"), std::string::npos) << said;
  ASSERT_LT(before, 600u) << "the job ended before its Job Manager was stopped";
  start_tm("second", 1);
  ASSERT_TRUE(wait_announced(1));
  ASSERT_EQ(::kill(jm, SIGCONT), 0);
  EXPECT_EQ(procs_.wait_exit(jm, 60), 0) << "the Job Manager did not finish the job after its Task Manager left";
  expect_each_once(600);
  std::ifstream in(stats);
  const auto report = nlohmann::json::parse(in, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << "no --stats from the Job Manager";
  std::map<std::string, std::uint64_t> lost;
  for (const auto& t : report["task_managers"]) lost[t["name"].get<std::string>()] = t["lost"].get<std::uint64_t>();
  EXPECT_GE(lost["lingerer"], 1u) << report.dump();
  EXPECT_EQ(lost["second"], 0u) << report.dump();
}

TEST_F(SpitsNet, ATaskThatCrashesEveryTaskManagerItReachesIsPoisonedAndNamed) {
  Deadline dog(120s);
  for (unsigned i = 0; i < 4; ++i) start_tm("c" + std::to_string(i), 1);
  ASSERT_TRUE(wait_announced(4));
  auto report = run({"tasks=60", "work_us=20000", "crash=7"}, remote_options());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_EQ(report->poisoned.size(), 1u);
  EXPECT_EQ(report->poisoned[0].id, 7u);
  EXPECT_NE(report->poisoned[0].last_error.find("lost"), std::string::npos) << report->poisoned[0].last_error;
  expect_each_once(60, 7);
  unsigned lost = 0;
  for (const auto& t : report->task_managers) lost += t.lost > 0;
  EXPECT_EQ(lost, 3u) << "three strikes: three Task Managers died on it";
}

TEST_F(SpitsNet, NoTaskManagerIsANamedErrorAfterTheWait) {
  Deadline dog(30s);
  Options o = remote_options();
  o.cluster.wait_s = 0.5;
  auto report = run({"tasks=10"}, o);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().message().find("no Task Manager has been live"), std::string::npos) << report.status().message();
  EXPECT_NE(report.status().message().find(announce_), std::string::npos) << report.status().message();
}

// --address-file means dial-in, as for `redflow run` and `redflow stream`:
// the first starter publishes where it listens (a tcp:// endpoint, not an
// announce list) and the second dials in to it as a Task Manager (named
// HOST:PID, the one worker's default name).
TEST_F(SpitsNet, TheSameCommandTwiceWithAnAddressFileMakesAJobManagerAndADialInTaskManager) {
  Deadline dog(60s);
  const std::string address = (dir_ / "job.addr").string(), stats = (dir_ / "stats.json").string();
  auto start = [&] {
    return procs_.spawn_cli({"spits", REDFLOW_SPITS_TEST_JOB, "tasks=300", "work_us=2000", "out=" + out_, "--address-file", address, "-w", "1",
                             "--wait", "20", "--stats", stats});
  };
  const pid_t first = start();
  auto published = net::wait_for_address(address, 10s);
  ASSERT_TRUE(published.ok()) << published.status().ToString();
  EXPECT_TRUE(published->endpoint.starts_with("tcp://127.0.0.1:")) << "the address file names " << published->endpoint;
  const pid_t second = start();
  EXPECT_EQ(procs_.wait_exit(first, 40), 0);
  EXPECT_EQ(procs_.wait_exit(second, 10), 0);
  expect_each_once(300);
  EXPECT_FALSE(fs::exists(address)) << "the Job Manager left its address file behind";
  EXPECT_FALSE(fs::exists(address + ".tms")) << "an announce list beside the address file";
  std::ifstream in(stats);
  const auto report = nlohmann::json::parse(in, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << "no --stats from the Job Manager";
  ASSERT_EQ(report["task_managers"].size(), 1u) << report.dump();
  EXPECT_TRUE(report["task_managers"][0]["name"].get<std::string>().ends_with(":" + std::to_string(second))) << report.dump();
  EXPECT_EQ(report["task_managers"][0]["committed"], 300) << report.dump();
}

// The one worker serves such a job from the address file, and so does
// `redflow spits-worker --address-file` (it dials in too): each task is
// committed once, by Task Managers named as the workers were.
TEST_F(SpitsNet, RedflowWorkerWithTheAddressFileServesAJobStartedWithIt) {
  Deadline dog(60s);
  const std::string address = (dir_ / "job.addr").string(), stats = (dir_ / "stats.json").string();
  const pid_t jm = procs_.spawn_cli({"spits", REDFLOW_SPITS_TEST_JOB, "tasks=300", "work_us=2000", "out=" + out_, "--address-file", address,
                                     "--min-workers", "2", "--wait", "20", "--stats", stats});
  const pid_t worker = procs_.spawn_cli({"worker", "--address-file", address, "--cores", "1", "--name", "w", "--connect-timeout", "20"});
  const pid_t tm = procs_.spawn_cli({"spits-worker", REDFLOW_SPITS_TEST_JOB, "--address-file", address, "-w", "1", "--name", "s", "--wait", "20"});
  EXPECT_EQ(procs_.wait_exit(jm, 40), 0);
  EXPECT_EQ(procs_.wait_exit(worker, 10), 0);
  EXPECT_EQ(procs_.wait_exit(tm, 10), 0);
  expect_each_once(300);
  std::ifstream in(stats);
  const auto report = nlohmann::json::parse(in, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << "no --stats from the Job Manager";
  std::map<std::string, std::uint64_t> committed;
  for (const auto& t : report["task_managers"]) committed[t["name"].get<std::string>()] = t["committed"].get<std::uint64_t>();
  ASSERT_EQ(committed.size(), 2u) << report.dump();
  EXPECT_EQ(committed["w"] + committed["s"], 300u) << report.dump();
}

TEST_F(SpitsNet, AJobManagerWhoseKeyIsNotAuthorizedIsNeverWelcomed) {
  Deadline dog(60s);
  auto jm = net::generate_key_pair(), other = net::generate_key_pair(), tm = net::generate_key_pair();
  ASSERT_TRUE(jm.ok() && other.ok() && tm.ok());
  const std::string jm_prefix = (dir_ / "jm").string(), other_prefix = (dir_ / "other").string(), tm_prefix = (dir_ / "tm").string();
  ASSERT_TRUE(net::write_key_pair(jm_prefix, *jm, true).ok());
  ASSERT_TRUE(net::write_key_pair(other_prefix, *other, true).ok());
  ASSERT_TRUE(net::write_key_pair(tm_prefix, *tm, true).ok());
  // Its stderr in a file: at the end it says why no Job Manager came.
  const std::string tm_log = (dir_ / "tm.log").string();
  const int log_fd = ::open(tm_log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(log_fd, 0);
  const pid_t tm_pid = testing::spawn_process({REDFLOW_CLI, "spits-worker", REDFLOW_SPITS_TEST_JOB, "--announce-dir", announce_, "--name", "keyed",
                                               "-w", "1", "--linger", "20", "--key", tm_prefix + ".key", "--authorized-keys",
                                               other_prefix + ".pub", "--wait", "8"},
                                              {.err_fd = log_fd});
  ::close(log_fd);
  ASSERT_TRUE(wait_announced(1));
  Options o = remote_options();
  o.cluster.key_file = jm_prefix + ".key";
  o.cluster.wait_s = 2;
  auto report = run({"tasks=10"}, o);
  ASSERT_FALSE(report.ok()) << "a Task Manager served a Job Manager whose key it does not authorize";
  EXPECT_NE(report.status().message().find("no Task Manager has been live"), std::string::npos) << report.status().message();
  EXPECT_EQ(commit_lines(), 0u);
  EXPECT_EQ(procs_.wait_exit(tm_pid, 20), 1) << "the Task Manager did not give up after its --wait";
  std::ifstream in(tm_log);
  const std::string said((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(said.find("no Job Manager came within 8 s (--wait); "), std::string::npos) << said;
  EXPECT_NE(said.find(" connection(s) were refused in their handshake: a Job Manager without a key, or with one not in --authorized-keys"),
            std::string::npos) << said;
}

TEST_F(SpitsNet, ATaskManagerCutOffInANamespaceComesBackAndItsBufferedResultsCommit) {
  if (auto reason = testing::NetNamespace::skip_reason()) GTEST_SKIP() << *reason;
  Deadline dog(120s);
  testing::NetNamespace ns;
  ASSERT_TRUE(ns.ok()) << ns.error();
  // Off loopback, keys are required: the Task Manager authorizes the Job Manager's key.
  auto jm = net::generate_key_pair(), tm = net::generate_key_pair();
  ASSERT_TRUE(jm.ok() && tm.ok());
  const std::string jm_prefix = (dir_ / "jm").string(), tm_prefix = (dir_ / "tm").string();
  ASSERT_TRUE(net::write_key_pair(jm_prefix, *jm, true).ok());
  ASSERT_TRUE(net::write_key_pair(tm_prefix, *tm, true).ok());
  start_tm("near", 1);
  ns.spawn({REDFLOW_CLI, "--log-level", "info", "spits-worker", REDFLOW_SPITS_TEST_JOB, "--announce-dir", announce_, "--name", "far", "-w", "1",
            "--listen", "tcp://" + ns.ns_address() + ":*", "--key", tm_prefix + ".key", "--authorized-keys", jm_prefix + ".pub", "--linger", "30"},
           (dir_ / "far.log").string());
  ASSERT_TRUE(wait_announced(2));
  Options o = remote_options();
  o.cluster.key_file = jm_prefix + ".key";
  // The cut comes once the far Task Manager serves the job (its log says
  // so), not at a fixed time: under ThreadSanitizer on a loaded machine its
  // CURVE handshake took over 3 s, and a cut before the join cut nothing.
  const fs::path far_log = dir_ / "far.log";
  std::thread cutter([&] {
    const auto give_up = std::chrono::steady_clock::now() + 30s;
    for (;;) {
      std::ifstream in(far_log);
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (text.find("serving job") != std::string::npos || std::chrono::steady_clock::now() > give_up) break;
      std::this_thread::sleep_for(10ms);
    }
    std::this_thread::sleep_for(300ms);  // tasks in hand when the link goes
    ns.set_link_up(false);
    std::this_thread::sleep_for(3000ms);
    ns.set_link_up(true);
  });
  auto report = run({"tasks=700", "work_us=10000"}, o);
  cutter.join();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  expect_each_once(700);
  const TaskManagerCounts* far = nullptr;
  for (const auto& t : report->task_managers)
    if (t.name == "far") far = &t;
  ASSERT_NE(far, nullptr) << "the Task Manager in the namespace never joined";
  EXPECT_GE(far->lost, 1u) << "the cut was not noticed";
  EXPECT_GT(far->late, 0u) << "what it computed while cut off never came back";
  EXPECT_GT(far->committed, 0u);
  EXPECT_EQ(report->task_managers.size(), 2u) << "the plain Task Manager on loopback was not used beside the keyed one";
}

}  // namespace
}  // namespace redflow::spits
