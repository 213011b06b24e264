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
#include <memory>
#include <sstream>
#include <string>

#include "cli_helpers.hpp"
#include "spawn_process.hpp"
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
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);  // the child keeps only the write end, as its stderr
    pid = testing::spawn_process(std::move(args), {.err_fd = fds[1]});
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

// The demo graph and its plain output, for the launch tests below.
struct Demo {
  std::string dir = std::string(REDFLOW_SOURCE_DIR) + "/examples/demo/";
  std::string run_args(const fs::path& out) const {
    return dir + "pipeline.dot --input A=" + dir + "A.bin --output Y=" + out.string() + " --slots 8 --slot-bytes 65536";
  }
};

TEST_F(NetCli, AKeyedDriverRefusesAnUnlistedWorkerAndRunsWithAListedOne) {
  const Demo demo;
  const fs::path plain = dir_ / "plain.bin", keyed = dir_ / "keyed.bin", addr = dir_ / "job.addr";
  ASSERT_EQ(testing::run_cli("run " + demo.run_args(plain)).exit_code, 0);
  for (const char* who : {"driver", "listed", "stranger"})
    ASSERT_EQ(testing::run_cli("keygen --out " + (dir_ / who).string()).exit_code, 0) << who;
  fs::copy_file(dir_ / "listed.pub", dir_ / "workers.txt");
  std::vector<std::string> args = {REDFLOW_CLI, "run"};
  std::istringstream split(demo.run_args(keyed));
  for (std::string a; split >> a;) args.push_back(a);
  const std::vector<std::string> extra = {"--listen", "tcp://127.0.0.1:*", "--min-tiles", "1", "--tile-wait", "20",
                                          "--key", (dir_ / "driver.key").string(), "--authorized-keys", (dir_ / "workers.txt").string(),
                                          "--address-file", addr.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  Driver driver(args);
  ASSERT_TRUE(driver.read_until("published in", 20)) << driver.seen;
  // The stranger's key is not listed: the driver never welcomes it, and says so.
  auto stranger = testing::run_cli("tile --address-file " + addr.string() + " --key " + (dir_ / "stranger.key").string() +
                                   " --slots 8 --slot-bytes 65536 --connect-timeout 2");
  EXPECT_EQ(stranger.exit_code, 1) << stranger.output;
  EXPECT_NE(stranger.output.find("authorized-keys"), std::string::npos) << stranger.output;
  EXPECT_TRUE(driver.read_until("refused a CURVE peer", 5)) << driver.seen;
  // A plain-text worker is refused too.
  auto plain_worker = testing::run_cli("tile --address-file " + addr.string() + " --slots 8 --slot-bytes 65536 --connect-timeout 2");
  EXPECT_EQ(plain_worker.exit_code, 1) << plain_worker.output;
  auto listed = testing::run_cli("tile --address-file " + addr.string() + " --key " + (dir_ / "listed.key").string() + " --slots 8 --slot-bytes 65536");
  EXPECT_EQ(listed.exit_code, 0) << listed.output;
  ASSERT_EQ(driver.wait(20), 0) << driver.seen;
  EXPECT_EQ(slurp(keyed), slurp(plain));
  EXPECT_FALSE(fs::exists(addr)) << "the driver removes its address file";
}

TEST_F(NetCli, ListeningBeyondLoopbackWithoutKeysIsRefused) {
  const Demo demo;
  auto r = testing::run_cli("run " + demo.run_args(dir_ / "y.bin") + " --listen tcp://0.0.0.0:0 --min-tiles 1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("without keys"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--authorized-keys"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "y.bin"));
}

TEST_F(NetCli, ThreeStartersOfOneCommandMeetThroughAnAddressFile) {
  const Demo demo;
  const fs::path plain = dir_ / "plain.bin";
  ASSERT_EQ(testing::run_cli("run " + demo.run_args(plain)).exit_code, 0);
  const std::string addr = (dir_ / "job.addr").string();
  std::vector<std::unique_ptr<Driver>> starters;
  for (int i = 0; i < 3; ++i) {
    std::vector<std::string> args = {REDFLOW_CLI, "run"};
    std::istringstream split(demo.run_args(dir_ / ("out" + std::to_string(i) + ".bin")));
    for (std::string a; split >> a;) args.push_back(a);
    for (const std::string& a : {std::string("--address-file"), addr, std::string("--min-tiles"), std::string("2")}) args.push_back(a);
    starters.push_back(std::make_unique<Driver>(args));
  }
  int drivers = 0;
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(starters[i]->wait(40), 0) << starters[i]->seen;
    const fs::path out = dir_ / ("out" + std::to_string(i) + ".bin");
    if (starters[i]->seen.find("published in") != std::string::npos) {
      ++drivers;
      EXPECT_EQ(slurp(out), slurp(plain));
      EXPECT_NE(starters[i]->seen.find("on 2 tiles"), std::string::npos) << starters[i]->seen;
    } else {
      EXPECT_NE(starters[i]->seen.find("serves a tile"), std::string::npos) << starters[i]->seen;
      EXPECT_FALSE(fs::exists(out)) << "a worker writes no output";
    }
  }
  EXPECT_EQ(drivers, 1);
  EXPECT_FALSE(fs::exists(addr));
}

TEST_F(NetCli, UnderMpirunRankZeroDrivesAndTheOthersServeTiles) {
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) GTEST_SKIP() << "mpirun not installed (scripts/bootstrap installs openmpi-bin)";
  const Demo demo;
  const fs::path plain = dir_ / "plain.bin", mpi = dir_ / "mpi.bin";
  ASSERT_EQ(testing::run_cli("run " + demo.run_args(plain)).exit_code, 0);
  const std::string cmd = "timeout 60 mpirun -n 3 --oversubscribe --allow-run-as-root " + std::string(REDFLOW_CLI) + " run " +
                          demo.run_args(mpi) + " --rendezvous-dir " + dir_.string() + " 2>&1";
  std::string output;
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) output.append(buf, n);
  ASSERT_EQ(::pclose(p), 0) << output;
  EXPECT_EQ(slurp(mpi), slurp(plain));
  EXPECT_NE(output.find("on 2 tiles"), std::string::npos) << output;
  EXPECT_NE(output.find("rank 1 of 3 (mpirun) serves a tile"), std::string::npos) << output;
  EXPECT_NE(output.find("rank 2 of 3 (mpirun) serves a tile"), std::string::npos) << output;
  for (const auto& e : fs::directory_iterator(dir_)) EXPECT_EQ(e.path().extension(), ".bin") << "left behind: " << e.path();
}

}  // namespace
}  // namespace redflow
