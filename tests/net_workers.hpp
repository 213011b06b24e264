// Real worker processes for the remote-tile tests: `redflow worker --connect`
// started by the test with fork/exec, their PIDs tracked, and every one still
// running killed (SIGKILL) and reaped when the fixture goes, even after a
// failed assertion. Plus a graph of built-in actors only, which the workers'
// registries have too.
#pragma once

#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "redflow/redflow.hpp"
#include "spawn_process.hpp"
#include "test_graphs.hpp"
#include "watchdog.hpp"

namespace redflow::testing {

class WorkerProcesses {
 public:
  WorkerProcesses() = default;
  WorkerProcesses(const WorkerProcesses&) = delete;
  WorkerProcesses& operator=(const WorkerProcesses&) = delete;
  ~WorkerProcesses() { end_all(); }

  // Kills and reaps every process still running: after this none of them
  // touches the files a test is about to remove.
  void end_all() {
    for (pid_t p : pids_) {
      ::kill(p, SIGKILL);
      ::waitpid(p, nullptr, 0);
    }
    pids_.clear();
  }

  // Starts `redflow worker --connect endpoint` with `extra` flags; returns its PID.
  pid_t spawn(const std::string& endpoint, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"worker", "--connect", endpoint, "--connect-timeout", "20"};
    args.insert(args.end(), extra.begin(), extra.end());
    return spawn_cli(std::move(args));
  }
  // Starts `redflow ARGS...` (quiet unless set_quiet(false)); returns its
  // PID. `options` may send its stdout and stderr to a file.
  pid_t spawn_cli(std::vector<std::string> args, SpawnOptions options = {}) {
    args.insert(args.begin(), REDFLOW_CLI);
    if (quiet_) args.insert(args.begin() + 1, {"--log-level", "error"});
    const pid_t pid = spawn_process(std::move(args), options);
    if (pid > 0) pids_.push_back(pid);
    return pid;
  }
  // The same, its stderr going to the file `err_path` (what it says when refused).
  pid_t spawn_cli(std::vector<std::string> args, const std::string& err_path) {
    SpawnOptions options;
    options.err_fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const pid_t pid = spawn_cli(std::move(args), options);
    if (options.err_fd >= 0) ::close(options.err_fd);
    return pid;
  }
  // As spawn(), its stderr in `err_path`.
  pid_t spawn_logged(const std::string& err_path, const std::string& endpoint, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"worker", "--connect", endpoint, "--connect-timeout", "20"};
    args.insert(args.end(), extra.begin(), extra.end());
    return spawn_cli(std::move(args), err_path);
  }
  void spawn_n(unsigned n, const std::string& endpoint, const std::vector<std::string>& extra = {}) {
    for (unsigned i = 0; i < n; ++i) spawn(endpoint, extra);
  }

  void kill9(pid_t pid) { ::kill(pid, SIGKILL); }

  // The exit code of `pid` once it ended within `timeout_s`; -1 if it did not
  // (it is then killed), -2 if a signal ended it.
  int wait_exit(pid_t pid, double timeout_s) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    for (;;) {
      int status = 0;
      const pid_t got = ::waitpid(pid, &status, WNOHANG);
      if (got == pid) {
        std::erase(pids_, pid);
        return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
      }
      if (std::chrono::steady_clock::now() > deadline) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  const std::vector<pid_t>& pids() const { return pids_; }
  void set_quiet(bool q) { quiet_ = q; }

 private:
  std::vector<pid_t> pids_;
  bool quiet_ = true;
};

// The whole of a text file ("" when it cannot be read).
inline std::string file_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Whether the text file at `path` comes to contain `needle` within `seconds`
// (a process's log line: the event a test waits for).
inline bool file_shows(const std::string& path, const std::string& needle, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    if (file_text(path).find(needle) != std::string::npos) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

inline constexpr std::size_t kNetElems = 256;
inline constexpr std::size_t kNetBytes = kNetElems * 4;

// A random DAG of i32.add and i32.mul (built-ins: a worker has them too)
// on values of `bytes` (a multiple of 4); nodes nobody reads become outputs.
inline Graph random_builtin_dag(int actors, std::uint32_t seed, std::size_t bytes = kNetBytes) {
  Graph g("net_random");
  std::mt19937 rng(seed);
  std::vector<std::byte> k(bytes);
  for (auto& b : k) b = static_cast<std::byte>(rng());
  std::vector<DataId> pool{g.input("X0", bytes), g.input("X1", bytes), g.constant("K", k)};
  for (int a = 0; a < actors; ++a) {
    std::vector<DataId> ins;
    for (int i = 0; i < 2; ++i) {
      const std::size_t lo = pool.size() > 6 ? pool.size() - 6 : 0;
      ins.push_back(pool[lo + rng() % (pool.size() - lo)]);
    }
    const DataId out = g.inner("d" + std::to_string(a), bytes);
    g.actor("a" + std::to_string(a), a % 3 == 1 ? "i32.mul" : "i32.add", ins, out);
    pool.push_back(out);
  }
  for (DataId d = 0; d < g.data().size(); ++d)
    if (g.data(d).kind == DataKind::kInner && g.data(d).consumers.empty()) g.mutable_data(d).kind = DataKind::kOutput;
  return g;
}

inline std::vector<std::byte> seeded_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> v(n);
  for (auto& b : v) b = static_cast<std::byte>(rng());
  return v;
}

