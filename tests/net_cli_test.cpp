// `redflow run --listen ... --min-workers N` and `redflow worker --connect`, end
// to end as a user types them: the driver prints the endpoint it got, two
// worker processes connect, and the output file equals the one a plain
// `redflow run` writes; without workers, --wait ends it with a clear error.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <poll.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "cli_helpers.hpp"
#include "net_fake_worker.hpp"
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

// The endpoint a driver started with --listen 'tcp://127.0.0.1:*' printed
// (empty if it printed none within 20 s), without the --lib flags it prints after it.
std::string printed_endpoint(Driver& driver) {
  const std::string hint = "redflow worker --connect ";
  if (!driver.read_until(hint, 20)) return {};
  const std::size_t at = driver.seen.find(hint) + hint.size();
  for (int i = 0; i < 100 && driver.seen.find('\n', at) == std::string::npos; ++i) driver.read_until("\n", 0.05);
  const std::size_t end = driver.seen.find('\n', at);
  if (end == std::string::npos) return {};
  const std::string line = driver.seen.substr(at, end - at);
  return line.substr(0, line.find(' '));
}

// How many times `part` occurs in `text`.
std::size_t occurrences(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

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
                 "--listen", "tcp://127.0.0.1:*", "--min-workers", "2", "--slots", "8", "--slot-bytes", "65536"});
  const std::string endpoint = printed_endpoint(driver);
  ASSERT_FALSE(endpoint.empty()) << driver.seen;
  testing::WorkerProcesses workers;
  workers.spawn_n(2, endpoint, testing::kWorkerSlots);
  ASSERT_EQ(driver.wait(30), 0) << driver.seen;
  EXPECT_NE(driver.seen.find("on 2 tiles"), std::string::npos) << driver.seen;
  EXPECT_EQ(slurp(remote), slurp(plain));
  for (pid_t p : std::vector<pid_t>(workers.pids())) EXPECT_EQ(workers.wait_exit(p, 10), 0) << "workers leave on BYE";
}

TEST_F(NetCli, WithoutWorkersWaitEndsWithAClearError) {
  const std::string demo = std::string(REDFLOW_SOURCE_DIR) + "/examples/demo/";
  auto r = testing::run_cli("run " + demo + "pipeline.dot --input A=" + demo +
                            "A.bin --listen 'tcp://127.0.0.1:*' --min-workers 2 --wait 0.5");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("2 remote tile(s)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("0 came"), std::string::npos) << r.output;
}

TEST_F(NetCli, ListenWithoutMinWorkersAndTileWithoutConnectAreRefused) {
  const std::string demo = std::string(REDFLOW_SOURCE_DIR) + "/examples/demo/";
  auto r = testing::run_cli("run " + demo + "pipeline.dot --input A=" + demo + "A.bin --listen 'tcp://127.0.0.1:*'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--min-workers"), std::string::npos) << r.output;
  r = testing::run_cli("worker");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--connect"), std::string::npos) << r.output;
  r = testing::run_cli("worker --connect tcp://127.0.0.1:1 --connect-timeout 0.3");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("no WELCOME"), std::string::npos) << r.output;
  // The old names are aliases that say what to use instead.
  r = testing::run_cli("tile --connect tcp://127.0.0.1:1 --connect-timeout 0.3");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("use `redflow worker`"), std::string::npos) << r.output;
  r = testing::run_cli("stream-worker --connect tcp://127.0.0.1:1 --connect-timeout 0.3 --threads 1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("use `redflow worker`"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no WELCOME"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("nothing accepted a connection there"), std::string::npos) << r.output;
}

TEST_F(NetCli, AWorkerSaysAtOnceThatNothingAnswersAndKeepsTrying) {
  Driver worker({REDFLOW_CLI, "worker", "--connect", "tcp://127.0.0.1:1", "--connect-timeout", "30"});
  const std::string notice = "nothing answers at tcp://127.0.0.1:1";
  ASSERT_TRUE(worker.read_until(notice, 1.0)) << worker.seen;
  EXPECT_NE(worker.seen.find("retrying"), std::string::npos) << worker.seen;
  // Still trying, and saying so again.
  const std::size_t first = worker.seen.find(notice);
  for (int i = 0; i < 80 && worker.seen.find(notice, first + 1) == std::string::npos; ++i) worker.read_until("\x01", 0.1);
  EXPECT_NE(worker.seen.find(notice, first + 1), std::string::npos) << worker.seen;
  EXPECT_EQ(worker.wait(0), -1) << "the worker stopped trying before its --connect-timeout:\n" << worker.seen;
}

