// SPITS end to end through the library (redflow::spits::run_job) with the test
// job plugin (tests/spits_jobs/test_job.cpp): exactly-once commits with
// several Task Managers and Worker counts, duplicates discarded, poisoned
// tasks named, phases, resuming from the log, and named plugin errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "redflow/spits.hpp"
#include "spits/committer.hpp"
#include "spits/job_manager.hpp"
#include "spits/local_task_manager.hpp"
#include "scratch_dir.hpp"

namespace redflow::spits {
namespace {

namespace fs = std::filesystem;

class SpitsRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_scratch_path("redflow_spits");
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    out_ = (dir_ / "commits.txt").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  // How many times each task line appears in the commit file.
  std::map<std::string, int> commits() const {
    std::map<std::string, int> m;
    std::ifstream in(out_);
    for (std::string line; std::getline(in, line);) ++m[line];
    return m;
  }
  void expect_each_once(long phases, long tasks, long except = -1) const {
    auto m = commits();
    EXPECT_EQ(m.size(), static_cast<std::size_t>(phases * tasks - (except >= 0 ? phases : 0)));
    for (long p = 0; p < phases; ++p)
      for (long i = 0; i < tasks; ++i) {
        std::string t = std::to_string(p) + ":" + std::to_string(i);
        EXPECT_EQ(m[t], i == except ? 0 : 1) << "task " << t;
      }
  }
  Result<Report> run(std::vector<std::string> args, Options o = {}) {
    args.push_back("out=" + out_);
    return run_job(REDFLOW_SPITS_TEST_JOB, args, o);
  }
  fs::path dir_;
  std::string out_;
};

class SpitsShapes : public SpitsRun, public ::testing::WithParamInterface<std::pair<unsigned, unsigned>> {};

TEST_P(SpitsShapes, EveryTaskCommittedExactlyOnce) {
  Options o;
  o.task_managers = GetParam().first;
  o.workers = GetParam().second;
  auto r = run({"tasks=500", "work_us=20"}, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->generated, 500u);
  EXPECT_EQ(r->committed, 500u);
  EXPECT_TRUE(r->poisoned.empty());
  ASSERT_EQ(r->task_managers.size(), o.task_managers);
  std::uint64_t committed = 0, results = 0, pushed = 0;
  for (const auto& t : r->task_managers) {
    committed += t.committed;
    results += t.results;
    pushed += t.pushed;
    EXPECT_GT(t.pushed, 0u) << t.name << " got no work: round-robin failed";
  }
  EXPECT_EQ(committed, 500u);
  EXPECT_EQ(results, 500u + r->duplicates);
  EXPECT_EQ(pushed, 500u + r->resubmissions);
  expect_each_once(1, 500);
}

INSTANTIATE_TEST_SUITE_P(TaskManagersTimesWorkers, SpitsShapes,
                         ::testing::Values(std::pair{1u, 1u}, std::pair{1u, 2u}, std::pair{1u, 5u}, std::pair{2u, 1u}, std::pair{2u, 2u},
                                           std::pair{5u, 1u}, std::pair{5u, 2u}));

TEST_F(SpitsRun, AStragglerIsResubmittedElsewhereAndItsLaterResultDiscarded) {
  Options o;
  o.task_managers = 2;
  o.workers = 2;
  // When generation ends, tasks 38 and 39 are still running on one Task
  // Manager each; the queue wraps and each is re-submitted to the other. Task
  // 39's first copy commits at ~300 ms and its second at ~600 ms, while task
  // 38 (900 ms) still holds the phase open: that second result is discarded.
  // (work_us: 2 ms tasks, so Workers take one task at a time and neither
  // straggler waits behind the other in a Worker's batch.)
  auto r = run({"tasks=40", "work_us=2000", "slow=39:300,38:900"}, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->committed, 40u);
  EXPECT_GE(r->resubmissions, 2u);
  EXPECT_GE(r->duplicates, 1u);
  EXPECT_EQ(r->task_managers[0].results + r->task_managers[1].results, 40u + r->duplicates);
  expect_each_once(1, 40);
}

TEST_F(SpitsRun, ATaskManagerIsNotSentACopyOfATaskItAlreadyHolds) {
  Options o;
  o.workers = 2;
  auto r = run({"tasks=20", "slow=19:200"}, o);  // one Task Manager: nowhere else to send the straggler
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->committed, 20u);
  EXPECT_EQ(r->resubmissions, 0u);
  EXPECT_EQ(r->duplicates, 0u);
  EXPECT_LT(r->seconds, 5.0);  // not stuck behind copies of the straggler
  expect_each_once(1, 20);
}

TEST_F(SpitsRun, APoisonedTaskIsSetAsideAfterThreeStrikesAndNamed) {
  Options o;
  o.workers = 2;
  auto r = run({"tasks=30", "poison=7"}, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->committed, 29u);
  ASSERT_EQ(r->poisoned.size(), 1u);
  EXPECT_EQ(r->poisoned[0].id, 7u);
  EXPECT_EQ(r->poisoned[0].strikes, 3u);
  EXPECT_NE(r->poisoned[0].last_error.find("task is poisoned (poison=)"), std::string::npos) << r->poisoned[0].last_error;
  EXPECT_EQ(r->poisoned[0].preview, "303a37");  // "0:7"
  EXPECT_EQ(r->strikes, 3u);
  expect_each_once(1, 30, 7);
}

