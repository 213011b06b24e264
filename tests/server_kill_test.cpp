// `kill -9` of `redflow server` at a seeded moment, then a restart on the
// same journal, ten times: a SPITS job and a graph job of many executions
// running, two more queued behind them. Wherever the kill lands (before a
// job started, mid-job, after some ended), every job ends succeeded, once:
// its output is its one-process run's, every SPITS task is committed
// exactly once, and no driver ran a job to completion twice.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "server_cluster.hpp"

namespace redflow {
namespace {

class ServerKillNine : public testing::ServerClusterFixture, public ::testing::WithParamInterface<unsigned> {
 protected:
  // Job `id`'s log cut at each start of its driver (each start appends
  // there, and says first where it listens).
  std::vector<std::string> starts(std::uint64_t id) const {
    const std::string log = job_log(id), mark = "redflow: listening on ";
    std::vector<std::string> out;
    for (std::size_t at = log.find(mark); at != std::string::npos;) {
      const std::size_t next = log.find(mark, at + 1);
      out.push_back(log.substr(at, next == std::string::npos ? std::string::npos : next - at));
      at = next;
    }
    return out;
  }
  // The number after `before` in `text`, or `otherwise` when `before` is not there.
  static std::uint64_t number_after(const std::string& text, const std::string& before, std::uint64_t otherwise = 0) {
    const std::size_t at = text.find(before);
    return at == std::string::npos ? otherwise : std::stoull(text.substr(at + before.size()));
  }
};

TEST_P(ServerKillNine, EveryJobEndsOnceWithItsOneProcessOutput) {
  const unsigned seed = GetParam();
  testing::within_seconds(240, "server kill -9 trial " + std::to_string(seed), [&] {
    std::mt19937 random(seed);
    // A worker sent to a driver that died with the server before it welcomed
    // the worker comes back after the server's --wait: 10 s keeps a trial short.
    const std::vector<std::string> server_flags = {"--wait", "10"};
    const std::string endpoint = start_server(1, server_flags);
    ASSERT_FALSE(endpoint.empty());
    start_workers(endpoint, 3, {"--lib", REDFLOW_TEST_PLUGIN});
    std::ofstream(dir_ / "slow.dot") << "digraph \"slow\" {\n  \"X\" [kind=input, bytes=256];\n  \"Y\" [kind=output, bytes=256];\n"
                                        "  \"nap\" [actor=\"test.sleep\", args=\"ms=30\"];\n  \"X\" -> \"nap\" [port=0];\n  \"nap\" -> \"Y\";\n}\n";
    const Path x = random_input("x.bin", seed), a = random_input("a.bin", 100 + seed);
    const std::vector<std::string> big_args = {"tasks=2000", "work_us=4000"}, small_args = {"tasks=200", "work_us=1000"};
    const auto big_expected = spits_reference(big_args), small_expected = spits_reference(small_args);
    const std::string graph_expected = graph_reference(a);
    auto spits_words = [&](const std::vector<std::string>& args, const std::string& out) {
      std::vector<std::string> w = {"spits", REDFLOW_SPITS_TEST_JOB};
      w.insert(w.end(), args.begin(), args.end());
      w.push_back("out=" + (dir_ / out).string());
      return w;
    };
    Client c = client();
    const std::string cwd = dir_.string();
    auto big = c.submit(spits_words(big_args, "big.txt"), cwd, {.workers = 2});
    auto slow = c.submit({"run", (dir_ / "slow.dot").string(), "--lib", REDFLOW_TEST_PLUGIN, "--repeat", "100", "--input", "X=" + x.string(),
                          "--output", "Y=" + (dir_ / "y_slow.bin").string()},
                         cwd, {.workers = 1});
    auto graph = c.submit(graph_job(a, dir_ / "y.bin"), cwd, {.workers = 2});
    auto small = c.submit(spits_words(small_args, "small.txt"), cwd, {.workers = 1});
    ASSERT_TRUE(big.ok() && slow.ok() && graph.ok() && small.ok());

    // The seed picks the moment: anywhere from before the first commit to after the first jobs ended.
    const auto kill_after = std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 3000)(random));
    std::this_thread::sleep_for(kill_after);
    std::vector<JobState> before;
    for (std::uint64_t id : {*big, *slow, *graph, *small}) {
      auto j = c.status(id);
      ASSERT_TRUE(j.ok()) << j.status().ToString();
      before.push_back(j->state);
    }
    stop_server();
    const std::size_t big_committed = commit_lines(dir_ / "big.txt").size();
    ASSERT_EQ(start_server(1, server_flags), endpoint);

    Client again = client();
    auto listed = again.list();
    ASSERT_TRUE(listed.ok()) << listed.status().ToString();
    EXPECT_EQ(listed->size(), 4u) << "a job was lost with the server";
    const std::vector<std::uint64_t> ids = {*big, *slow, *graph, *small};
    for (std::size_t k = 0; k < ids.size(); ++k) {
      const JobInfo j = wait(again, ids[k], 180);
      EXPECT_EQ(j.state, JobState::kSucceeded) << "job " << ids[k] << ": " << j.message << "\n" << job_log(ids[k]) << cluster_logs();
      // A job that had ended before the kill is not started again; one that ran is started once more at most.
      if (before[k] == JobState::kSucceeded) {
        EXPECT_EQ(j.starts, 1u) << "job " << ids[k] << " ran again after it had succeeded";
      }
      EXPECT_LE(j.starts, 2u) << "job " << ids[k];
    }
    EXPECT_EQ(commit_lines(dir_ / "big.txt"), big_expected) << "a task missing, or committed twice (" << big_committed << " before the kill)";
    EXPECT_EQ(commit_lines(dir_ / "small.txt"), small_expected);
    EXPECT_EQ(file_text(dir_ / "y_slow.bin"), file_text(x)) << "test.sleep copies its input";
    EXPECT_EQ(file_text(dir_ / "y.bin"), graph_expected);
    // No work done twice. A start killed mid-job says nothing. A start that
    // ends did only what was left: a SPITS job commits the tasks its commit
    // log does not hold, a graph job runs the executions after the last one
    // recorded (the last one at least, for the outputs). So a job whose
    // driver had ended before the server recorded it is started again and
    // commits nothing, or runs its last execution again.
    for (std::uint64_t id : {*big, *small}) {
      const std::uint64_t total = id == *big ? 2000 : 200;
      for (const std::string& start : starts(id)) {
        if (start.find("spits: job '") == std::string::npos) continue;  // killed
        const std::uint64_t done_before = number_after(start, "commit log: "), now = number_after(start.substr(start.find("spits: job '")), "': ");
        EXPECT_EQ(done_before + now, total) << "a start committed other than what was left\n" << start;
      }
    }
    for (std::uint64_t id : {*slow, *graph}) {
      const std::uint64_t repeat = id == *slow ? 100 : 3;
      for (const std::string& start : starts(id)) {
        const std::size_t summary = start.find(" run(s), last ");
        if (summary == std::string::npos) continue;  // killed
        const std::size_t from = start.rfind(", ", summary);
        const std::uint64_t ran = std::stoull(start.substr(from + 2, summary - from - 2));
        EXPECT_EQ(number_after(start, "resuming after execution ") + ran, repeat) << "a start ran other than what was left\n" << start;
      }
    }
    expect_same_workers_running();
    std::fprintf(stderr, "trial %u: killed after %lld ms; before the kill: %s %s %s %s; %zu of 2000 tasks committed\n", seed,
                 static_cast<long long>(kill_after.count()), to_string(before[0]), to_string(before[1]), to_string(before[2]),
                 to_string(before[3]), big_committed);
  });
}

INSTANTIATE_TEST_SUITE_P(Seeds, ServerKillNine, ::testing::Range(1u, 11u));

}  // namespace
}  // namespace redflow
