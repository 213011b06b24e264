// A `redflow server` with real processes for the server tests: a server
// started with a journal in a fresh directory (its stderr in server.log),
// `redflow worker --persist` processes named p0, p1, ... started once, a
// redflow::Client to it, and the one-process runs each job's output is
// compared with. Everything started is killed (SIGKILL) and reaped when the
// test ends, even after a failed assertion.
//
// Thread-safety: a fixture is used by its test's thread only.
#pragma once

#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cli_helpers.hpp"
#include "net_workers.hpp"
#include "redflow/client.hpp"
#include "redflow/spits.hpp"
#include "scratch_dir.hpp"

namespace redflow::testing {

// The jobs' heartbeat timeout: short, so that tests which lose a worker
// find it lost quickly; under a sanitizer longer, since with both
// sanitizer stages running at once (load 15 on 2 cores) a live Task
// Manager's heartbeats came more than 1 s apart and it was declared lost.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr const char* kServerHeartbeatTimeout = "3";
#else
inline constexpr const char* kServerHeartbeatTimeout = "1";
#endif

class ServerClusterFixture : public ::testing::Test {
 protected:
  using Path = std::filesystem::path;

  static std::string file_text(const Path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  // A SPITS job's committed lines, sorted: equal sets whatever the commit order.
  static std::vector<std::string> commit_lines(const Path& p) {
    std::vector<std::string> lines;
    std::ifstream in(p);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    std::sort(lines.begin(), lines.end());
    return lines;
  }
  // The worker names of a job ("p0 on HOST" -> "p0").
  static std::set<std::string> names(const JobInfo& j) {
    std::set<std::string> out;
    for (const auto& w : j.workers) out.insert(w.substr(0, w.find(" on ")));
    return out;
  }

  void SetUp() override {
    dir_ = test_scratch_path("redflow_server");
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    stop_server();
    workers_.end_all();
    std::filesystem::remove_all(dir_);
  }

  // Starts the server (a job runs on `min_workers` unless it asks
  // otherwise; `extra` flags after the others; a heartbeat timeout of
  // kServerHeartbeatTimeout and a --wait of 60 s unless `extra` gives them)
  // and waits for its server file; returns the workers' endpoint ("" after
  // a failure).
  std::string start_server(unsigned min_workers = 3, const std::vector<std::string>& extra = {}) {
    std::filesystem::remove(dir_ / "server");
    const int log = ::open((dir_ / "server.log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    std::vector<std::string> args = {REDFLOW_CLI, "--log-level", "info", "server", "--min-workers", std::to_string(min_workers),
                                     "--server-file", (dir_ / "server").string(), "--journal", (dir_ / "journal").string()};
    auto given = [&](const char* flag) { return std::find(extra.begin(), extra.end(), flag) != extra.end(); };
    if (!given("--wait")) args.insert(args.end(), {"--wait", "60"});
    if (!given("--heartbeat-timeout")) args.insert(args.end(), {"--heartbeat-timeout", kServerHeartbeatTimeout});
    args.insert(args.end(), extra.begin(), extra.end());
    server_ = spawn_process(args, {.err_fd = log});
    ::close(log);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!std::filesystem::exists(dir_ / "server")) {
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "no server file within 20 s:\n" << file_text(dir_ / "server.log");
        return "";
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::ifstream in(dir_ / "server");
    std::string client, workers;
    std::getline(in, client);
    std::getline(in, workers);
    return workers;
  }
  void stop_server() {
    if (server_ <= 0) return;
    ::kill(server_, SIGKILL);
    ::waitpid(server_, nullptr, 0);
    server_ = -1;
  }
  // `count` persistent workers p0, p1, ... on `endpoint`, each saying at
  // info level where it goes into pN.log (shown by cluster_logs()).
  // `extra`: more of the worker's flags (e.g. --lib PLUGIN.so).
  void start_workers(const std::string& endpoint, unsigned count = 3, const std::vector<std::string>& extra = {}) {
    workers_.set_quiet(false);
    for (unsigned i = 0; i < count; ++i) {
      const std::string name = "p" + std::to_string(i);
      std::vector<std::string> a = {"--log-level", "info", "worker", "--connect", endpoint, "--connect-timeout", "120", "--persist",
                                    "--cores", "2", "--name", name};
      a.insert(a.end(), extra.begin(), extra.end());
      worker_pids_.push_back(workers_.spawn_cli(a, (dir_ / (name + ".log")).string()));
      ++worker_logs_;
    }
  }
  // The server's log and every worker's: what a failed job check shows.
  std::string cluster_logs() const {
    std::string out = "--- server.log\n" + file_text(dir_ / "server.log");
    for (unsigned i = 0; i < worker_logs_; ++i) {
      const std::string name = "p" + std::to_string(i) + ".log";
      out += "--- ";
      out += name;
      out += "\n";
      out += file_text(dir_ / name);
    }
    return out;
  }
  void expect_same_workers_running() {
    for (pid_t p : worker_pids_) EXPECT_EQ(workers_.wait_exit(p, 0), -1) << "worker pid " << p << " exited";
    EXPECT_EQ(workers_.pids(), worker_pids_) << "the workers are not the processes started at first";
  }
  Client client() {
    auto c = Client::connect({.server_file = (dir_ / "server").string()});
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return std::move(*c);
  }
  std::string job_log(std::uint64_t id) const { return file_text(dir_ / "journal" / ("job-" + std::to_string(id) + ".log")); }
  JobInfo wait(Client& c, std::uint64_t id, double limit_s = 90) {
    auto j = c.wait(id, limit_s);
    EXPECT_TRUE(j.ok()) << "job " << id << ": " << j.status().ToString() << "\n" << cluster_logs();
    return j.ok() ? *j : JobInfo{};
  }
  // A graph job's words: the demo graph, input `a`, output Y to `y`.
  std::vector<std::string> graph_job(const Path& a, const Path& y) const {
    return {"run", std::string(REDFLOW_SOURCE_DIR) + "/examples/demo/pipeline.dot", "--input", "A=" + a.string(), "--output",
            "Y=" + y.string(), "--repeat", "3"};
  }
  // What the same graph gives in one process.
  std::string graph_reference(const Path& a) {
    const Path y = dir_ / ("reference_" + a.filename().string());
    auto r = run_cli("run " + std::string(REDFLOW_SOURCE_DIR) + "/examples/demo/pipeline.dot --input A=" + a.string() + " --output Y=" + y.string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return file_text(y);
  }
  // What the SPITS test job commits in one process.
  std::vector<std::string> spits_reference(std::vector<std::string> args) {
    spits::Options o;
    o.workers = 2;
    const Path out = dir_ / "spits_reference.txt";
    std::filesystem::remove(out);
    args.push_back("out=" + out.string());
    auto r = spits::run_job(REDFLOW_SPITS_TEST_JOB, args, o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return commit_lines(out);
  }
  Path random_input(const std::string& name, unsigned seed) {
    const auto bytes = seeded_bytes(256, seed);
    std::ofstream(dir_ / name, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return dir_ / name;
  }

  Path dir_;
  pid_t server_ = -1;
  WorkerProcesses workers_;
  std::vector<pid_t> worker_pids_;
  unsigned worker_logs_ = 0;
};

}  // namespace redflow::testing
