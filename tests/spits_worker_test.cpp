// SPITS with dial-in Task Managers: `redflow worker --connect` processes
// that a Job Manager listening in this process (run_job with listen) WELCOMEs
// as Task Managers with the job. Every task is committed exactly once and the
// commits equal the local run's, with two workers and when one of them is
// killed (SIGKILL) after its first results; a worker that offers only the
// tile role is refused by name; a plugin path the worker cannot open is an
// error naming it. And the one worker for every model: three `redflow worker
// --persist` processes, started once, serve a graph run, a SPITS job and a
// stream program one after another, the same PIDs throughout, each driver
// naming them and each result equal to its one-process run.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "net_workers.hpp"
#include "redflow/spits.hpp"
#include "redflow/stream.hpp"
#include "scratch_dir.hpp"

namespace redflow::spits {
namespace {

namespace fs = std::filesystem;
using testing::WorkerProcesses;

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

// The lines of a commit file, sorted: commits come in no particular order.
std::vector<std::string> sorted_lines(const fs::path& p) {
  std::vector<std::string> lines;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

// A free loopback port, for drivers that must listen one after another
// where the same persistent workers find them.
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t n = sizeof a;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n), 0);
  ::close(fd);
  return ntohs(a.sin_port);
}

class SpitsWorker : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_scratch_path("redflow_spits_worker");
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    procs_.end_all();
    fs::remove_all(dir_);
  }
  Options listening(unsigned min_task_managers) const {
    Options o;
    o.task_managers = 0;
    o.cluster.listen = "tcp://127.0.0.1:*";
    o.cluster.min_workers = min_task_managers;
    o.cluster.heartbeat_timeout_s = 1;
    o.cluster.wait_s = 20;
    return o;
  }
  // What the same job commits in one process.
  std::vector<std::string> local_commits(const std::vector<std::string>& args) {
    Options o;
    o.workers = 2;
    std::vector<std::string> a = args;
    a.push_back("out=" + (dir_ / "local.txt").string());
    auto r = run_job(REDFLOW_SPITS_TEST_JOB, a, o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return sorted_lines(dir_ / "local.txt");
  }
  // A process's stderr goes to this file.
  int log_fd(const std::string& name) const { return ::open((dir_ / name).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644); }

  fs::path dir_;
  WorkerProcesses procs_;
};

TEST_F(SpitsWorker, TwoWorkersCommitEveryTaskOnceAndEqualTheLocalRun) {
  const std::vector<std::string> args = {"tasks=400", "work_us=2000"};
  const auto expected = local_commits(args);
  ASSERT_EQ(expected.size(), 400u);
  Options o = listening(2);
  o.cluster.on_listening = [&](const std::string& endpoint) {
    for (const char* name : {"w0", "w1"}) procs_.spawn(endpoint, {"--cores", "2", "--name", name});
  };
  std::vector<std::string> a = args;
  a.push_back("out=" + (dir_ / "net.txt").string());
  auto report = testing::within_seconds(60, "a dial-in SPITS job", [&] { return run_job(REDFLOW_SPITS_TEST_JOB, a, o); });
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(sorted_lines(dir_ / "net.txt"), expected) << "the commits differ from the local run's (a task missing, or committed twice)";
  EXPECT_EQ(report->committed, 400u);
  ASSERT_EQ(report->task_managers.size(), 2u);
  std::set<std::string> names;
  for (const auto& t : report->task_managers) {
    names.insert(t.name);
    EXPECT_EQ(t.workers, 2u) << t.name << ": its Workers are the worker's --cores";
    EXPECT_FALSE(t.host.empty()) << t.name;
    EXPECT_EQ(t.lost, 0u) << t.name;
    EXPECT_GT(t.committed, 0u) << t.name;
  }
  EXPECT_EQ(names, (std::set<std::string>{"w0", "w1"}));
  for (pid_t p : std::vector<pid_t>(procs_.pids())) EXPECT_EQ(procs_.wait_exit(p, 10), 0) << "a worker did not end with 0 after the Job Manager's BYE";
}