TEST_F(NetCli, AWorkerSaysWhichDriverItServesAndAs) {
  Driver driver({REDFLOW_CLI, "run", testing::kDemo + "pipeline.dot", "--input", "A=" + testing::kDemo + "A.bin", "--listen", "tcp://127.0.0.1:*",
                 "--min-tiles", "1", "--slots", "8", "--slot-bytes", "65536"});
  const std::string endpoint = printed_endpoint(driver);
  ASSERT_FALSE(endpoint.empty()) << driver.seen;
  std::vector<std::string> args = {REDFLOW_CLI, "worker", "--connect", endpoint};
  args.insert(args.end(), testing::kWorkerSlots.begin(), testing::kWorkerSlots.end());
  Driver worker(args);
  EXPECT_TRUE(worker.read_until("redflow: worker: serving the driver at " + endpoint + " as tile ", 20)) << worker.seen;
  EXPECT_EQ(driver.wait(30), 0) << driver.seen;
  EXPECT_EQ(worker.wait(10), 0) << worker.seen;
}

TEST_F(NetCli, AConnectAddressWithoutItsSchemeGetsTheExpectedForm) {
  auto r = testing::run_cli("worker --connect 127.0.0.1:5555 --connect-timeout 1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--connect '127.0.0.1:5555': expected tcp://HOST:PORT (e.g. tcp://127.0.0.1:5555)"), std::string::npos) << r.output;
}