TEST_F(SpitsRun, AThrowingExecuteIsAStrikeNotACrash) {
  Options o;
  o.workers = 2;
  o.strikes = 2;
  auto r = run({"tasks=10", "throw=4"}, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->poisoned.size(), 1u);
  EXPECT_EQ(r->poisoned[0].id, 4u);
  EXPECT_EQ(r->poisoned[0].strikes, 2u);
  EXPECT_NE(r->poisoned[0].last_error.find("threw: task threw (throw=)"), std::string::npos) << r->poisoned[0].last_error;
  expect_each_once(1, 10, 4);
}

TEST_F(SpitsRun, MainRunsPhasesInSequence) {
  Options o;
  o.task_managers = 2;
  o.workers = 2;
  auto r = run({"tasks=25", "phases=3"}, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->phases, 3u);
  EXPECT_EQ(r->committed, 75u);
  expect_each_once(3, 25);
  // Phase p's commits all come before phase p+1's: a phase ends only when all its tasks are committed.
  std::ifstream in(out_);
  int phase = 0;
  for (std::string line; std::getline(in, line);) {
    int p = std::stoi(line.substr(0, line.find(':')));
    EXPECT_GE(p, phase) << line;
    phase = p;
  }
}

TEST_F(SpitsRun, ARunWithACompleteLogCommitsNothingAgain) {
  Options o;
  o.workers = 2;
  o.log_path = (dir_ / "job.log").string();
  auto first = run({"tasks=50", "phases=2"}, o);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->committed, 100u);
  auto second = run({"tasks=50", "phases=2"}, o);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->committed, 0u);
  EXPECT_EQ(second->from_log, 100u);
  expect_each_once(2, 50);
  auto other = run({"tasks=51", "phases=2"}, o);  // other args: another job
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("belongs to another job"), std::string::npos) << other.status().ToString();
}

TEST_F(SpitsRun, ACommitInDoubtWithoutWasCommittedIsCommittedAgainAndCounted) {
  Options o;
  o.workers = 2;
  o.log_path = (dir_ / "job.log").string();
  ASSERT_TRUE(run({"tasks=10"}, o).ok());
  // The last record is the last commit's "committed": without it, that task
  // was begun and never finished, as if the Job Manager died inside commit_task.
  fs::resize_file(o.log_path, fs::file_size(o.log_path) - 32);
  std::string last;
  {
    std::ifstream in(out_);
    for (std::string line; std::getline(in, line);) last = line;
  }
  auto r = run({"tasks=10"}, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->in_doubt, 1u);
  EXPECT_EQ(r->in_doubt_recommitted, 1u);  // the test job has no was_committed: the documented window
  EXPECT_EQ(r->committed, 1u);
  EXPECT_EQ(r->from_log, 9u);
  auto m = commits();
  EXPECT_EQ(m[last], 2) << last;
  EXPECT_EQ(m.size(), 10u);
}

TEST_F(SpitsRun, PoisonedTasksStaySetAsideAfterARestart) {
  Options o;
  o.workers = 2;
  o.log_path = (dir_ / "job.log").string();
  ASSERT_TRUE(run({"tasks=20", "poison=3"}, o).ok());
  auto again = run({"tasks=20", "poison=3"}, o);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->committed, 0u);
  EXPECT_EQ(again->strikes, 0u);
  ASSERT_EQ(again->poisoned.size(), 1u);
  EXPECT_EQ(again->poisoned[0].id, 3u);
  expect_each_once(1, 20, 3);
}

TEST_F(SpitsRun, ANonDeterministicGeneratorIsCaughtAgainstTheLog) {
  Options o;
  o.workers = 2;
  o.log_path = (dir_ / "job.log").string();
  const std::string salt = (dir_ / "salt").string();
  std::ofstream(salt) << "a";
  ASSERT_TRUE(run({"tasks=5", "salt_file=" + salt}, o).ok());
  std::ofstream(salt) << "b";  // same args, other tasks
  auto r = run({"tasks=5", "salt_file=" + salt}, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("task 0 differs from the one in the commit log: generate_task must be deterministic"),
            std::string::npos)
      << r.status().ToString();
  EXPECT_EQ(commits().size(), 5u);  // nothing committed by the refused run
}