TEST_F(SpitsWorker, AWorkerKilledAfterItsFirstResultsLosesNoTaskAndCommitsNoneTwice) {
  const std::vector<std::string> args = {"tasks=600", "work_us=5000"};
  const auto expected = local_commits(args);
  // The victim serves alone until its results have committed, then dies and
  // a second worker takes over: the kill lands mid-job, with tasks in its hands.
  std::string endpoint;
  pid_t victim = -1;
  std::atomic<bool> killed{false};
  Options o = listening(1);
  o.cluster.on_listening = [&](const std::string& e) {
    endpoint = e;
    victim = procs_.spawn(e, {"--cores", "2", "--name", "victim"});
  };
  o.on_progress = [&](const spits::Report& so_far) {
    if (so_far.committed < 50 || killed.exchange(true)) return;
    procs_.kill9(victim);
    procs_.spawn(endpoint, {"--cores", "2", "--name", "heir"});
  };
  std::vector<std::string> a = args;
  a.push_back("out=" + (dir_ / "net.txt").string());
  auto report = testing::within_seconds(90, "a dial-in SPITS job losing a worker", [&] { return run_job(REDFLOW_SPITS_TEST_JOB, a, o); });
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_TRUE(killed.load()) << "the job ended before the kill";
  EXPECT_EQ(sorted_lines(dir_ / "net.txt"), expected) << "the commits differ from the local run's (a task missing, or committed twice)";
  EXPECT_TRUE(report->poisoned.empty());
  ASSERT_EQ(report->task_managers.size(), 2u);
  for (const auto& t : report->task_managers) {
    EXPECT_GT(t.committed, 0u) << t.name;
    EXPECT_EQ(t.lost, t.name == "victim" ? 1u : 0u) << t.name;
  }
  {  // The one report shape: the loss under "failed", what it delivered late under "recovered".
    const auto j = nlohmann::json::parse(to_json(redflow::report(*report)));
    EXPECT_EQ(j["failed"]["workers_lost"].get<std::uint64_t>(), 1u);
    EXPECT_EQ(j["units"].get<std::uint64_t>(), report->committed);
    std::uint64_t late = 0;
    for (const auto& t : report->task_managers) late += t.late;
    EXPECT_EQ(j["recovered"]["late_results"].get<std::uint64_t>(), late);
    for (const auto& p : j["places"]) EXPECT_EQ(p["lost"].get<bool>(), p["name"] == "victim") << p.dump();
  }
  EXPECT_EQ(procs_.wait_exit(victim, 5), -2) << "the victim was not killed by a signal";
}

TEST_F(SpitsWorker, AWorkerOfferingOnlyTheTileRoleIsRefusedByName) {
  const int fd = log_fd("tile.log");
  ASSERT_GE(fd, 0);
  int tile_exit = -3;
  Options o = listening(1);
  o.cluster.on_listening = [&](const std::string& endpoint) {
    // The tile first, alone: the Job Manager's I/O thread answers its HELLO
    // while this waits for it to end; then a worker that serves the job.
    const pid_t tile = testing::spawn_process({REDFLOW_CLI, "tile", "--connect", endpoint, "--name", "graph-only", "--connect-timeout", "20"},
                                              {.err_fd = fd});
    tile_exit = procs_.wait_exit(tile, 20);
    procs_.spawn(endpoint, {"--name", "task-manager"});
  };
  auto report = testing::within_seconds(60, "a dial-in SPITS job", [&] {
    return run_job(REDFLOW_SPITS_TEST_JOB, {"tasks=50", "out=" + (dir_ / "net.txt").string()}, o);
  });
  ::close(fd);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(sorted_lines(dir_ / "net.txt").size(), 50u);
  ASSERT_EQ(report->task_managers.size(), 1u);
  EXPECT_EQ(report->task_managers[0].name, "task-manager");
  EXPECT_EQ(tile_exit, 1) << "a refused worker exits 1";
  const std::string said = read_text(dir_ / "tile.log");
  EXPECT_NE(said.find("refused this worker"), std::string::npos) << said;
  EXPECT_NE(said.find("not task manager"), std::string::npos) << "the refusal does not name the role it lacks:\n" << said;
}

TEST_F(SpitsWorker, APluginPathTheWorkerCannotOpenIsAnErrorNamingIt) {
  // The Job Manager loads its copy of the job, which then vanishes: the path
  // it sends is one the worker cannot open (as on a machine without the
  // shared file system).
  const fs::path job = dir_ / "elsewhere" / "job.so";
  fs::create_directories(job.parent_path());
  fs::copy_file(REDFLOW_SPITS_TEST_JOB, job);
  const int fd = log_fd("worker.log");
  ASSERT_GE(fd, 0);
  pid_t worker = -1;
  std::string endpoint;
  Options o = listening(1);
  o.cluster.wait_s = 3;
  o.cluster.on_listening = [&](const std::string& e) {
    endpoint = e;
    fs::remove(job);
    worker = testing::spawn_process({REDFLOW_CLI, "worker", "--connect", endpoint, "--name", "no-shared-fs", "--connect-timeout", "20"},
                                    {.err_fd = fd});
  };
  auto report = testing::within_seconds(60, "a dial-in SPITS job", [&] { return run_job(job.string(), {"tasks=10"}, o); });
  ::close(fd);
  ASSERT_FALSE(report.ok()) << "the job ran without a Task Manager that could load it";
  // Welcomed, then gone at once: the Job Manager either is still waiting for
  // its first Task Manager or has started and found none live; either way it
  // says where to start one.
  EXPECT_NE(report.status().message().find("redflow worker --connect " + endpoint), std::string::npos) << report.status().message();
  EXPECT_EQ(procs_.wait_exit(worker, 20), 1) << "a worker that cannot load the job exits 1";
  const std::string said = read_text(dir_ / "worker.log");
  EXPECT_NE(said.find("cannot load SPITS job '" + job.string() + "'"), std::string::npos) << said;
  EXPECT_NE(said.find("shared file system"), std::string::npos) << said;
}

