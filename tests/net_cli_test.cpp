// `redflow run --listen ... --min-tiles N` and `redflow tile --connect`, end
// to end as a user types them: the driver prints the endpoint it got, two
// worker processes connect, and the output file equals the one a plain
// `redflow run` writes; without workers, --tile-wait ends it with a clear error.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <poll.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <string>

#include "cli_helpers.hpp"
#include "net_workers.hpp"

namespace redflow {
namespace {

namespace fs = std::filesystem;

// The driver as a child process with stderr on a pipe, killed if still running at the end.
struct Driver {
  pid_t pid = -1;
  int err = -1;
  std::string seen;
  explicit Driver(std::vector<std::string> args) {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    pid = ::fork();
    if (pid == 0) {
      ::dup2(fds[1], 2);
      ::close(fds[0]);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    err = fds[0];
  }
  ~Driver() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    ::close(err);
  }
  // Reads stderr until `text` appears (true) or `timeout_s` passes.
  bool read_until(const std::string& text, double timeout_s) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (seen.find(text) == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) return false;
      pollfd p{err, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      char buf[4096];
      const ssize_t n = ::read(err, buf, sizeof buf);
      if (n <= 0) return false;
      seen.append(buf, static_cast<std::size_t>(n));
    }
    return true;
  }
  int wait(double timeout_s) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    for (;;) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        read_until("\x01", 0.05);  // whatever is left on the pipe
        return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
      }
      if (std::chrono::steady_clock::now() > deadline) return -1;
      read_until("\x01", 0.02);
    }
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

class NetCli : public testing::CliTest {};

TEST_F(NetCli, MinTilesWaitsForTwoWorkersAndWritesTheSameOutput) {
  const std::string demo = std::string(REDFLOW_SOURCE_DIR) + "/examples/demo/";
  const fs::path plain = dir_ / "plain.bin", remote = dir_ / "remote.bin";
  auto ref = testing::run_cli("run " + demo + "pipeline.dot --input A=" + demo + "A.bin --output Y=" + plain.string());
  ASSERT_EQ(ref.exit_code, 0) << ref.output;
  Driver driver({REDFLOW_CLI, "run", demo + "pipeline.dot", "--input", "A=" + demo + "A.bin", "--output", "Y=" + remote.string(),
                 "--listen", "tcp://127.0.0.1:*", "--min-tiles", "2", "--slots", "8", "--slot-bytes", "65536"});
  ASSERT_TRUE(driver.read_until("redflow tile --connect ", 20)) << driver.seen;
  const std::size_t at = driver.seen.find("redflow tile --connect ") + 23;
  const std::string endpoint = driver.seen.substr(at, driver.seen.find('\n', at) - at);
  testing::WorkerProcesses workers;
  workers.spawn_n(2, endpoint, testing::kWorkerSlots);
  ASSERT_EQ(driver.wait(30), 0) << driver.seen;
  EXPECT_NE(driver.seen.find("on 2 tiles"), std::string::npos) << driver.seen;
  EXPECT_EQ(slurp(remote), slurp(plain));
  for (pid_t p : std::vector<pid_t>(workers.pids())) EXPECT_EQ(workers.wait_exit(p, 10), 0) << "workers leave on BYE";
}

TEST_F(NetCli, WithoutWorkersTileWaitEndsWithAClearError) {
  const std::string demo = std::string(REDFLOW_SOURCE_DIR) + "/examples/demo/";
  auto r = testing::run_cli("run " + demo + "pipeline.dot --input A=" + demo +
                            "A.bin --listen 'tcp://127.0.0.1:*' --min-tiles 2 --tile-wait 0.5");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("2 remote tile(s)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("0 came"), std::string::npos) << r.output;
}

TEST_F(NetCli, ListenWithoutMinTilesAndTileWithoutConnectAreRefused) {
  const std::string demo = std::string(REDFLOW_SOURCE_DIR) + "/examples/demo/";
  auto r = testing::run_cli("run " + demo + "pipeline.dot --input A=" + demo + "A.bin --listen 'tcp://127.0.0.1:*'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("--min-tiles"), std::string::npos) << r.output;
  r = testing::run_cli("tile");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--connect"), std::string::npos) << r.output;
  r = testing::run_cli("tile --connect tcp://127.0.0.1:1 --connect-timeout 0.3");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("no WELCOME"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace redflow