// The Committer as a remote Task Manager will drive it: tasks lost with their
// Task Manager are strikes too, and a late result of a committed task is a duplicate.
TEST_F(SpitsRun, TasksLostWithTheirTaskManagerAreStrikes) {
  auto job = JobPlugin::load(REDFLOW_SPITS_TEST_JOB);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  ASSERT_TRUE((*job)->setup({"out=" + out_}).ok());
  SubmittedQueue queue;
  queue.add(0, "0:0", 1);
  queue.add(1, "0:1", 2);
  Report report;
  report.task_managers.resize(1);
  Committer committer(**job, queue, nullptr, 3, report);
  using O = ResultMessage::Outcome;
  for (int i = 0; i < 2; ++i) {
    std::vector<ResultMessage> lost{{0, O::kLost, "peer gone"}};
    ASSERT_TRUE(committer.take(lost, 0).ok());
  }
  ASSERT_TRUE(committer.strike(0, "Task Manager 'tm-3' missed its heartbeats").ok());
  ASSERT_EQ(report.poisoned.size(), 1u);
  EXPECT_EQ(report.poisoned[0].id, 0u);
  EXPECT_EQ(report.poisoned[0].last_error, "Task Manager 'tm-3' missed its heartbeats");
  std::vector<ResultMessage> ok{{1, O::kOk, "r0:1"}, {1, O::kOk, "r0:1"}, {0, O::kOk, "r0:0"}};
  ASSERT_TRUE(committer.take(ok, 0).ok());
  EXPECT_EQ(report.committed, 1u);
  EXPECT_EQ(report.duplicates, 2u);  // task 1's second result, and the poisoned task's late one
  EXPECT_EQ(report.task_managers[0].failed, 2u);
  EXPECT_EQ(report.task_managers[0].results, 5u);
  EXPECT_TRUE(queue.empty());
  ASSERT_TRUE((*job)->teardown(true).ok());
  EXPECT_EQ(commits(), (std::map<std::string, int>{{"0:1", 1}}));
}

// Runs `n` tasks through `tm` and waits for their results.
void drain(TaskManager& tm, JobWakeup& wakeup, int n) {
  std::vector<TaskMessage> tasks;
  for (int i = 0; i < n; ++i) tasks.push_back({static_cast<std::uint64_t>(i), "0:" + std::to_string(i)});
  tm.push(tasks);
  std::vector<ResultMessage> results;
  while (results.size() < static_cast<std::size_t>(n)) {
    tm.pull(results);
    wakeup.wait(50);
  }
  for (const auto& r : results) EXPECT_EQ(r.outcome, ResultMessage::Outcome::kOk) << r.bytes;
}

TEST_F(SpitsRun, AdaptivePrefetchDeepensTheQueueForShortTasksOnly) {
  for (const char* work : {"work_us=0", "work_us=6000"}) {
    const bool trivial = std::string(work) == "work_us=0";
    auto job = JobPlugin::load(REDFLOW_SPITS_TEST_JOB);
    ASSERT_TRUE(job.ok()) << job.status().ToString();
    ASSERT_TRUE((*job)->setup({work}).ok());
    JobWakeup wakeup;
    LocalTaskManager tm("t", **job, 2, 4, true, wakeup);
    EXPECT_EQ(tm.room(), 6u);  // workers + prefetch before any task was timed
    // Many batches, so that the moving mean forgets a batch the scheduler
    // preempted on a busy machine.
    for (int round = 0; round < (trivial ? 60 : 2); ++round) drain(tm, wakeup, static_cast<int>(std::min<std::size_t>(tm.room(), 200)));
    if (trivial) EXPECT_GT(tm.room(), 100u) << "trivial tasks: the margin should cover ~10 ms of work";
    else EXPECT_EQ(tm.room(), 6u) << "6 ms tasks: 10 ms of work for 2 Workers is within the base margin";
    LocalTaskManager fixed("f", **job, 2, 4, false, wakeup);
    drain(fixed, wakeup, 6);
    EXPECT_EQ(fixed.room(), 6u);  // --prefetch given: fixed
    tm.stop();
    fixed.stop();
    ASSERT_TRUE((*job)->teardown(true).ok());
  }
}

void expect_error(const Result<Report>& r, const std::string& text) {
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(text), std::string::npos) << r.status().ToString();
}

TEST_F(SpitsRun, PluginErrorsAreNamed) {
  expect_error(run_job((dir_ / "missing.so").string(), {}, {}), "cannot load SPITS job");
  expect_error(run_job(REDFLOW_SPITS_TEST_JOB_NO_ENTRY, {}, {}), "has no entry point redflow_spits_job_v1()");
  expect_error(run_job(REDFLOW_SPITS_TEST_JOB_ABI2, {}, {}), "has ABI version 2; this redflow runs version 1 jobs");
  expect_error(run({"fail_setup=1"}), "SPITS job 'test_job': setup failed: asked to fail (fail_setup)");
  expect_error(run({"tasks=10", "fail_generate_at=4"}), "generate_task failed: asked to fail (fail_generate_at) (generating task 4)");
  fs::remove(out_);
  expect_error(run({"tasks=10", "fail_commit_at=2"}), "commit_task failed: asked to fail (fail_commit_at)");
  EXPECT_EQ(commits().size(), 2u);  // the commits before the failing one stay
  Options none;
  none.workers = 0;
  expect_error(run({"tasks=1"}, none), "at least one Task Manager with one Worker");
}

}  // namespace
}  // namespace redflow::spits