// Each driver on the same port, one after another; the workers dial the port
// again after every BYE.
TEST_F(SpitsWorker, ThreePersistentWorkersServeAGraphRunASpitsJobAndAStreamProgram) {
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(free_port());
  const std::vector<std::string> names = {"p0", "p1", "p2"};
  std::vector<pid_t> pids;
  for (const auto& name : names) {
    std::vector<std::string> flags = testing::kWorkerSlots;
    for (const char* f : {"--persist", "--cores", "2", "--name"}) flags.push_back(f);
    flags.push_back(name);
    pids.push_back(procs_.spawn(endpoint, flags));
  }
  const std::set<std::string> all(names.begin(), names.end());
  auto still_running = [&](const char* after) {
    for (pid_t p : pids) EXPECT_EQ(procs_.wait_exit(p, 0), -1) << "worker pid " << p << " exited after " << after;
  };

  // 1. A graph run on 3 remote tiles.
  const Graph g = testing::random_builtin_dag(40, 7);
  const auto x0 = testing::seeded_bytes(testing::kNetBytes, 1), x1 = testing::seeded_bytes(testing::kNetBytes, 2);
  const Inputs inputs{{"X0", x0}, {"X1", x1}};
  const Outputs graph_expected = testing::local_reference(g, inputs);
  testing::within_seconds(60, "the graph run", [&] {
    RuntimeOptions o = testing::remote_options(0, 3, Scheduler::kHeft);
    o.cluster.listen = endpoint;
    Runtime rt(o);
    auto loaded = rt.load(g, Registry::with_builtins());
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    auto out = loaded->execute(inputs);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(*out, graph_expected);
    std::set<std::string> seen;
    for (const auto& t : loaded->last_stats().tiles) seen.insert(t.worker);
    EXPECT_EQ(seen, all) << "the graph driver does not name the three workers";
  });
  still_running("the graph run");

  // 2. A SPITS job on the same three.
  const std::vector<std::string> args = {"tasks=300", "work_us=2000"};
  const auto spits_expected = local_commits(args);
  Options so = listening(3);
  so.cluster.listen = endpoint;
  std::vector<std::string> a = args;
  a.push_back("out=" + (dir_ / "net.txt").string());
  auto report = testing::within_seconds(60, "the SPITS job", [&] { return run_job(REDFLOW_SPITS_TEST_JOB, a, so); });
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(sorted_lines(dir_ / "net.txt"), spits_expected);
  std::set<std::string> task_managers;
  for (const auto& t : report->task_managers) task_managers.insert(t.name);
  EXPECT_EQ(task_managers, all) << "the Job Manager does not name the three workers";
  still_running("the SPITS job");

  // 3. A stream program on the same three.
  const auto operators = stream::OperatorRegistry::with_builtins();
  auto program = stream::Program::from_dot(R"(digraph chain {
    src [operator="counter", args="n=2000 start=1"];
    d   [operator="dup", args="outputs=2"];
    s   [operator="sum"];
    all [operator="collect"];
    tot [operator="collect"];
    src -> d [token=8];
    d -> all [token=8, from_port=0];
    d -> s [token=8, from_port=1];
    s -> tot [token=8];
  })", operators);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  auto stream_expected = stream::run(*program, stream::RunOptions{stream::Mode::kPool, 2});
  ASSERT_TRUE(stream_expected.ok()) << stream_expected.status().ToString();
  stream::ClusterOptions c;
  c.cluster.listen = endpoint;
  c.cluster.min_workers = 3;
  c.cluster.wait_s = 20;
  c.place = "naive";
  auto streamed = testing::within_seconds(60, "the stream program", [&] { return stream::run_cluster(*program, stream::RunOptions{}, c); });
  ASSERT_TRUE(streamed.ok()) << streamed.status().ToString();
  EXPECT_EQ(streamed->outputs, stream_expected->outputs);
  std::set<std::string> nodes;
  for (const auto& n : streamed->nodes) nodes.insert(n.worker);
  EXPECT_EQ(nodes, all) << "the stream driver does not name the three workers";
  still_running("the stream program");
  EXPECT_EQ(procs_.pids(), pids) << "the workers are not the processes started at first";
}

}  // namespace
}  // namespace redflow::spits
