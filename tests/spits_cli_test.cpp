// `redflow spits` as a user runs it: the example jobs (Monte Carlo pi, the
// block filter checked byte for byte against a sequential filter of a real
// file), a Job Manager killed with SIGKILL mid-job and restarted from its
// commit log, in-doubt commits, --stats, --progress, and named errors.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "block_filter.hpp"
#include "cli_helpers.hpp"

namespace redflow::testing {
namespace {

using SpitsCli = CliTest;

const std::string kPi = REDFLOW_SPITS_PI;
const std::string kFilter = REDFLOW_SPITS_FILTER;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Task id -> how many lines the pi job's out file has for it.
std::map<std::uint64_t, int> pi_lines(const std::string& path) {
  std::map<std::uint64_t, int> m;
  std::ifstream in(path);
  std::uint64_t i, h, s;
  while (in >> i >> h >> s) ++m[i];
  return m;
}

void expect_pi_each_once(const std::string& path, std::uint64_t tasks) {
  auto m = pi_lines(path);
  EXPECT_EQ(m.size(), tasks);
  for (std::uint64_t i = 0; i < tasks; ++i) EXPECT_EQ(m[i], 1) << "task " << i;
}

// Runs a shell command line (not through REDFLOW_CLI), output and exit status.
RunResult run_cli_in(const std::string& cmd) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST_F(SpitsCli, PiCommitsEveryTaskOnceAndWritesStats) {
  auto r = run_cli("spits " + kPi + " tasks=200 samples=20000 out=" + path("pi2.txt") + " --local-workers 2 --task-managers 2 --stats " +
              path("s.json") + " --progress");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("pi ~= 3.14"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("200 tasks committed in 1 phase"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Task Manager local-1 (2 workers): "), std::string::npos) << r.output;
  // Each number says what it counts.
  EXPECT_NE(r.output.find("tasks: 200 generated, "), std::string::npos) << r.output;
  // Re-submissions happen as the queue wraps, with nothing lost or struck: the text says when, and its count is the JSON's.
  const auto resubmitted = nlohmann::json::parse(slurp(path("s.json")))["resubmissions"].get<std::uint64_t>();
  EXPECT_NE(r.output.find(std::to_string(resubmitted) + " pushed again as the queue wrapped (not committed yet: still running elsewhere, lost or struck)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(" tasks pushed to it, "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" discarded as already committed), "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find(", results "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("spits: 200 committed"), std::string::npos) << r.output;  // --progress's last line
  EXPECT_NE(r.output.find("poisoned tasks: none"), std::string::npos) << r.output;
  expect_pi_each_once(path("pi2.txt"), 200);
  auto j = nlohmann::json::parse(slurp(path("s.json")));
  EXPECT_EQ(j["job"], "pi");
  EXPECT_EQ(j["committed"], 200);
  EXPECT_EQ(j["generated"], 200);
  ASSERT_EQ(j["task_managers"].size(), 2u);
  EXPECT_EQ(j["task_managers"][0]["committed"].get<int>() + j["task_managers"][1]["committed"].get<int>(), 200);
  // The JSON's discarded results are the text's, and no more than came back beyond the commits.
  const std::uint64_t discarded = j["duplicates_discarded"].get<std::uint64_t>();
  EXPECT_NE(r.output.find(", " + std::to_string(discarded) + (discarded == 1 ? " result discarded" : " results discarded")), std::string::npos)
      << "JSON says " << discarded << "\n" << r.output;
  std::uint64_t back = 0, failed = 0;
  for (const auto& tm : j["task_managers"]) back += tm["results"].get<std::uint64_t>(), failed += tm["failed"].get<std::uint64_t>();
  EXPECT_LE(200 + failed + discarded, back) << "more results discarded than came back beyond the 200 commits";
  EXPECT_TRUE(j["poisoned"].empty());
}

// Run again with the same out= (no log): the file holds this run's lines
// only, and the estimate counts each task once.
TEST_F(SpitsCli, PiRunAgainStartsItsOutFileOver) {
  for (int run = 0; run < 2; ++run) {
    auto r = run_cli("spits " + kPi + " tasks=50 samples=1000 out=" + path("pi.txt") + " --local-workers 2");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("from 50 tasks, 50000 samples"), std::string::npos) << "run " << run << ":\n" << r.output;
    expect_pi_each_once(path("pi.txt"), 50);
  }
}

// A Task Manager that would listen beyond loopback without keys is told
// which of its own flags to give: it is no driver.
TEST_F(SpitsCli, ATaskManagerRefusedKeylessListeningIsToldItsOwnFlags) {
  auto r = run_cli("spits-worker " + kPi + " --announce " + path("tms") + " --listen 'tcp://0.0.0.0:*' --wait 1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("refusing to listen on tcp://0.0.0.0:* without keys"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--key FILE.key (this process's secret key) and --authorized-keys FILE"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("DRIVER"), std::string::npos) << r.output;
}

TEST_F(SpitsCli, OnATerminalProgressIsRedrawnInPlace) {
  // script(1) gives the command a terminal, as a user at a shell has.
  auto r = run_cli_in("script -qec '" + std::string(REDFLOW_CLI) + " spits " + kPi + " tasks=2000 samples=100000 out=" + path("pi.txt") +
                      " -w 2 --progress' /dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\rspits: "), std::string::npos) << r.output;       // back to the line's start
  EXPECT_NE(r.output.find(" tasks/s"), std::string::npos) << r.output;         // the live rate
  EXPECT_NE(r.output.find("\033[K"), std::string::npos) << r.output;          // erase what a longer line left
  EXPECT_NE(r.output.find("spits: 2000 committed"), std::string::npos) << r.output;
}

TEST_F(SpitsCli, BlockFilterMatchesTheSequentialFilterByteForByte) {
  const std::string in = std::string(REDFLOW_SHARED_DATA) + "/stg/100/rand0173.stg";
  const std::string signal = slurp(in);
  ASSERT_GT(signal.size(), 20000u);
  std::string expected(signal.size(), '\0');
  spits_example::smooth(reinterpret_cast<const std::uint8_t*>(signal.data()), 0, signal.size(), 0, signal.size(), 3,
                        reinterpret_cast<std::uint8_t*>(expected.data()));
  ASSERT_NE(expected, signal);  // the filter changes the file, so a copy would not pass
  auto r = run_cli("spits " + kFilter + " in=" + in + " out=" + path("out.bin") + " block=37 radius=3 --local-workers 2 --task-managers 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(std::to_string((signal.size() + 36) / 37) + " tasks committed"), std::string::npos) << r.output;
  EXPECT_TRUE(slurp(path("out.bin")) == expected) << "filtered file differs from the sequential filter";
}

// Starts `redflow spits ARGS` as a child (output to a file) and returns its pid.
pid_t spawn_spits(std::vector<std::string> args, const std::string& log) {
  args.insert(args.begin(), "spits");
  return testing::spawn_cli(args, log);
}

// Waits until the pi out file has at least `lines` lines (or the child ends); true if it got there.
bool wait_for_lines(const std::string& path, std::size_t lines, pid_t child) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (pi_lines(path).size() >= lines) return true;
    int status;
    if (waitpid(child, &status, WNOHANG) == child) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

TEST_F(SpitsCli, AJobManagerKilledTwiceResumesFromItsLogCommittingEachTaskOnce) {
  const std::uint64_t tasks = 2000;
  std::vector<std::string> args{kPi, "tasks=2000", "samples=100000", "out=" + path("pi.txt"), "--local-workers", "2", "--log", path("pi.log")};
  for (std::size_t kill_at : {200u, 900u}) {
    pid_t child = spawn_spits(args, path("run.txt"));
    ASSERT_GT(child, 0);
    bool mid_job = wait_for_lines(path("pi.txt"), kill_at, child);
    ::kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    ASSERT_TRUE(mid_job) << "the job ended before it could be killed at " << kill_at << " commits: " << slurp(path("run.txt"));
    ASSERT_TRUE(WIFSIGNALED(status));
    auto m = pi_lines(path("pi.txt"));
    EXPECT_LT(m.size(), tasks);
    for (const auto& [id, n] : m) EXPECT_EQ(n, 1) << "task " << id << " committed twice before the restart";
  }
  auto r = run_cli("spits " + kPi + " tasks=2000 samples=100000 out=" + path("pi.txt") + " --local-workers 2 --log " + path("pi.log") +
                   " --stats " + path("s.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("pi ~= 3.14"), std::string::npos) << r.output;
  expect_pi_each_once(path("pi.txt"), tasks);
  auto j = nlohmann::json::parse(slurp(path("s.json")));
  EXPECT_GE(j["skipped_from_log"].get<std::uint64_t>(), 900u);
  // Skipped tasks include in-doubt ones the job said it had; committed ones include in-doubt ones it had not.
  EXPECT_EQ(j["committed"].get<std::uint64_t>() + j["skipped_from_log"].get<std::uint64_t>(), tasks);
}

TEST_F(SpitsCli, ACommitInDoubtIsAskedAboutAndATornTailIgnored) {
  const std::string cmd = "spits " + kPi + " tasks=50 samples=1000 out=" + path("pi.txt") + " --local-workers 2 --log " + path("pi.log") +
                          " --stats " + path("s.json");
  ASSERT_EQ(run_cli(cmd).exit_code, 0);
  // Drop the last "committed" record: its task is now begun but not finished,
  // as when a Job Manager dies between commit_task and its log record.
  std::filesystem::resize_file(path("pi.log"), std::filesystem::file_size(path("pi.log")) - 32);
  {
    std::ofstream(path("pi.log"), std::ios::app | std::ios::binary) << "torn!";  // and a torn tail after it
  }
  auto r = run_cli(cmd);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(slurp(path("s.json")));
  EXPECT_EQ(j["in_doubt"], 1);
  EXPECT_EQ(j["in_doubt_recommitted"], 0);  // the pi job's was_committed() found its line
  EXPECT_EQ(j["torn_log_bytes"], 5);
  EXPECT_EQ(j["committed"], 0);
  EXPECT_EQ(j["skipped_from_log"], 50);
  expect_pi_each_once(path("pi.txt"), 50);
}

TEST_F(SpitsCli, PoisonedTasksExitWithStatusThreeAndAreNamed) {
  auto r = run_cli(std::string("spits ") + REDFLOW_SPITS_TEST_JOB + " tasks=20 poison=5 --local-workers 2 --prefetch 1 --stats " +
                   path("s.json"));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("poisoned task 5 (bytes 303a35): 3 strikes, last: SPITS job 'test_job': execute_task failed: task is poisoned"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("1 poisoned task set aside"), std::string::npos) << r.output;
  auto j = nlohmann::json::parse(slurp(path("s.json")));
  EXPECT_EQ(j["poisoned"][0]["task"], 5);
  EXPECT_EQ(j["committed"], 19);
  EXPECT_EQ(j["strikes"], 3);
  r = run_cli(std::string("spits ") + REDFLOW_SPITS_TEST_JOB + " tasks=20 poison=5 --strikes 1 --stats " + path("s.json"));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("poisoned task 5 (bytes 303a35): 1 strikes"), std::string::npos) << r.output;
  EXPECT_EQ(nlohmann::json::parse(slurp(path("s.json")))["strikes"], 1);
}

TEST_F(SpitsCli, BadInputGetsNamedErrors) {
  auto r = run_cli("spits " + path("nope.so"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("cannot open '" + path("nope.so") + "': No such file or directory"), std::string::npos) << r.output;
  r = run_cli(std::string("spits ") + REDFLOW_SPITS_TEST_JOB_NO_ENTRY);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("has no entry point redflow_spits_job_v1()"), std::string::npos) << r.output;
  r = run_cli("spits " + kPi + " tasks=10 out=" + path("pi.txt") + " colour=blue");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("user code error: SPITS job 'pi': setup failed: unknown arg 'colour' (known: tasks, samples, seed, out)"), std::string::npos)
      << "a job is not an actor\n" << r.output;
  r = run_cli(std::string("spits ") + REDFLOW_SPITS_TEST_JOB + " tasks=10 fail_generate_at=3");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("redflow: error: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("generate_task failed: asked to fail (fail_generate_at) (generating task 3)"), std::string::npos) << r.output;
  r = run_cli("spits " + kPi + " out=" + path("pi.txt") + " --local-workers 0");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--local-workers"), std::string::npos) << r.output;
}

TEST_F(SpitsCli, HelpTeachesTheContract) {
  auto r = run_cli("spits --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* s : {"redflow_spits_job_v1()", "circular queue", "committed exactly once", "--local-workers", "--log", "--stats",
                        "--progress", "Exit status", "tasks=1000"})
    EXPECT_NE(r.output.find(s), std::string::npos) << s << " missing from:\n" << r.output;
}

}  // namespace
}  // namespace redflow::testing
