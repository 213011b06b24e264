// How `redflow server` shares its workers, with real processes: jobs ask for
// a number of workers (`submit --workers N`, default the server's
// --min-workers); two small jobs run at the same time on disjoint workers; a
// big job waits while a younger small one backfills (one whose time limit
// ends it before the big job's reservation; one without a limit waits behind
// the big job); a job over its time
// limit ends with a named error; and a cancelled job's workers come back to
// the server as soon as its driver is gone, not after a heartbeat timeout;
// a job whose worker never took its REDIRECT gets the next idle one; idle
// workers wait as long as the server beats them, and a dead one is dropped.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "net_fake_worker.hpp"
#include "server_cluster.hpp"

namespace redflow {
namespace {

using Clock = std::chrono::steady_clock;

class ServerSharing : public testing::ServerClusterFixture {
 protected:
  // Waits (bounded) until the server has `n` idle workers.
  void wait_idle(Client& c, std::size_t n, double limit_s = 60) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(limit_s);
    for (;;) {
      auto w = c.workers();
      ASSERT_TRUE(w.ok()) << w.status().ToString();
      if (w->idle.size() == n) return;
      ASSERT_LT(Clock::now(), deadline) << w->idle.size() << " idle workers, not " << n << ":\n" << file_text(dir_ / "server.log");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  // Waits (bounded) until job `id` is in `state`; returns it.
  JobInfo wait_state(Client& c, std::uint64_t id, JobState state, double limit_s = 60) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(limit_s);
    for (;;) {
      auto j = c.status(id);
      EXPECT_TRUE(j.ok()) << j.status().ToString();
      if (!j.ok() || j->state == state) return j.ok() ? *j : JobInfo{};
      if (Clock::now() > deadline) {
        ADD_FAILURE() << "job " << id << " is " << to_string(j->state) << ", not " << to_string(state) << "\n" << file_text(dir_ / "server.log");
        return *j;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  // A SPITS job committing to `out` in the test's directory (absolute: the
  // workers' plugin opens it too, in their own directory).
  std::vector<std::string> spits_job(unsigned tasks, unsigned work_us, const std::string& out) const {
    return {"spits", REDFLOW_SPITS_TEST_JOB, "tasks=" + std::to_string(tasks), "work_us=" + std::to_string(work_us), "out=" + (dir_ / out).string()};
  }
  // Where line `what` is in the server's log (npos when absent).
  std::size_t log_at(const std::string& what) const { return file_text(dir_ / "server.log").find(what); }
};

TEST_F(ServerSharing, TwoSmallJobsRunAtOnceOnDisjointWorkersAndABigJobWaitsWhileASmallOneBackfills) {
  testing::within_seconds(180, "jobs sharing the workers", [&] {
    const std::string endpoint = start_server();
    ASSERT_FALSE(endpoint.empty());
    start_workers(endpoint);
    Client c = client();
    wait_idle(c, 3);
    const std::string cwd = dir_.string();
    const auto expected_two = spits_reference({"tasks=1500", "work_us=4000"});
    const auto expected_one = spits_reference({"tasks=300", "work_us=4000"});
    const Path a = random_input("a.bin", 31);
    // Time limits far beyond what the jobs need: they make the reservation (job_table.hpp).
    auto two = c.submit(spits_job(1500, 4000, "two.txt"), cwd, {.workers = 2, .time_limit_s = 600});
    auto big = c.submit(graph_job(a, dir_ / "y.bin"), cwd);  // the server's --min-workers: all three
    auto later = c.submit(spits_job(300, 4000, "later.txt"), cwd, {.workers = 1});  // no limit: could delay the big job
    auto one = c.submit(spits_job(300, 4000, "one.txt"), cwd, {.workers = 1, .time_limit_s = 300});
    ASSERT_TRUE(two.ok() && big.ok() && later.ok() && one.ok());

    // The one-worker job with a time limit backfills beside the two-worker one while the big job waits;
    // the one without a limit waits behind the big job, though a worker is idle for it.
    const JobInfo one_running = wait_state(c, *one, JobState::kRunning);
    auto two_now = c.status(*two), big_now = c.status(*big), later_now = c.status(*later);
    ASSERT_TRUE(two_now.ok() && big_now.ok() && later_now.ok());
    EXPECT_EQ(two_now->state, JobState::kRunning) << "the small jobs did not run at the same time";
    EXPECT_EQ(big_now->state, JobState::kQueued) << "the big job started without its three workers";
    EXPECT_EQ(later_now->state, JobState::kQueued) << "a job with no time limit backfilled, and could delay the big one";
    EXPECT_EQ(one_running.workers.size(), 1u);
    EXPECT_EQ(two_now->workers.size(), 2u);
    std::set<std::string> both = names(one_running);
    for (const auto& n : names(*two_now)) EXPECT_TRUE(both.insert(n).second) << n << " was sent to both small jobs";
    EXPECT_EQ(both, (std::set<std::string>{"p0", "p1", "p2"}));

    const JobInfo j_two = wait(c, *two), j_one = wait(c, *one), j_big = wait(c, *big), j_later = wait(c, *later);
    EXPECT_EQ(j_later.state, JobState::kSucceeded) << j_later.message << "\n" << job_log(*later);
    EXPECT_EQ(j_two.state, JobState::kSucceeded) << j_two.message << "\n" << job_log(*two);
    EXPECT_EQ(j_one.state, JobState::kSucceeded) << j_one.message << "\n" << job_log(*one);
    EXPECT_EQ(j_big.state, JobState::kSucceeded) << j_big.message << "\n" << job_log(*big);
    EXPECT_EQ(names(j_two).size(), 2u) << "the report of the two-worker job names other places";
    EXPECT_EQ(names(j_one).size(), 1u);
    EXPECT_EQ(names(j_big), (std::set<std::string>{"p0", "p1", "p2"}));
    EXPECT_EQ(commit_lines(dir_ / "two.txt"), expected_two) << "a task missing, or committed twice";
    EXPECT_EQ(commit_lines(dir_ / "one.txt"), expected_one);
    EXPECT_EQ(file_text(dir_ / "y.bin"), graph_reference(a));
    const std::size_t big_started = log_at("job 2 started"), later_started = log_at("job 3 started"), one_started = log_at("job 4 started");
    ASSERT_NE(big_started, std::string::npos);
    ASSERT_NE(later_started, std::string::npos);
    EXPECT_LT(one_started, big_started) << "the younger small job did not start before the older big one";
    EXPECT_GT(later_started, big_started) << "the job without a time limit started before the big one\n" << file_text(dir_ / "server.log");
    expect_same_workers_running();
  });
}

// The crash limit through the server: a graph job whose actor kills the
// worker it runs on fails at its `--crash-limit 1`, naming the actor, while
// a SPITS job beside it on the other workers runs to its end.
TEST_F(ServerSharing, AJobOverItsCrashLimitFailsNamingTheActorAndTheOthersGoOn) {
  testing::within_seconds(180, "crash limit through the server", [&] {
    const std::string endpoint = start_server();
    ASSERT_FALSE(endpoint.empty());
    start_workers(endpoint, 3, {"--lib", REDFLOW_TEST_PLUGIN});
    Client c = client();
    wait_idle(c, 3);
    const std::string cwd = dir_.string();
    std::ofstream(dir_ / "poison.dot") << "digraph \"poison\" {\n  \"X\" [kind=input, bytes=64];\n  \"Y\" [kind=output, bytes=64];\n"
                                          "  \"killer\" [actor=\"test.crash\"];\n  \"X\" -> \"killer\" [port=0];\n  \"killer\" -> \"Y\";\n}\n";
    std::ofstream(dir_ / "x.bin", std::ios::binary) << std::string(64, '\0');
    const auto expected = spits_reference({"tasks=600", "work_us=2000"});
    auto other = c.submit(spits_job(600, 2000, "other.txt"), cwd, {.workers = 2});
    auto poison = c.submit({"run", (dir_ / "poison.dot").string(), "--lib", REDFLOW_TEST_PLUGIN, "--crash-limit", "1", "--input",
                            "X=" + (dir_ / "x.bin").string(), "--output", "Y=" + (dir_ / "y.bin").string()},
                           cwd, {.workers = 1});
    ASSERT_TRUE(other.ok() && poison.ok());
    const JobInfo failed = wait(c, *poison);
    EXPECT_EQ(failed.state, JobState::kFailed) << job_log(*poison);
    EXPECT_EQ(failed.exit_status, 3) << "fault tolerance gave up\n" << job_log(*poison);
    EXPECT_NE(failed.message.find("actor 'killer' is poisoned: 1 tile was lost while it ran on them"), std::string::npos)
        << failed.message << "\n" << job_log(*poison);
    EXPECT_FALSE(std::filesystem::exists(dir_ / "y.bin"));
    const JobInfo done = wait(c, *other);
    EXPECT_EQ(done.state, JobState::kSucceeded) << done.message << "\n" << job_log(*other);
    EXPECT_EQ(commit_lines(dir_ / "other.txt"), expected) << "a task missing, or committed twice";
  });
}

TEST_F(ServerSharing, AJobOverItsTimeLimitEndsWithANamedErrorAndACancelledJobsWorkersComeBackAtOnce) {
  testing::within_seconds(180, "time limit and cancel", [&] {
    // A heartbeat timeout far longer than the job's end: workers that came
    // back within it came back because their driver's connection closed.
    const std::string endpoint = start_server(3, {"--heartbeat-timeout", "60"});
    ASSERT_FALSE(endpoint.empty());
    start_workers(endpoint);
    Client c = client();
    wait_idle(c, 3);
    const std::string cwd = dir_.string();
    auto limited = c.submit(spits_job(100000, 10000, "limited.txt"), cwd, {.time_limit_s = 2});
    ASSERT_TRUE(limited.ok());
    const JobInfo l = wait(c, *limited, 60);
    EXPECT_EQ(l.state, JobState::kFailed);
    EXPECT_EQ(l.exit_status, 124);
    EXPECT_NE(l.message.find("job 1 is over its time limit of 2 s"), std::string::npos) << l.message;
    EXPECT_LT(commit_lines(dir_ / "limited.txt").size(), 100000u) << "the job ran to its end";
    wait_idle(c, 3, 20);  // within 20 s, a third of the heartbeat timeout

    auto cancelled = c.submit(spits_job(100000, 10000, "cancelled.txt"), cwd);
    ASSERT_TRUE(cancelled.ok());
    wait_state(c, *cancelled, JobState::kRunning);
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (!std::filesystem::exists(dir_ / "cancelled.txt") || std::filesystem::file_size(dir_ / "cancelled.txt") == 0) {
      ASSERT_LT(Clock::now(), deadline) << "the job committed nothing:\n" << file_text(dir_ / "server.log");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const Path a = random_input("a.bin", 41);
    const auto cancel_at = Clock::now();
    ASSERT_TRUE(c.cancel(*cancelled).ok());
    auto next = c.submit(graph_job(a, dir_ / "y.bin"), cwd);
    ASSERT_TRUE(next.ok());
    const JobInfo n = wait(c, *next, 60);
    const double took = std::chrono::duration<double>(Clock::now() - cancel_at).count();
    EXPECT_EQ(n.state, JobState::kSucceeded) << n.message << "\n" << job_log(*next);
    EXPECT_LT(took, 20) << "the cancelled job's workers waited out a heartbeat timeout before the next job";
    EXPECT_EQ(file_text(dir_ / "y.bin"), graph_reference(a));
    EXPECT_EQ(c.status(*cancelled)->state, JobState::kCancelled);
    expect_same_workers_running();
  });
}

// A worker that said HELLO and then never reads (its process froze, or its
// connection died unseen) is sent first; it never confirms its REDIRECT, so
// the job gets the real worker idle behind it, and runs.
TEST_F(ServerSharing, AJobWhoseWorkerNeverTookItsRedirectGetsTheNextIdleOne) {
  testing::within_seconds(120, "a job whose first worker did not go", [&] {
    const std::string endpoint = start_server(1);
    ASSERT_FALSE(endpoint.empty());
    Client c = client();
    zmq::context_t context;
    zmq::socket_t ghost(context, zmq::socket_type::dealer);
    testing::connect_and_say_hello(ghost, endpoint, testing::fake_tile_hello("ghost"));
    wait_idle(c, 1);
    start_workers(endpoint, 1);
    wait_idle(c, 2);
    const Path a = random_input("a.bin", 41);
    auto id = c.submit(graph_job(a, dir_ / "y.bin"), dir_.string(), {.workers = 1});
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    const JobInfo j = wait(c, *id, 60);
    ASSERT_EQ(j.state, JobState::kSucceeded) << j.message << "\n" << job_log(*id) << cluster_logs();
    EXPECT_EQ(file_text(dir_ / "y.bin"), graph_reference(a));
    EXPECT_EQ(names(j), std::set<std::string>{"p0"});
    EXPECT_NE(log_at("worker ghost on test did not go to job 1 (no BYE within 5 s of its REDIRECT)"), std::string::npos)
        << file_text(dir_ / "server.log");
    EXPECT_NE(log_at("job 1 was short of workers; sent 1 more"), std::string::npos) << file_text(dir_ / "server.log");
  });
}

// The server beats its idle workers: one with a 4 s --connect-timeout
// waits through 12 s without a job and then takes one; one with
// --idle-timeout 2 ends by itself with exit 0; and a worker killed while
// idle is dropped from the idle list when a beat to it cannot be sent.
TEST_F(ServerSharing, IdleWorkersWaitAsLongAsTheServerBeatsThemAndADeadOneIsDropped) {
  testing::within_seconds(120, "idle workers at a server", [&] {
    const std::string endpoint = start_server(1);
    ASSERT_FALSE(endpoint.empty());
    Client c = client();
    workers_.set_quiet(false);
    const pid_t patient = workers_.spawn_cli({"worker", "--connect", endpoint, "--persist", "--connect-timeout", "4", "--name", "patient"},
                                             (dir_ / "patient.log").string());
    wait_idle(c, 1);
    EXPECT_EQ(workers_.wait_exit(patient, 12), -1) << "a worker with --connect-timeout 4 left its server after less than 12 s:\n"
                                                  << file_text(dir_ / "patient.log");
    auto w = c.workers();
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    EXPECT_EQ(w->idle.size(), 1u) << "the patient worker is no longer idle at the server";
    const Path a = random_input("a.bin", 51);
    auto id = c.submit(graph_job(a, dir_ / "y.bin"), dir_.string(), {.workers = 1});
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    const JobInfo j = wait(c, *id, 60);
    ASSERT_EQ(j.state, JobState::kSucceeded) << j.message << "\n" << job_log(*id);
    EXPECT_EQ(names(j), std::set<std::string>{"patient"});
    EXPECT_EQ(file_text(dir_ / "y.bin"), graph_reference(a));
    wait_idle(c, 1);  // back at the server after its job

    const pid_t brief = workers_.spawn_cli({"--log-level", "info", "worker", "--connect", endpoint, "--persist", "--idle-timeout", "2", "--name", "brief"},
                                           (dir_ / "brief.log").string());
    wait_idle(c, 2);
    EXPECT_EQ(workers_.wait_exit(brief, 30), 0) << "a worker with --idle-timeout 2 did not end well by itself:\n" << file_text(dir_ / "brief.log");
    EXPECT_NE(file_text(dir_ / "brief.log").find("(--idle-timeout): ending"), std::string::npos) << file_text(dir_ / "brief.log");
    wait_idle(c, 1, 20);  // the server found it gone: only the patient one is idle

    ::kill(patient, SIGKILL);
    EXPECT_NE(workers_.wait_exit(patient, 10), -1);
    wait_idle(c, 0, 20);
    EXPECT_NE(log_at("idle worker patient on "), std::string::npos) << file_text(dir_ / "server.log");
  });
}

}  // namespace
}  // namespace redflow
