// Lose the peer, not the job (docs/spits.md, "Over the network"): a real Task
// Manager reached through a man in the middle (wire_proxy.hpp; the Task
// Manager listens, so the proxy is announced in its place) whose result
// batch is garbled, unreadable, or turned into a kind only a Job Manager sends. The Job Manager loses that
// Task Manager (its tasks go back to the queue), takes it back at its next
// HELLO (it re-sends what was not acknowledged), and every task is committed
// exactly once. A task batch the proxy drops loses the Task Manager too,
// once its heartbeat echoes a later batch number.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "net_workers.hpp"
#include "redflow/spits.hpp"
#include "spits/announce.hpp"
#include "watchdog.hpp"
#include "wire_proxy.hpp"
#include "scratch_dir.hpp"

namespace redflow::spits {
namespace {

namespace fs = std::filesystem;
using net::EnvelopeKind;
using testing::ProxyAction;
using testing::ProxyRule;
using testing::WireProxy;

class SpitsNetProxy : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_scratch_path("redflow_spits_proxy");
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    out_ = (dir_ / "commits.txt").string();
    announce_ = (dir_ / "tms").string();
    behind_ = (dir_ / "behind").string();
  }
  void TearDown() override {
    withdraw(announce_, "proxied");
    procs_.end_all();
    fs::remove_all(dir_);
  }
  pid_t start_tm(const std::string& dir, const std::string& name) {
    return procs_.spawn_cli({"spits-worker", REDFLOW_SPITS_TEST_JOB, "--announce-dir", dir, "--name", name, "-w", "1", "--linger", "20", "--wait", "60"});
  }
  // The endpoint Task Manager `name` announced in `dir`, once it did.
  std::string announced(const std::string& dir, const std::string& name) {
    for (int i = 0; i < 1000; ++i) {
      for (const Announcement& a : read_announcements(dir))
        if (a.name == name) return a.record.endpoint;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return {};
  }

  // One Task Manager announced directly, one through a proxy with `rule`;
  // the job must commit each of its tasks once, and the proxied one be lost.
  void run_through_proxy(const ProxyRule& rule) {
    start_tm(announce_, "direct");
    start_tm(behind_, "proxied");
    const std::string target = announced(behind_, "proxied");
    ASSERT_FALSE(target.empty()) << "the Task Manager behind the proxy did not announce itself";
    WireProxy proxy(target, testing::WorkerSide::kListens);
    const std::size_t hit = proxy.add(rule);
    proxy.start();
    ASSERT_TRUE(announce(announce_, "proxied", proxy.endpoint(), "").ok());
    ASSERT_FALSE(announced(announce_, "direct").empty());
    Options o;
    o.task_managers = 0;
    o.announce_dir = announce_;
    o.cluster.heartbeat_timeout_s = 1;
    o.cluster.wait_s = 30;
    testing::within_seconds(90, "a SPITS job with a Task Manager behind a proxy", [&] {
      auto report = run_job(REDFLOW_SPITS_TEST_JOB, {"tasks=2000", "work_us=2000", "out=" + out_}, o);
      ASSERT_TRUE(report.ok()) << report.status().ToString();
      EXPECT_EQ(report->committed, 2000u);
      std::map<std::string, int> commits;
      std::ifstream in(out_);
      for (std::string line; std::getline(in, line);) ++commits[line];
      EXPECT_EQ(commits.size(), 2000u);
      for (int i = 0; i < 2000; ++i) EXPECT_EQ(commits["0:" + std::to_string(i)], 1) << "task 0:" << i;
      EXPECT_EQ(proxy.applied(hit), 1) << "the proxy hit the Task Manager's results once";
      for (const TaskManagerCounts& t : report->task_managers) {
        EXPECT_EQ(t.lost > 0, t.name == "proxied") << t.name;
        // Taken back a second later (the job lasts two), it re-sent the batch the proxy spoiled.
        if (t.name == "proxied") {
          EXPECT_GT(t.late, 0u) << "the Task Manager was not taken back";
        }
      }
    });
  }

  fs::path dir_;
  std::string out_, announce_, behind_;
  testing::WorkerProcesses procs_;
};

ProxyRule first_results(ProxyAction action) {
  ProxyRule r;
  r.action = action;
  r.envelope = EnvelopeKind::kReply;
  r.nth = 1;
  return r;
}

TEST_F(SpitsNetProxy, AGarbledResultBatchLosesTheTaskManagerAndEveryTaskCommitsOnce) { run_through_proxy(first_results(ProxyAction::kGarbleEnvelope)); }

TEST_F(SpitsNetProxy, AnUnreadableResultBatchLosesTheTaskManagerAndEveryTaskCommitsOnce) {
  ProxyRule r = first_results(ProxyAction::kReplace);
  r.replacement = std::vector<std::byte>(3, std::byte{0x5a});  // shorter than a batch's count
  run_through_proxy(r);
}

TEST_F(SpitsNetProxy, AMessageATaskManagerNeverSendsLosesItAndEveryTaskCommitsOnce) {
  ProxyRule r = first_results(ProxyAction::kRewriteKind);
  r.new_kind = EnvelopeKind::kRequest;
  run_through_proxy(r);
}

// A task batch that never reaches its Task Manager (docs/spits.md, "Nothing
// dropped on either side"): the proxy drops the first one on its way. The
// Task Manager's heartbeat echoes the number of the Job Manager's last
// heartbeat, which came after that batch, and the batch is still
// unacknowledged: the Job Manager (a `redflow spits` process, whose log is
// read) loses that Task Manager by name, with no timeout, takes it back at
// its next HELLO, and every task is committed once.
TEST_F(SpitsNetProxy, ABatchUnacknowledgedPastTheEchoedNumberLosesItsTaskManager) {
  start_tm(announce_, "direct");
  start_tm(behind_, "proxied");
  const std::string target = announced(behind_, "proxied");
  ASSERT_FALSE(target.empty()) << "the Task Manager behind the proxy did not announce itself";
  WireProxy proxy(target, testing::WorkerSide::kListens);
  ProxyRule drop;
  drop.action = ProxyAction::kDrop;
  drop.direction = testing::ProxyDirection::kToWorker;
  drop.envelope = EnvelopeKind::kRequest;  // a task batch
  drop.nth = 1;
  const std::size_t hit = proxy.add(drop);
  proxy.start();
  ASSERT_TRUE(announce(announce_, "proxied", proxy.endpoint(), "").ok());
  ASSERT_FALSE(announced(announce_, "direct").empty());
  const std::string log = (dir_ / "jm.log").string(), stats = (dir_ / "stats.json").string();
  testing::within_seconds(90, "a SPITS job whose first batch to a Task Manager is dropped", [&] {
    procs_.set_quiet(false);  // its warnings name the Task Manager lost
    const pid_t jm = procs_.spawn_cli({"spits", REDFLOW_SPITS_TEST_JOB, "tasks=2000", "work_us=2000", "out=" + out_, "--announce-dir", announce_,
                                       "--heartbeat-timeout", "2", "--wait", "30", "--stats", stats},
                                      log);
    procs_.set_quiet(true);
    EXPECT_EQ(procs_.wait_exit(jm, 80), 0) << testing::file_text(log);
    EXPECT_EQ(proxy.applied(hit), 1) << "the proxy dropped no task batch";
    const std::string said = testing::file_text(log);
    EXPECT_NE(said.find("spits: Task Manager 'proxied' is lost: never received task batch "), std::string::npos) << said;
    EXPECT_EQ(said.find("Task Manager 'direct' is lost"), std::string::npos) << said;
    std::map<std::string, int> commits;
    std::ifstream in(out_);
    for (std::string line; std::getline(in, line);) ++commits[line];
    EXPECT_EQ(commits.size(), 2000u);
    for (int i = 0; i < 2000; ++i) EXPECT_EQ(commits["0:" + std::to_string(i)], 1) << "task 0:" << i;
    std::ifstream stats_in(stats);
    const auto report = nlohmann::json::parse(stats_in, nullptr, false);
    ASSERT_FALSE(report.is_discarded()) << "no --stats from the Job Manager";
    EXPECT_EQ(report["committed"], 2000) << report.dump();
    for (const auto& t : report["task_managers"]) EXPECT_EQ(t["lost"].get<std::uint64_t>() > 0, t["name"] == "proxied") << report.dump();
  });
}

}  // namespace
}  // namespace redflow::spits