// Three local tiles under 3x-same with a bit flipped in one actor output in
// five: a run whose fault counts (injected, detected, re-executed) are not all 0.
inline RuntimeOptions three_tiles_flipping() {
  RuntimeOptions o;
  o.tiles = 3;
  o.redundancy = Redundancy::kTripleSame;
  o.faults.bitflip_probability = 0.2;
  return o;
}

// `n` independent pairs: test.sleep `ms` on K_c then add X0, each K_c its
// own constant (seeded `seed` + c), so a result booked for the wrong actor
// shows in the outputs. Needs the test plugin (registry_with_test_plugin).
inline Graph sleep_then_add(const std::string& name, int n, int ms, std::uint32_t seed) {
  Graph g(name);
  const DataId x0 = g.input("X0", kNetBytes);
  for (int c = 0; c < n; ++c) {
    const std::string i = std::to_string(c);
    const DataId k = g.constant("K" + i, seeded_bytes(kNetBytes, seed + static_cast<std::uint32_t>(c)));
    const DataId slept = g.inner("s" + i, kNetBytes);
    g.actor("sleep" + i, "test.sleep", {k}, slept).args("ms=" + std::to_string(ms)).work(ms * 1e6);  // HEFT: ms at 1e9 ops/s
    g.actor("add" + i, "i32.add", {slept, x0}, g.output("y" + i, kNetBytes));
  }
  return g;
}

// What a graph of built-ins means: the outputs the remote runs must equal,
// from the tests' own sequential interpreter (run_sequential, one actor
// after another in topological order), not from the engine under test.
inline Outputs local_reference(const Graph& g, const Inputs& inputs) { return run_sequential(g, Registry::with_builtins(), inputs); }

// The built-ins and the test plugin (test.sleep, ...), as a worker started
// with --lib REDFLOW_TEST_PLUGIN has them.
inline Registry registry_with_test_plugin() {
  Registry reg = Registry::with_builtins();
  EXPECT_TRUE(reg.load_plugin(REDFLOW_TEST_PLUGIN).ok());
  return reg;
}

// What `g` (which may use the test plugin's actors) means, from the sequential interpreter.
inline Outputs plugin_reference(const Graph& g, const Inputs& inputs) { return run_sequential(g, registry_with_test_plugin(), inputs); }

// Driver options for `remote` worker processes plus `local` local tiles on
// loopback, a free port, slots the workers below match.
inline RuntimeOptions remote_options(unsigned local, unsigned remote, Scheduler scheduler, double heartbeat_timeout_s = 2) {
  RuntimeOptions o;
  o.tiles = local + remote;
  o.slots = 8;
  o.slot_bytes = 64 << 10;
  o.scheduler = scheduler;
  o.cluster.listen = "tcp://127.0.0.1:*";
  o.cluster.min_workers = remote;
  o.cluster.wait_s = 20;
  o.cluster.heartbeat_timeout_s = heartbeat_timeout_s;
  return o;
}
inline const std::vector<std::string> kWorkerSlots = {"--slots", "8", "--slot-bytes", "65536"};

// Whether the trace has a mark `what` ("tile-joined", "speculative-copy", ...).
inline bool has_mark(const ExecutionTrace& trace, const std::string& what) {
  for (const TracedMark& m : trace.marks)
    if (m.what == what) return true;
  return false;
}

// The trace says what moved: the bytes it shows going from one worker's
// slot into another's are, tile by tile, the bytes that tile fetched from
// its peers (TileStats::peer_bytes_in), so no worker-to-worker transfer went
// through the driver, and a fetch that found nothing is no transfer.
inline void expect_trace_shows_what_peers_fetched(const ExecutionTrace& trace, const ExecutionStats& stats) {
  std::vector<std::uint64_t> traced(stats.tiles.size());
  for (const TracedTransfer& t : trace.transfers)
    if (t.from_tile >= 0 && t.to_tile >= 0) {
      ASSERT_LT(static_cast<std::size_t>(t.to_tile), traced.size()) << t.data;
      traced[t.to_tile] += t.bytes;
    }
  for (std::size_t i = 0; i < traced.size(); ++i)
    EXPECT_EQ(traced[i], stats.tiles[i].peer_bytes_in) << "tile " << i << " (" << stats.tiles[i].worker << "): the trace and the bytes fetched from peers differ";
}

// Loads `g` on a driver of two remote tiles, one a real worker process and
// the other `Fake`, a test's own worker (a thread speaking the protocol:
// fake.start(endpoint) once the driver listens, fake.join() after), and
// calls body(loaded, fake) under each scheduler within `limit_s` seconds.
template <typename Fake, typename Body>
void each_scheduler_beside_a_fake_worker(const Graph& g, int limit_s, const std::string& what, Body body) {
  for (Scheduler scheduler : {Scheduler::kSteal, Scheduler::kHeft}) {
    SCOPED_TRACE(to_string(scheduler));
    WorkerProcesses workers;
    Fake fake;
    RuntimeOptions o = remote_options(0, 2, scheduler);
    o.cluster.on_listening = [&](const std::string& endpoint) {
      fake.start(endpoint);
      workers.spawn(endpoint, kWorkerSlots);
    };
    within_seconds(limit_s, what, [&] {
      Runtime rt(o);
      auto loaded = rt.load(g, Registry::with_builtins());
      ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
      body(*loaded, fake);
    });
    fake.join();
  }
}

}  // namespace redflow::testing