// The demo graph and its plain output, for the launch tests below.
struct Demo {
  std::string dir = testing::kDemo;  // not built here: GCC 12 reports a false -Warray-bounds in the inlined operator+
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
  const std::vector<std::string> extra = {"--listen", "tcp://127.0.0.1:*", "--min-workers", "1", "--wait", "20",
                                          "--key", (dir_ / "driver.key").string(), "--authorized-keys", (dir_ / "workers.txt").string(),
                                          "--address-file", addr.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  Driver driver(args);
  ASSERT_TRUE(driver.read_until("published in", 20)) << driver.seen;
  // The stranger's key is not listed: the driver never welcomes it, and says so.
  auto stranger = testing::run_cli("worker --address-file " + addr.string() + " --key " + (dir_ / "stranger.key").string() +
                                   " --slots 8 --slot-bytes 65536 --connect-timeout 2");
  EXPECT_EQ(stranger.exit_code, 1) << stranger.output;
  EXPECT_NE(stranger.output.find("authorized-keys"), std::string::npos) << stranger.output;
  EXPECT_TRUE(driver.read_until("refused a CURVE peer", 5)) << driver.seen;
  // A plain-text worker is refused too.
  auto plain_worker = testing::run_cli("worker --address-file " + addr.string() + " --slots 8 --slot-bytes 65536 --connect-timeout 2");
  EXPECT_EQ(plain_worker.exit_code, 1) << plain_worker.output;
  EXPECT_NE(plain_worker.output.find("needs its own key pair"), std::string::npos) << plain_worker.output;
  // Given the endpoint alone, it is told why no WELCOME came: the driver requires keys and it has none.
  const std::size_t at = driver.seen.find("listening on ") + 13;
  const std::string endpoint = driver.seen.substr(at, driver.seen.find(" (published", at) - at);
  plain_worker = testing::run_cli("worker --connect " + endpoint + " --slots 8 --slot-bytes 65536 --connect-timeout 2");
  EXPECT_EQ(plain_worker.exit_code, 1) << plain_worker.output;
  EXPECT_NE(plain_worker.output.find("it requires keys and this worker has none; give this worker --key FILE"), std::string::npos)
      << plain_worker.output;
  auto listed = testing::run_cli("worker --address-file " + addr.string() + " --key " + (dir_ / "listed.key").string() + " --slots 8 --slot-bytes 65536");
  EXPECT_EQ(listed.exit_code, 0) << listed.output;
  ASSERT_EQ(driver.wait(20), 0) << driver.seen;
  EXPECT_EQ(slurp(keyed), slurp(plain));
  EXPECT_FALSE(fs::exists(addr)) << "the driver removes its address file";
}

// With keys, the line the driver prints to paste names what a worker needs
// besides the address: its own key (WORKER.key, the user's to put in) and
// the driver's public key. Pasted with a listed worker's key, it serves.
TEST_F(NetCli, AKeyedDriversLineToPasteNamesTheKeysAndServesAsPasted) {
  const Demo demo;
  const fs::path out = dir_ / "y.bin";
  for (const char* who : {"driver", "listed"})
    ASSERT_EQ(testing::run_cli("keygen --out " + (dir_ / who).string()).exit_code, 0) << who;
  fs::copy_file(dir_ / "listed.pub", dir_ / "workers.txt");
  std::vector<std::string> args = {REDFLOW_CLI, "run"};
  std::istringstream split(demo.run_args(out));
  for (std::string a; split >> a;) args.push_back(a);
  const std::vector<std::string> extra = {"--listen", "tcp://127.0.0.1:*", "--min-workers", "1", "--wait", "20",
                                          "--key", (dir_ / "driver.key").string(), "--authorized-keys", (dir_ / "workers.txt").string()};
  args.insert(args.end(), extra.begin(), extra.end());
  Driver driver(args);
  const std::string endpoint = printed_endpoint(driver);
  ASSERT_FALSE(endpoint.empty()) << driver.seen;
  const std::string hint = "redflow worker --connect ";
  const std::size_t at = driver.seen.find(hint) + 8;
  std::string line = driver.seen.substr(at, driver.seen.find('\n', at) - at);
  EXPECT_EQ(line, "worker --connect " + endpoint + " --key WORKER.key --server-key " + (dir_ / "driver.pub").string()) << driver.seen;
  line.replace(line.find("WORKER.key"), 10, (dir_ / "listed.key").string());
  auto pasted = testing::run_cli(line + " --slots 8 --slot-bytes 65536");
  EXPECT_EQ(pasted.exit_code, 0) << line << "\n" << pasted.output;
  EXPECT_EQ(driver.wait(20), 0) << driver.seen;
}

TEST_F(NetCli, ListeningBeyondLoopbackWithoutKeysIsRefused) {
  const Demo demo;
  auto r = testing::run_cli("run " + demo.run_args(dir_ / "y.bin") + " --listen tcp://0.0.0.0:0 --min-workers 1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
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
    for (const std::string& a : {std::string("--address-file"), addr, std::string("--min-workers"), std::string("2")}) args.push_back(a);
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

// The demo's `redflow run` waiting for one worker at a printed endpoint.
std::vector<std::string> listening_demo(const fs::path& out) {
  const Demo demo;
  std::vector<std::string> args = {REDFLOW_CLI, "run"};
  std::istringstream split(demo.run_args(out));
  for (std::string a; split >> a;) args.push_back(a);
  for (const char* a : {"--listen", "tcp://127.0.0.1:*", "--min-workers", "1", "--wait", "30"}) args.push_back(a);
  return args;
}

TEST_F(NetCli, TheDriverLogsWhyItRefusedAWorkerAndTheWorkerSaysWhatItLacked) {
  Driver driver(listening_demo(dir_ / "y.bin"));
  const std::string endpoint = printed_endpoint(driver);
  ASSERT_FALSE(endpoint.empty()) << driver.seen;
  // Too few slots: the worker is told, and the driver's log says it too.
  auto small = testing::run_cli("worker --connect " + endpoint + " --name small --slots 4 --slot-bytes 65536 --connect-timeout 10");
  EXPECT_EQ(small.exit_code, 1) << small.output;
  EXPECT_NE(small.output.find("refused this worker: worker has 4 slots of 65536 bytes; the driver plans with 8 slots of 65536 bytes"),
            std::string::npos) << small.output;
  EXPECT_TRUE(driver.read_until("tile server: refused worker 'small' (", 5)) << driver.seen;
  EXPECT_TRUE(driver.read_until("): worker has 4 slots of 65536 bytes; the driver plans with 8 slots", 5)) << driver.seen;
  // Another tile protocol version: a HELLO of the test's own.
  zmq::context_t context;
  zmq::socket_t other(context, zmq::socket_type::dealer);
  net::HelloMessage hello = testing::fake_tile_hello("other-version");
  ++hello.roles[0].version;
  testing::connect_and_say_hello(other, endpoint, hello);
  std::string reason;
  for (int i = 0; i < 1000 && reason.empty(); ++i) {
    zmq::pollitem_t item{other.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(10));
    std::vector<zmq::message_t> parts;
    net::Envelope e;
    wire::Error error;
    net::RefusedMessage refused;
    while (net::receive_message(other, parts))
      if (net::decode_envelope(net::part_spans(parts), e, error).ok() && e.kind == net::EnvelopeKind::kRefused && net::decode(e.body, refused).ok())
        reason = refused.reason;
  }
  EXPECT_NE(reason.find("it speaks tile protocol version " + std::to_string(hello.roles[0].version)), std::string::npos) << reason;
  EXPECT_TRUE(driver.read_until("tile server: refused worker 'other-version' (test pid ", 5)) << driver.seen;
  EXPECT_TRUE(driver.read_until("): it speaks tile protocol version", 5)) << driver.seen;
  // A worker that fits is welcomed, and the run ends.
  auto fits = testing::run_cli("worker --connect " + endpoint + " --slots 8 --slot-bytes 65536");
  EXPECT_EQ(fits.exit_code, 0) << fits.output;
  EXPECT_EQ(driver.wait(20), 0) << driver.seen;
}

TEST_F(NetCli, AWorkerWithoutTheGraphsPluginIsToldWhichFunctionItLacks) {
  std::ofstream(dir_ / "neg.dot") << R"(digraph g { X [kind=input, bytes=8]; Y [kind=output, bytes=8]; n [actor="test.negate"]; X -> n [port=0]; n -> Y; })";
  std::ofstream(dir_ / "x.bin", std::ios::binary) << std::string(8, '\1');
  Driver driver({REDFLOW_CLI, "run", (dir_ / "neg.dot").string(), "--input", "X=" + (dir_ / "x.bin").string(), "--lib", REDFLOW_TEST_PLUGIN,
                 "--listen", "tcp://127.0.0.1:*", "--min-workers", "1", "--slots", "8", "--slot-bytes", "65536"});
  const std::string endpoint = printed_endpoint(driver);
  ASSERT_FALSE(endpoint.empty()) << driver.seen;
  // The line the driver printed to paste names its plugin.
  EXPECT_NE(driver.seen.find("redflow worker --connect " + endpoint + " --lib " + REDFLOW_TEST_PLUGIN), std::string::npos) << driver.seen;
  auto bare = testing::run_cli("worker --connect " + endpoint + " --name bare --slots 8 --slot-bytes 65536");
  EXPECT_EQ(bare.exit_code, 1) << bare.output;
  EXPECT_NE(bare.output.find("refused this worker: it lacks actor function 'test.negate', which actor 'n' of graph 'g' needs "
                             "(start it with the same --lib plugins as the driver)"),
            std::string::npos) << bare.output;
  EXPECT_EQ(driver.wait(20), 1) << driver.seen;
  EXPECT_NE(driver.seen.find("tile server: refused worker 'bare' ("), std::string::npos) << driver.seen;
  EXPECT_NE(driver.seen.find("which worker 'bare' (tile 0, host "), std::string::npos) << driver.seen;
}

TEST_F(NetCli, AFloodOfMalformedMessagesFromOnePeerIsLoggedInABoundedNumberOfLines) {
  Driver driver(listening_demo(dir_ / "y.bin"));
  const std::string endpoint = printed_endpoint(driver);
  ASSERT_FALSE(endpoint.empty()) << driver.seen;
  zmq::context_t context;
  zmq::socket_t flood(context, zmq::socket_type::dealer);
  flood.set(zmq::sockopt::linger, 2000);
  flood.connect(endpoint);
  constexpr int kSent = 2500;
  for (int i = 0; i < kSent; ++i) flood.send(zmq::str_buffer("not an envelope"), zmq::send_flags::none);
  ASSERT_TRUE(driver.read_until("(2000 times)", 20)) << driver.seen;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the last 500 arrive
  auto worker = testing::run_cli("worker --connect " + endpoint + " --slots 8 --slot-bytes 65536");
  EXPECT_EQ(worker.exit_code, 0) << worker.output;
  ASSERT_EQ(driver.wait(20), 0) << driver.seen;
  // The 1st, 10th, 100th, 1000th and 2000th, then the total as the driver ends.
  EXPECT_EQ(occurrences(driver.seen, "tile server: refused a message from unknown peer at 127.0.0.1: "), 5u) << driver.seen;
  EXPECT_NE(driver.seen.find("tile server: refused 2500 message(s) from unknown peer at 127.0.0.1 in all"), std::string::npos) << driver.seen;
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
